import { randomUUID } from 'node:crypto';
import type { DeterminationLookup, OpsDetermination } from '@parametric/determinations-client';
import { AppError } from '@parametric/http';
import { allocateEvenly, roundToUnit } from '@parametric/money';
import type { FarmerLookup, PolicyLookup } from '@parametric/policy-client';
import type { Clock } from '../clock';
import type { PayoutState } from '../metrics';
import { type Environment, requireSandboxTestNumber } from '../sandbox';
import type { PartDoc, PayoutDoc } from './model';
import type { NewPayout, PayoutStore } from './store';
import { attemptJob, initialOutbox, originatorConversationIdOf, payoutStatusOf } from './transitions';

/** What M-Pesa B2C moves per transaction, in whole shillings (Daraja: KES 10 to 250,000). */
export interface ProviderLimits {
  minAmount: number;
  maxAmount: number;
}

/**
 * A stored KES→USDC quote of `amountKes` whole shillings for the organization (`createQuote`);
 * no current or plausible rate is `502 PAYMENT_ERROR`.
 */
export type QuotePayout = (
  organizationId: string,
  amountKes: number,
) => Promise<{ quoteId: string; convertedAmount: string }>;

export interface OriginateDeps {
  store: PayoutStore;
  quote: QuotePayout;
  findDetermination: DeterminationLookup;
  findPolicy: PolicyLookup;
  findFarmer: FarmerLookup;
  maxAttempts: number;
  limits: ProviderLimits;
  /** Whether sandbox organizations' payouts have a Daraja (config.ts `sandboxDaraja`). */
  sandboxDaraja: boolean;
  now: Clock;
  /** Counts `payouts_total{state}` for a payout created (and one created FAILED). */
  onPayout?: (state: PayoutState) => void;
}

/** Payouts are paid by M-Pesa, in KES: the one currency with a provider that pays out. */
const PAYOUT_CURRENCY = 'KES';

const TIER_NOT_ENTITLED_MESSAGE =
  'This determination’s policy is settled by the partner (Tier 1, DETERMINATION): the service pays out nothing for it';

/**
 * The determination a payout may be made for, or the reason none may: everything the payout
 * is (policy, organization, currency, amount) comes from here, never from a caller.
 */
function payable(d: OpsDetermination | null) {
  if (!d) throw AppError.notFound('Determination');
  const refuse = (message: string) =>
    AppError.invalid(message, [{ field: 'determinationId', message: message.toLowerCase() }]);
  if (d.status !== 'ISSUED' || !d.organizationId || !d.policyId) {
    throw refuse('The determination is not attributed to a policy: nothing is owed');
  }
  if (d.settlementMode !== 'DETERMINATION_AND_SETTLEMENT')
    throw new AppError('TIER_NOT_ENTITLED', TIER_NOT_ENTITLED_MESSAGE);
  if (!d.triggered) throw refuse('The determination is not triggered: nothing is owed');
  if (!d.owed || BigInt(d.owed.amountMinor) <= 0n) throw refuse('The determination owes nothing');
  if (d.owed.currency !== PAYOUT_CURRENCY) {
    throw refuse(`The determination is owed in ${d.owed.currency}: payouts are paid by M-Pesa in KES only`);
  }
  return {
    determinationId: d.determinationId,
    organizationId: d.organizationId,
    policyId: d.policyId,
    owedMinor: BigInt(d.owed.amountMinor),
    exponent: d.owed.exponent,
  };
}

/**
 * Originates the payout a triggered Tier 2 determination makes owed: the `payout-originations`
 * worker, the origination sweep and the ops door alike, one payout per determination.
 *
 * The amount is the determination's amount owed (already capped by the policy's remaining
 * cover), rounded **up** to whole shillings (`roundToUnit`, CEILING: the farmer is never paid
 * less than owed). A KES→USDC quote is taken now and kept with it (no current or no plausible
 * rate: `502 PAYMENT_ERROR`, nothing written, the caller retries). Below M-Pesa's minimum, the
 * payout is stored FAILED (`BELOW_PROVIDER_MINIMUM`) with its `payout.failed`: nothing is sent.
 * Above its maximum, it is paid in as few, as equal parts as fit (`allocateEvenly`), one after
 * another. Determinations, policies and farmers that cannot be read are `503`: retried.
 */
