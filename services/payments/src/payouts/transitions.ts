import type { PAYOUT_FAILURE_REASONS } from '@parametric/contracts';
import { createEvent, type EventEnvelope } from '@parametric/events';
import { formatMinor } from '@parametric/money';
import { type JobOutboxEntry, outboxJob, payoutAttemptJobId, policySummaryJobId } from '@parametric/queue';
import type { PartDoc, PayoutDoc } from './model';
import type { PayoutStore } from './store';

export type FailureReason = (typeof PAYOUT_FAILURE_REASONS)[number];
export type PayoutStatus = PayoutDoc['status'];

/**
 * Attempt n of a part's OriginatorConversationID. Daraja refuses a reused one, so each attempt
 * has its own; the first attempt of the first part is the payout id itself.
 */
export function originatorConversationIdOf(payoutId: string, part: number, attempt: number): string {
  if (part === 1) return attempt === 1 ? payoutId : `${payoutId}-${attempt}`;
  return `${payoutId}-p${part}-${attempt}`;
}

export const attemptJob = (payoutId: string, part: number, attempt: number) =>
  outboxJob('payout-attempts', { payoutId, part }, payoutAttemptJobId(payoutId, part, attempt));

export const kesOf = (amountMinor: string, exponent: number) => formatMinor(BigInt(amountMinor), exponent);

/**
 * The payout's status, from its parts (parts are paid one after another): COMPLETED once every
 * part is; FAILED once a part failed (the parts after it were never sent); PROCESSING while money
 * is moving (a part accepted by M-Pesa, or paid with more to come); PENDING before that. A payout
 * with no parts was decided before anything could be sent and keeps its stored status.
 */
export function payoutStatusOf(p: Pick<PayoutDoc, 'parts' | 'status'>): PayoutStatus {
  const { parts } = p;
  if (parts.length === 0) return p.status;
  if (parts.every((part) => part.status === 'COMPLETED')) return 'COMPLETED';
  if (parts.some((part) => part.status === 'FAILED')) return 'FAILED';
  if (parts.some((part) => part.status === 'PROCESSING' || part.status === 'COMPLETED')) return 'PROCESSING';
  return 'PENDING';
}

/** Every part's receipt, in part order: what `payout.completed`'s `mobileMoneyRef` names. */
export const receiptsOf = (parts: readonly PartDoc[]) => parts.map((part) => part.receipt).join(',');

function summaryJob(p: PayoutDoc, now: Date): JobOutboxEntry {
  return outboxJob(
    'policy-summaries',
    {
      kind: 'PAYOUT',
      policyId: p.policyId,
      organizationId: p.organizationId,
      determinationId: p.determinationId,
      payoutId: p._id,
      revision: p.revision,
      status: p.status,
      amount: kesOf(p.amountMinor, p.exponent),
      currency: p.currency,
      mobileMoneyRef: p.mobileMoneyRef ?? null,
      reason: p.reason ?? null,
      updatedAt: now.toISOString(),
    },
    policySummaryJobId({ kind: 'PAYOUT', determinationId: p._id, revision: p.revision }),
  );
}

/** `payout.completed` / `payout.failed`, as the payout's status just became. */
function terminalEvent(p: PayoutDoc): EventEnvelope | null {
  if (p.status === 'COMPLETED') {
    return createEvent('payout.completed', p.organizationId, {
      payoutId: p._id,
      policyId: p.policyId,
      amountUSDC: p.amountUSDC,
      amountKES: kesOf(p.amountMinor, p.exponent),
      mobileMoneyRef: p.mobileMoneyRef as string,
    });
  }
  if (p.status === 'FAILED') {
    return createEvent('payout.failed', p.organizationId, {
      payoutId: p._id,
      policyId: p.policyId,
      amountUSDC: p.amountUSDC,
      reason: p.reason as string,
    });
  }
  return null;
}

/** What a transition changes: parts (by index) and the jobs it starts. */
export interface Step {
  parts: Record<number, Partial<PartDoc>>;
  jobs?: JobOutboxEntry[];
  /** Payout fields beyond the parts (a retry clears the reason). */
  set?: Partial<PayoutDoc>;
}

/** The payout after `step`, with every derived field (status, receipts, reason) recomputed. */
export function applyStep(p: PayoutDoc, step: Step, now: Date): PayoutDoc {
  const parts = p.parts.map((part) => ({ ...part, ...step.parts[part.index] }) as PartDoc);
  const next = { ...p, ...step.set, parts } as PayoutDoc;
  next.status = payoutStatusOf(next);
  if (next.status === 'COMPLETED') {
    next.mobileMoneyRef = receiptsOf(parts);
    next.completedAt = p.status === 'COMPLETED' ? p.completedAt : now;
    next.reason = null;
  } else if (next.status === 'FAILED') {
    next.reason = parts.find((part) => part.status === 'FAILED')?.reason ?? next.reason ?? 'PROVIDER_ERROR';
  }
  return next;
}

