import { AppError } from '@parametric/http';
import { formatMinor } from '@parametric/money';
import type { TenantScope } from '@parametric/mongo';
import type { PolicyLookup } from '@parametric/policy-client';
import { outboxJob, payoutRetryJobId } from '@parametric/queue';
import type { PayoutAttemptDoc, PayoutDoc } from './model';
import type { PayoutLedger, PayoutStore } from './store';
import { type FailureReason, kesOf, transition } from './transitions';

const maskedPhone = (phone: string) => `${phone.slice(0, 5)}•••••${phone.slice(-3)}`;
const iso = (d: Date | null | undefined) => (d ? d.toISOString() : null);

/** The partner's view of a payout (docs/payments.md, "Payouts"). */
export function payoutView(p: PayoutDoc) {
  const due = p.parts.map((part) => part.nextAttemptAt).find((d) => d != null);
  return {
    payoutId: p._id,
    policyId: p.policyId,
    determinationId: p.determinationId,
    status: p.status,
    amountKES: kesOf(p.amountMinor, p.exponent),
    owedKES: kesOf(p.owedMinor, p.exponent),
    currency: 'KES' as const,
    amountUSDC: p.amountUSDC,
    quoteId: p.quoteId,
    phoneNumber: maskedPhone(p.phone),
    attempts: p.parts.reduce((n, part) => n + part.attempts, 0),
    mobileMoneyRef: p.mobileMoneyRef ?? null,
    reason: (p.reason ?? null) as FailureReason | null,
    lastResultCode: [...p.parts].reverse().find((part) => part.lastResultCode)?.lastResultCode ?? null,
    nextAttemptAt: iso(due),
    parts: p.parts.map((part) => ({
      part: part.index,
      amountKES: kesOf(part.amountMinor, p.exponent),
      status: part.status,
      attempts: part.attempts,
      mobileMoneyRef: part.receipt ?? null,
      reason: (part.reason ?? null) as FailureReason | null,
      completedAt: iso(part.completedAt),
    })),
    createdAt: p.createdAt.toISOString(),
    updatedAt: p.updatedAt.toISOString(),
    completedAt: iso(p.completedAt),
  };
}

export const opsPayoutView = (p: PayoutDoc) => ({ ...payoutView(p), organizationId: p.organizationId });

export function attemptView(row: PayoutAttemptDoc, exponent: number) {
  return {
    at: row.at.toISOString(),
    part: row.part,
    attempt: row.attempt,
    kind: row.kind,
    originatorConversationId: row.originatorConversationId,
    amountKES: row.amountMinor == null ? null : formatMinor(BigInt(row.amountMinor), exponent),
    conversationId: row.conversationId ?? null,
    resultCode: row.resultCode ?? null,
    resultDescription: row.resultDesc ?? null,
    receipt: row.receipt ?? null,
  };
}

/** One organization's payouts, as its repositories hold them (`forOrganization`). */
export interface TenantPayouts {
  payouts: TenantScope<PayoutDoc>;
  /** The same payouts, as the state machine reads and writes them. */
  payoutStore: PayoutStore;
  payoutLedger: Pick<PayoutLedger, 'history'>;
}

export async function listPayouts(
  tenant: Pick<TenantPayouts, 'payouts'>,
  query: { page: number; limit: number; status?: PayoutDoc['status'] },
) {
  const { page, limit, ...filters } = query;
  const { items, total } = await tenant.payouts.listPage(filters, { page, limit });
  return { items: items.map(payoutView), total };
}

/** One of the organization's payouts with every attempt the ledger holds (another's is `404`). */
export async function readPayout(tenant: Pick<TenantPayouts, 'payoutStore' | 'payoutLedger'>, id: string) {
  const p = await tenant.payoutStore.get(id);
  if (!p) throw AppError.notFound('Payout');
  const rows = await tenant.payoutLedger.history(p._id);
  return { ...payoutView(p), attemptHistory: rows.map((row) => attemptView(row, p.exponent)) };
}

const TIER_NOT_ENTITLED_MESSAGE =
  'This policy is settled by the partner (Tier 1, DETERMINATION): the service pays out nothing for it';

/**
 * A FAILED payout goes back to PENDING: its failed part gets a fresh attempt budget and is sent
 * again only once Transaction Status says its last attempt paid nothing; parts already paid are
 * never sent again. A payout that failed before anything was sent cannot be retried: nothing
 * about it would change.
 */
export async function retryPayout(
  tenant: Pick<TenantPayouts, 'payoutStore'>,
  id: string,
  deps: { findPolicy: PolicyLookup; maxAttempts: number; now: Date },
) {
  const store = tenant.payoutStore;
  const p = await store.get(id);
  if (!p) throw AppError.notFound('Payout');
  const policy = await deps.findPolicy({ policyId: p.policyId });
  if (policy?.settlementMode !== 'DETERMINATION_AND_SETTLEMENT')
    throw new AppError('TIER_NOT_ENTITLED', TIER_NOT_ENTITLED_MESSAGE);
  if (p.status !== 'FAILED')
    throw AppError.conflict(`The payout is ${p.status}: only a FAILED payout is retried`);
  if (p.parts.length === 0) {
    throw AppError.conflict(
      `The payout failed before anything could be sent (${p.reason}): a retry cannot change that`,
    );
  }
  const retried = await transition(
    store,
    id,
    (q) => {
      const failed = q.parts.find((part) => part.status === 'FAILED');
      if (q.status !== 'FAILED' || !failed) return null;
      return {
        parts: {
          [failed.index]: {
            status: 'PENDING',
            phase: 'RETRY_WAIT',
            attemptLimit: failed.attempts + deps.maxAttempts,
            nextAttemptAt: null,
            statusQuery: null,
            sendFailures: 0,
            reason: null,
          },
        },
        set: { reason: null },
        jobs: [
          outboxJob(
            'payout-attempts',
            { payoutId: q._id, part: failed.index },
            payoutRetryJobId(q._id, q.revision + 1),
          ),
        ],
      };
    },
    deps.now,
  );
  if (!retried) throw AppError.conflict('The payout is no longer FAILED');
  return payoutView(retried);
}