export async function originatePayout(
  determinationId: string,
  deps: OriginateDeps,
): Promise<{ created: boolean; payout: PayoutDoc }> {
  const existing = await deps.store.byDetermination(determinationId);
  if (existing) return { created: false, payout: existing };
  const owed = payable(await deps.findDetermination(determinationId));
  const policy = await deps.findPolicy({ policyId: owed.policyId });
  // The determinations service attributed it to this policy: one the policy service does not know
  // (or another organization's) is an inconsistency for ops, never a reason to pay elsewhere.
  if (!policy || policy.organizationId !== owed.organizationId) {
    throw new Error(
      `determination ${determinationId}: its policy ${owed.policyId} is not the policy service's`,
    );
  }
  if (policy.settlementMode !== 'DETERMINATION_AND_SETTLEMENT') {
    throw new AppError('TIER_NOT_ENTITLED', TIER_NOT_ENTITLED_MESSAGE);
  }
  const farmer = await deps.findFarmer(policy.farmerId);
  if (!farmer || farmer.organizationId !== policy.organizationId) {
    throw new Error(
      `determination ${determinationId}: the farmer of policy ${policy.id} is not the policy service's`,
    );
  }

  // A sandbox policy's payout goes only to a simulator test number, through the sandbox Daraja:
  // refused before anything is written, as a sandbox premium is (docs/decisions.md).
  const environment: Environment = policy.environment === 'sandbox' ? 'sandbox' : 'live';
  if (environment === 'sandbox' && !deps.sandboxDaraja) {
    throw new AppError(
      'TIER_NOT_ENTITLED',
      'This platform pays out nothing for sandbox organizations (it has no sandbox M-Pesa configuration)',
    );
  }
  requireSandboxTestNumber(environment, farmer.phoneNumber, 'phoneNumber');

  const unit = 10n ** BigInt(owed.exponent);
  const paid = roundToUnit(owed.owedMinor, unit, 'CEILING');
  const quote = await deps.quote(owed.organizationId, Number(paid / unit));
  const now = deps.now();
  const payoutId = randomUUID();
  const belowMinimum = paid < BigInt(deps.limits.minAmount) * unit;
  const parts = belowMinimum ? [] : partsOf(payoutId, paid, unit, deps);
  const payout: NewPayout = {
    _id: payoutId,
    organizationId: owed.organizationId,
    policyId: owed.policyId,
    determinationId,
    amountMinor: paid.toString(),
    owedMinor: owed.owedMinor.toString(),
    currency: PAYOUT_CURRENCY,
    exponent: owed.exponent,
    amountUSDC: quote.convertedAmount,
    quoteId: quote.quoteId,
    phone: farmer.phoneNumber,
    ...(environment === 'sandbox' ? { environment } : {}),
    status: belowMinimum ? 'FAILED' : 'PENDING',
    parts,
    mobileMoneyRef: null,
    reason: belowMinimum ? 'BELOW_PROVIDER_MINIMUM' : null,
    completedAt: null,
    revision: 1,
    seq: 0,
  };
  payout.status = payoutStatusOf(payout);
  const stamped = { ...payout, createdAt: now, updatedAt: now } as PayoutDoc;
  const firstJob = parts.length > 0 ? [attemptJob(payoutId, 1, 1)] : [];
  const created = await deps.store.insert(payout, initialOutbox(stamped, now, firstJob));
  if (!created) {
    const raced = await deps.store.byDetermination(determinationId);
    if (!raced)
      throw new Error(`payout of determination ${determinationId} vanished after a duplicate insert`);
    return { created: false, payout: raced };
  }
  deps.onPayout?.('originated');
  if (created.status === 'FAILED') deps.onPayout?.('failed');
  return { created: true, payout: created };
}

/** The parts of `paid`: one unless it is above the provider's maximum; the first one starts now. */
function partsOf(payoutId: string, paid: bigint, unit: bigint, deps: OriginateDeps): PartDoc[] {
  const max = BigInt(deps.limits.maxAmount) * unit;
  const count = Number((paid + max - 1n) / max);
  return allocateEvenly(paid, count, unit).map((amount, i) => {
    const index = i + 1;
    const first = index === 1;
    const ocid = first ? originatorConversationIdOf(payoutId, 1, 1) : null;
    return {
      index,
      amountMinor: amount.toString(),
      status: 'PENDING',
      phase: first ? 'SENDING' : 'WAITING',
      attempts: first ? 1 : 0,
      attemptLimit: deps.maxAttempts,
      originatorConversationId: ocid,
      originatorConversationIds: ocid ? [ocid] : [],
      nextAttemptAt: null,
      acceptedAt: null,
      sendFailures: 0,
      lastResultCode: null,
      lastResultDesc: null,
      statusQuery: null,
      receipt: null,
      reason: null,
      completedAt: null,
    } satisfies PartDoc;
  });
}