/** A change partners see: the payout's status, a part's status, receipt or reason. */
function visible(before: PayoutDoc, after: PayoutDoc): boolean {
  if (before.status !== after.status || before.reason !== after.reason) return true;
  return after.parts.some((part, i) => {
    const old = before.parts[i];
    return !old || old.status !== part.status || old.receipt !== part.receipt || old.reason !== part.reason;
  });
}

/**
 * Moves a payout by compare-and-set on `seq`: `decide` sees the stored payout and says what to
 * change (or null: nothing to do). A concurrent change makes the write miss; the payout is read
 * again and `decide` asked again. The events of a status change (`payout.completed`,
 * `payout.failed`), the policy summary of a visible change and the step's jobs go in the same
 * single-document update as the change.
 */
export async function transition(
  store: PayoutStore,
  payoutId: string,
  decide: (p: PayoutDoc) => Step | null,
  now: Date,
): Promise<PayoutDoc | null> {
  for (let tries = 0; tries < 10; tries++) {
    const p = await store.get(payoutId);
    if (!p) return null;
    const step = decide(p);
    if (!step) return null;
    const applied = applyStep(p, step, now);
    const shown = visible(p, applied);
    const next = { ...applied, revision: p.revision + (shown ? 1 : 0) };
    const event = next.status !== p.status ? terminalEvent(next) : null;
    const jobs = [...(step.jobs ?? []), ...(shown ? [summaryJob(next, now)] : [])];
    const set: Partial<PayoutDoc> = {
      ...step.set,
      parts: next.parts,
      status: next.status,
      mobileMoneyRef: next.mobileMoneyRef ?? null,
      completedAt: next.completedAt ?? null,
      reason: next.reason ?? null,
      revision: next.revision,
    };
    const written = await store.update(p._id, p.seq ?? 0, set, { events: event ? [event] : [], jobs });
    if (written) {
      store.changed?.(p, written);
      return written;
    }
  }
  throw new Error('payout: too many concurrent changes');
}

/** A new payout's first write: its summary and, when it is already decided, its event. */
export function initialOutbox(p: PayoutDoc, now: Date, jobs: JobOutboxEntry[]) {
  const event = terminalEvent(p);
  return { events: event ? [event] : [], jobs: [...jobs, summaryJob(p, now)] };
}

/** The part that is paid now: the first one not COMPLETED (parts are paid in order). */
export const currentPart = (p: PayoutDoc): PartDoc | undefined =>
  p.parts.find((part) => part.status !== 'COMPLETED');

export const partOf = (p: PayoutDoc, index: number): PartDoc | undefined =>
  p.parts.find((part) => part.index === index);

/** The part completes with `receipt`; the next one, if any, starts with its first attempt. */
export function completedStep(p: PayoutDoc, part: PartDoc, receipt: string, now: Date): Step | null {
  if (part.status === 'COMPLETED') return null;
  const parts: Step['parts'] = {
    [part.index]: {
      status: 'COMPLETED',
      phase: 'DONE',
      receipt,
      completedAt: now,
      lastResultCode: '0',
      nextAttemptAt: null,
      reason: null,
    },
  };
  const jobs: JobOutboxEntry[] = [];
  const next = partOf(p, part.index + 1);
  if (next && next.phase === 'WAITING') {
    parts[next.index] = startedPart(p._id, next, 1);
    jobs.push(attemptJob(p._id, next.index, 1));
  }
  return { parts, jobs };
}

/** A part starting attempt `attempt` (its first, or the next after one that paid nothing). */
export function startedPart(payoutId: string, part: PartDoc, attempt: number): Partial<PartDoc> {
  const ocid = originatorConversationIdOf(payoutId, part.index, attempt);
  return {
    phase: 'SENDING',
    attempts: attempt,
    originatorConversationId: ocid,
    originatorConversationIds: [...part.originatorConversationIds, ocid],
    statusQuery: null,
    nextAttemptAt: null,
    sendFailures: 0,
  };
}

export function failedPart(reason: FailureReason, set: Partial<PartDoc> = {}): Partial<PartDoc> {
  return { ...set, status: 'FAILED', phase: 'DONE', reason, nextAttemptAt: null };
}
