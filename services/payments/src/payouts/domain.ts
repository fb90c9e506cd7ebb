import { randomUUID } from 'node:crypto';
import type { originatePayoutBody, PAYOUT_FAILURE_REASONS } from '@parametric/contracts';
import { createEvent, type EventEnvelope, withOutboxEvents } from '@parametric/events';
import { AppError } from '@parametric/http';
import type { Logger } from '@parametric/logger';
import { formatMinor } from '@parametric/money';
import { isDuplicateKey, type TenantScope } from '@parametric/mongo';
import type { FarmerLookup, PolicyLookup } from '@parametric/policy-client';
import {
  type JobOutboxEntry,
  jobOutboxInsert,
  outboxJob,
  payoutAttemptJobId,
  payoutRetryJobId,
  policySummaryJobId,
  withOutboxJobs,
} from '@parametric/queue';
import type { QueryFilter, UpdateQuery } from 'mongoose';
import type { z } from 'zod';
import type { Clock } from '../clock';
import type { PayoutState } from '../metrics';
import {
  type Accepted,
  type B2cInput,
  type B2cQueueTimeout,
  type B2cResult,
  DarajaError,
  isRetriableB2c,
  stableReason,
  type TransactionStatusInput,
  type TransactionStatusResult,
} from '../provider';
import { createQuote, quotesOf } from '../quotes/domain';
import type { QuoteModel } from '../quotes/model';
import type { RateSource } from '../quotes/rates';
import type { PayoutDoc, PayoutModel } from './model';

export type { PayoutDoc } from './model';

type FailureReason = (typeof PAYOUT_FAILURE_REASONS)[number];
const KNOWN_REASONS = new Set<string>([
  'INSUFFICIENT_BALANCE',
  'AMOUNT_LIMIT_EXCEEDED',
  'RECIPIENT_NOT_REGISTERED',
  'INVALID_PHONE',
  'PROVIDER_ERROR',
]);

/** What payouts need of Daraja (the client in `../provider` implements it). */
export interface PayoutProvider {
  b2c(input: B2cInput): Promise<Accepted>;
  transactionStatus(input: TransactionStatusInput): Promise<Accepted>;
}

/** Reads and conditional writes of payouts, through a tenant scope or across organizations. */
export interface PayoutStore {
  load(filter: Record<string, unknown>): Promise<PayoutDoc | null>;
  update(filter: Record<string, unknown>, update: UpdateQuery<PayoutDoc>): Promise<PayoutDoc | null>;
  /** Called once per committed change (`payouts_total`): the payout before and after it. */
  changed?(before: PayoutDoc, after: PayoutDoc): void;
}

export function storeOf(model: PayoutModel, changed?: PayoutStore['changed']): PayoutStore {
  return {
    ...(changed ? { changed } : {}),
    load: (filter) =>
      model
        .findOne(filter as QueryFilter<PayoutDoc>)
        .lean<PayoutDoc>()
        .exec(),
    update: (filter, update) =>
      model
        .findOneAndUpdate(filter as QueryFilter<PayoutDoc>, update, { returnDocument: 'after' })
        .lean<PayoutDoc>()
        .exec(),
  };
}

export function tenantStoreOf(scope: TenantScope<PayoutDoc>): PayoutStore {
  return {
    load: (filter) =>
      scope
        .findOne(filter as QueryFilter<PayoutDoc>)
        .lean<PayoutDoc>()
        .exec(),
    update: async (filter, update) =>
      (await scope.findOneAndUpdate(filter as QueryFilter<PayoutDoc>, update)) as PayoutDoc | null,
  };
}

/** Attempt n's OriginatorConversationID: Daraja refuses a reused one, so each attempt has its own. */
export const originatorConversationIdOf = (payoutId: string, attempt: number) =>
  attempt === 1 ? payoutId : `${payoutId}-${attempt}`;

const attemptJob = (payoutId: string, attempt: number) =>
  outboxJob('payout-attempts', { payoutId }, payoutAttemptJobId(payoutId, attempt));

const amountKes = (p: Pick<PayoutDoc, 'amountMinor' | 'exponent'>) =>
  formatMinor(BigInt(p.amountMinor), p.exponent);

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
      amount: amountKes(p),
      currency: p.currency,
      mobileMoneyRef: p.mobileMoneyRef ?? null,
      reason: p.reason ?? null,
      updatedAt: now.toISOString(),
    },
    policySummaryJobId({ kind: 'PAYOUT', determinationId: p._id, revision: p.revision }),
  );
}

interface Step {
  set: Partial<PayoutDoc>;
  /** A change partners see (status, receipt, reason): bumps the revision and sends a summary. */
  visible?: boolean;
  events?: EventEnvelope[];
  jobs?: JobOutboxEntry[];
}

/**
 * Moves a payout by compare-and-set on `seq`: `decide` sees the stored
 * payout and says what to change (or null: nothing to do). A concurrent change makes the
 * write miss; the payout is read again and `decide` asked again. Events and jobs go in the
 * same single-document update as the change.
 */
async function transition(
  store: PayoutStore,
  filter: Record<string, unknown>,
  decide: (p: PayoutDoc) => Step | null,
  now: Date,
): Promise<PayoutDoc | null> {
  for (let tries = 0; tries < 10; tries++) {
    const p = await store.load(filter);
    if (!p) return null;
    const step = decide(p);
    if (!step) return null;
    const revision = p.revision + (step.visible ? 1 : 0);
    const next = { ...p, ...step.set, revision } as PayoutDoc;
    const jobs = [...(step.jobs ?? []), ...(step.visible ? [summaryJob(next, now)] : [])];
    let update: UpdateQuery<PayoutDoc> = { $set: { ...step.set, revision, seq: (p.seq ?? 0) + 1 } };
    if (step.events && step.events.length > 0) {
      update = withOutboxEvents<PayoutDoc>(update, ...(step.events as [EventEnvelope, ...EventEnvelope[]]));
    }
    update = withOutboxJobs(update as Record<string, unknown>, ...jobs) as UpdateQuery<PayoutDoc>;
    const written = await store.update({ _id: p._id, seq: p.seq ?? 0 }, update);
    if (written) {
      store.changed?.(p, written);
      return written;
    }
  }
  throw new Error('payout: too many concurrent changes');
}

function completedStep(p: PayoutDoc, receipt: string, now: Date): Step | null {
  if (p.phase === 'DONE') return null;
  return {
    set: {
      status: 'COMPLETED',
      phase: 'DONE',
      mobileMoneyRef: receipt,
      completedAt: now,
      lastResultCode: '0',
      nextAttemptAt: null,
      reason: null,
    },
    visible: true,
    events: [
      createEvent('payout.completed', p.organizationId, {
        payoutId: p._id,
        policyId: p.policyId,
        amountUSDC: p.amountUSDC,
        amountKES: amountKes(p),
        mobileMoneyRef: receipt,
      }),
    ],
  };
}

function failedStep(p: PayoutDoc, reason: FailureReason, set: Partial<PayoutDoc> = {}): Step {
  return {
    set: { ...set, status: 'FAILED', phase: 'DONE', reason, nextAttemptAt: null },
    visible: true,
    events: [
      createEvent('payout.failed', p.organizationId, {
        payoutId: p._id,
        policyId: p.policyId,
        amountUSDC: p.amountUSDC,
        reason,
      }),
    ],
  };
}

function reasonOf(resultCode: string | null | undefined): FailureReason {
  if (!resultCode) return 'PROVIDER_ERROR';
  const reason = stableReason(resultCode, 'B2C');
  return reason && KNOWN_REASONS.has(reason) ? (reason as FailureReason) : 'PROVIDER_ERROR';
}

// ---------------------------------------------------------------------------------------------
// Origination

export interface OriginateDeps {
  payouts: PayoutModel;
  quotes: QuoteModel;
  findPolicy: PolicyLookup;
  findFarmer: FarmerLookup;
  rates: Pick<RateSource, 'usdcPerKes'>;
  quoteTtlSeconds: number;
  maxAttempts: number;
  now: Clock;
  /** Counts `payouts_total{state="originated"}` once per payout created. */
  onPayout?: (state: PayoutState) => void;
}

export type OriginationInput = z.output<typeof originatePayoutBody>;

/**
 * Originates the payout a triggered determination makes owed (the `payout-originations`
 * worker and the ops door alike): one per determination. Tier 2 only (`403
 * TIER_NOT_ENTITLED` otherwise, before anything is written); the farmer's phone through the
 * policy service; a KES→USDC quote taken now and kept with it (no current rate: `502
 * PAYMENT_ERROR`, nothing written). The first attempt's job is stored with the payout.
 */
export async function originatePayout(
  input: OriginationInput,
  deps: OriginateDeps,
): Promise<{ created: boolean; payout: PayoutDoc }> {
  const existing = await deps.payouts.findOne({ determinationId: input.determinationId }).lean<PayoutDoc>();
  if (existing) return { created: false, payout: existing };
  const policy = await deps.findPolicy({ policyId: input.policyId });
  if (!policy || policy.organizationId !== input.organizationId) throw AppError.notFound('Policy');
  if (policy.settlementMode !== 'DETERMINATION_AND_SETTLEMENT') {
    throw new AppError(
      'TIER_NOT_ENTITLED',
      'This policy is settled by the partner (Tier 1, DETERMINATION): the service pays out nothing for it',
    );
  }
  if (input.currency !== 'KES' || policy.currency !== 'KES' || input.exponent !== 2) {
    throw AppError.invalid('Payouts are paid by M-Pesa in KES only', [
      { field: 'currency', message: `the policy is in ${policy.currency}; payouts are in KES (exponent 2)` },
    ]);
  }
  const farmer = await deps.findFarmer(policy.farmerId);
  if (!farmer || farmer.organizationId !== policy.organizationId) throw AppError.notFound('Farmer');

  // M-Pesa moves whole shillings: the cents of an owed amount are not paid (docs/decisions.md).
  const unit = 10n ** BigInt(input.exponent);
  const owed = BigInt(input.amountMinor);
  const whole = (owed / unit) * unit;
  if (whole <= 0n) {
    throw AppError.invalid('Less than one shilling is owed: M-Pesa cannot pay it', [
      { field: 'amountMinor', message: 'must be at least one whole shilling' },
    ]);
  }
  const quote = await createQuote(
    quotesOf(deps.quotes, input.organizationId),
    { amount: Number(whole / unit), fromCurrency: 'KES', toCurrency: 'USDC' },
    { rates: deps.rates, now: deps.now, ttlSeconds: deps.quoteTtlSeconds },
  );
  const now = deps.now();
  const payoutId = randomUUID();
  const doc = {
    _id: payoutId,
    organizationId: input.organizationId,
    policyId: input.policyId,
    determinationId: input.determinationId,
    amountMinor: whole.toString(),
    owedMinor: owed.toString(),
    currency: 'KES',
    exponent: input.exponent,
    amountUSDC: quote.convertedAmount,
    quoteId: quote.quoteId,
    phone: farmer.phoneNumber,
    status: 'PENDING' as const,
    phase: 'SENDING' as const,
    attempts: 1,
    attemptLimit: deps.maxAttempts,
    originatorConversationId: originatorConversationIdOf(payoutId, 1),
    originatorConversationIds: [originatorConversationIdOf(payoutId, 1)],
    revision: 1,
    mobileMoneyRef: null,
    reason: null,
  };
  const summary = summaryJob({ ...doc, createdAt: now, updatedAt: now } as unknown as PayoutDoc, now);
  try {
    const created = await deps.payouts.create({
      ...doc,
      ...jobOutboxInsert(attemptJob(payoutId, 1), summary),
    });
    deps.onPayout?.('originated');
    return { created: true, payout: created.toObject() as PayoutDoc };
  } catch (err) {
    if (!isDuplicateKey(err)) throw err;
    const raced = await deps.payouts.findOne({ determinationId: input.determinationId }).lean<PayoutDoc>();
    if (!raced) throw err;
    return { created: false, payout: raced };
  }
}

// ---------------------------------------------------------------------------------------------
// Attempts (the `payout-attempts` worker)

export interface PayoutSettings {
  resultUrl: string;
  queueTimeoutUrl: string;
  statusResultUrl: string;
  statusTimeoutUrl: string;
  /** Backoff base between attempts: base × 2^(n-1) after attempt n. */
  retryBaseMs: number;
  maxAttempts: number;
  /** How often a waiting attempt looks for the Transaction Status answer. */
  statusPollMs: number;
  /** No answer this long after asking: ask again. */
  statusAnswerWaitMs: number;
  /** First delay after a throttled or unreachable Daraja; doubles, at most a minute. */
  transportRetryMs: number;
  /** An accepted attempt with no Result nor QueueTimeOut this long: ask Transaction Status. */
  resultWaitMs: number;
}

export interface AttemptDeps {
  store: PayoutStore;
  provider: PayoutProvider;
  settings: PayoutSettings;
  now: Clock;
  logger: Logger;
}

export type AttemptStep = { kind: 'done' } | { kind: 'delay'; until: number };

const DONE: AttemptStep = { kind: 'done' };

/**
 * Moves a payout on by one step: sends the current attempt's B2C, or (before attempt n ≥ 2)
 * asks Transaction Status whether the previous attempt paid after all and waits for the
 * answer. Returns when to look again, if ever.
 */
export async function runPayoutAttempt(payoutId: string, deps: AttemptDeps): Promise<AttemptStep> {
  const { store, settings } = deps;
  let p = await store.load({ _id: payoutId });
  if (!p || p.phase === 'DONE') return DONE;
  const now = deps.now();
  if (p.phase === 'AWAITING_RESULT') {
    // Neither a Result nor a QueueTimeOut this long after acceptance: Transaction Status is
    // asked; `Completed` completes the payout. Anything else leaves it PROCESSING for ops (an
    // error log): a payment Daraja may still be processing is never sent a second time.
    if (!p.acceptedAt) return DONE;
    const due = p.acceptedAt.getTime() + settings.resultWaitMs;
    if (now.getTime() < due) return { kind: 'delay', until: due };
    deps.logger.error(
      { payoutId: p._id, ocid: p.originatorConversationId },
      'no B2C Result in time: asking Transaction Status; needs ops if it does not complete',
    );
    await askStatusWhileAwaiting(p, deps);
    return awaitResult(deps);
  }
  if (p.nextAttemptAt && p.nextAttemptAt.getTime() > now.getTime()) {
    return { kind: 'delay', until: p.nextAttemptAt.getTime() };
  }
  if (p.phase === 'RETRY_WAIT') {
    const ocid = p.originatorConversationId as string;
    const sq = p.statusQuery;
    const stale =
      sq && sq.answer === null && now.getTime() - sq.askedAt.getTime() > settings.statusAnswerWaitMs;
    if (!sq || sq.forOcid !== ocid || stale) {
      let ack: Accepted;
      try {
        ack = await deps.provider.transactionStatus({
          originatorConversationId: ocid,
          resultUrl: settings.statusResultUrl,
          queueTimeoutUrl: settings.statusTimeoutUrl,
          remarks: 'Payout status before retry',
        });
      } catch (err) {
        return transportFailure(p, err, deps);
      }
      await transition(
        store,
        { _id: p._id },
        (q) =>
          q.phase === 'RETRY_WAIT' && q.originatorConversationId === ocid
            ? {
                set: {
                  statusQuery: {
                    forOcid: ocid,
                    queryOcid: ack.originatorConversationId,
                    askedAt: now,
                    answer: null,
                  },
                  sendFailures: 0,
                },
              }
            : null,
        now,
      );
      return { kind: 'delay', until: now.getTime() + settings.statusPollMs };
    }
    if (sq.answer === null) return { kind: 'delay', until: now.getTime() + settings.statusPollMs };
    if (sq.answer === 'COMPLETED') return DONE;
    const attempts = p.attempts;
    const started = await transition(
      store,
      { _id: p._id },
      (q) => {
        if (
          q.phase !== 'RETRY_WAIT' ||
          q.attempts !== attempts ||
          q.statusQuery?.answer !== 'NOT_COMPLETED'
        ) {
          return null;
        }
        if (q.attempts >= q.attemptLimit) return failedStep(q, reasonOf(q.lastResultCode));
        const next = originatorConversationIdOf(q._id, q.attempts + 1);
        return {
          set: {
            phase: 'SENDING',
            attempts: q.attempts + 1,
            originatorConversationId: next,
            originatorConversationIds: [...q.originatorConversationIds, next],
            statusQuery: null,
            nextAttemptAt: null,
            sendFailures: 0,
          },
        };
      },
      now,
    );
    if (started?.phase !== 'SENDING') return DONE;
    p = started;
  }
  return sendB2c(p, deps);
}

async function sendB2c(p: PayoutDoc, deps: AttemptDeps): Promise<AttemptStep> {
  const { settings, store } = deps;
  const ocid = p.originatorConversationId as string;
  const unit = 10n ** BigInt(p.exponent);
  try {
    await deps.provider.b2c({
      originatorConversationId: ocid,
      amount: Number(BigInt(p.amountMinor) / unit),
      phone: p.phone,
      remarks: 'Insurance payout',
      occasion: `Payout ${p._id}`,
      resultUrl: settings.resultUrl,
      queueTimeoutUrl: settings.queueTimeoutUrl,
    });
  } catch (err) {
    if (err instanceof DarajaError && err.kind === 'DUPLICATE') {
      // Daraja already took this id: the payment exists. Wait for its Result, and ask
      // Transaction Status in case the Result was lost (never send it again).
      deps.logger.warn({ payoutId: p._id, ocid }, 'B2C already accepted under this id: awaiting its outcome');
      await accepted(p, deps);
      await askStatusWhileAwaiting(p, deps);
      return awaitResult(deps);
    }
    if (err instanceof DarajaError && err.kind === 'REJECTED') {
      // Daraja refused the request as made (our configuration, the number): sending it again won't help.
      deps.logger.error({ payoutId: p._id, err: err.message }, 'B2C refused by Daraja: payout failed');
      await transition(
        store,
        { _id: p._id },
        (q) =>
          q.originatorConversationId === ocid && q.phase === 'SENDING'
            ? failedStep(q, 'PROVIDER_ERROR', {
                lastResultCode: err.errorCode ?? null,
                lastResultDesc: err.message,
              })
            : null,
        deps.now(),
      );
      return DONE;
    }
    return transportFailure(p, err, deps);
  }
  await accepted(p, deps);
  return awaitResult(deps);
}

/** Asks Transaction Status about an accepted attempt whose Result is awaited (never sends it again). */
async function askStatusWhileAwaiting(p: PayoutDoc, deps: AttemptDeps): Promise<void> {
  const ocid = p.originatorConversationId as string;
  try {
    const ack = await deps.provider.transactionStatus({
      originatorConversationId: ocid,
      resultUrl: deps.settings.statusResultUrl,
      queueTimeoutUrl: deps.settings.statusTimeoutUrl,
      remarks: 'Payout status, Result awaited',
    });
    const now = deps.now();
    await transition(
      deps.store,
      { _id: p._id },
      (q) =>
        q.originatorConversationId === ocid && q.phase === 'AWAITING_RESULT'
          ? {
              set: {
                statusQuery: {
                  forOcid: ocid,
                  queryOcid: ack.originatorConversationId,
                  askedAt: now,
                  answer: null,
                },
              },
            }
          : null,
      now,
    );
  } catch (err) {
    deps.logger.warn({ payoutId: p._id, err: (err as Error).message }, 'Transaction Status not sent');
  }
}

/** Looks again once the Result is overdue (it normally arrives long before). */
const awaitResult = (deps: AttemptDeps): AttemptStep => ({
  kind: 'delay',
  until: deps.now().getTime() + deps.settings.resultWaitMs,
});

async function accepted(p: PayoutDoc, deps: AttemptDeps): Promise<void> {
  const ocid = p.originatorConversationId;
  await transition(
    deps.store,
    { _id: p._id },
    (q) =>
      q.originatorConversationId === ocid && q.phase === 'SENDING'
        ? {
            set: { phase: 'AWAITING_RESULT', status: 'PROCESSING', sendFailures: 0, acceptedAt: deps.now() },
            visible: q.status !== 'PROCESSING',
          }
        : null,
    deps.now(),
  );
}

/** Throttled, unreachable, or any unexpected failure to ask: the same step again, later. */
async function transportFailure(p: PayoutDoc, err: unknown, deps: AttemptDeps): Promise<AttemptStep> {
  const now = deps.now();
  const failures = (p.sendFailures ?? 0) + 1;
  const delay = Math.min(deps.settings.transportRetryMs * 2 ** (failures - 1), 60_000);
  deps.logger.warn(
    { payoutId: p._id, failures, retryInMs: delay, err: (err as Error).message },
    'Daraja could not be asked; payout step retried later',
  );
  await transition(
    deps.store,
    { _id: p._id },
    (q) => (q.phase === p.phase && q.attempts === p.attempts ? { set: { sendFailures: failures } } : null),
    now,
  );
  return { kind: 'delay', until: now.getTime() + delay };
}

// ---------------------------------------------------------------------------------------------
// Callbacks

export interface CallbackOutcome {
  outcome: string;
  payoutId: string | null;
}

export interface PayoutCallbackDeps {
  store: PayoutStore;
  settings: Pick<PayoutSettings, 'retryBaseMs'>;
  now: Date;
  logger: Logger;
}

/** A B2C Result: completes the payout, fails it, or schedules the next attempt. Duplicates change nothing. */
export async function onB2cResult(r: B2cResult, deps: PayoutCallbackDeps): Promise<CallbackOutcome> {
  const p = await deps.store.load({ originatorConversationIds: r.originatorConversationId });
  if (!p) return { outcome: 'UNKNOWN_PAYOUT', payoutId: null };
  if (r.rawResultCode === '0') {
    const receipt = r.receipt ?? r.transactionId;
    const done = await transition(
      deps.store,
      { _id: p._id },
      (q) => completedStep(q, receipt, deps.now),
      deps.now,
    );
    if (done) return { outcome: 'COMPLETED', payoutId: p._id };
    if (p.status === 'COMPLETED' && p.mobileMoneyRef !== receipt) {
      deps.logger.error(
        { payoutId: p._id, receipt, previous: p.mobileMoneyRef },
        'a second B2C payment of a payout completed: paid twice, needs ops',
      );
      return { outcome: 'PAID_TWICE', payoutId: p._id };
    }
    return { outcome: 'DUPLICATE', payoutId: p._id };
  }
  const ocid = r.originatorConversationId;
  const moved = await transition(
    deps.store,
    { _id: p._id },
    (q) => {
      if (q.originatorConversationId !== ocid || (q.phase !== 'AWAITING_RESULT' && q.phase !== 'SENDING'))
        return null;
      const result = { lastResultCode: r.rawResultCode, lastResultDesc: r.resultDesc };
      if (!isRetriableB2c(r.rawResultCode) || q.attempts >= q.attemptLimit) {
        return failedStep(q, reasonOf(r.rawResultCode), result);
      }
      return {
        set: {
          ...result,
          status: 'PROCESSING',
          phase: 'RETRY_WAIT',
          nextAttemptAt: new Date(deps.now.getTime() + deps.settings.retryBaseMs * 2 ** (q.attempts - 1)),
          statusQuery: null,
        },
        visible: q.status !== 'PROCESSING',
        jobs: [attemptJob(q._id, q.attempts + 1)],
      };
    },
    deps.now,
  );
  if (!moved) return { outcome: 'DUPLICATE', payoutId: p._id };
  return { outcome: moved.status === 'FAILED' ? 'FAILED' : 'RETRY_SCHEDULED', payoutId: p._id };
}

/** A QueueTimeOut: the outcome is unknown, never failed: Transaction Status is asked before anything else is sent. */
export async function onB2cQueueTimeout(
  t: B2cQueueTimeout,
  deps: PayoutCallbackDeps,
): Promise<CallbackOutcome> {
  const p = await deps.store.load({ originatorConversationIds: t.originatorConversationId });
  if (!p) return { outcome: 'UNKNOWN_PAYOUT', payoutId: null };
  const moved = await transition(
    deps.store,
    { _id: p._id },
    (q) =>
      q.originatorConversationId === t.originatorConversationId &&
      (q.phase === 'AWAITING_RESULT' || q.phase === 'SENDING')
        ? {
            set: {
              status: 'PROCESSING',
              phase: 'RETRY_WAIT',
              nextAttemptAt: null,
              statusQuery: null,
              lastResultDesc: t.resultDesc ?? 'QueueTimeOut',
            },
            visible: q.status !== 'PROCESSING',
            jobs: [attemptJob(q._id, q.attempts + 1)],
          }
        : null,
    deps.now,
  );
  return { outcome: moved ? 'STATUS_TO_ASK' : 'IGNORED', payoutId: p._id };
}

/** A Transaction Status Result: Completed completes the payout (paid once, with the receipt); anything else lets the next attempt go. */
export async function onStatusResult(
  r: TransactionStatusResult,
  deps: PayoutCallbackDeps,
): Promise<CallbackOutcome> {
  let p = await deps.store.load({ 'statusQuery.queryOcid': r.originatorConversationId });
  const askedAbout = r.transaction?.originatorConversationId;
  if (!p && askedAbout) p = await deps.store.load({ originatorConversationIds: askedAbout });
  if (!p) return { outcome: 'UNKNOWN_PAYOUT', payoutId: null };
  const completed = r.rawResultCode === '0' && r.transaction?.status?.toLowerCase() === 'completed';
  if (completed) {
    const receipt = r.transaction?.receipt ?? r.transactionId;
    const done = await transition(
      deps.store,
      { _id: p._id },
      (q) => completedStep(q, receipt, deps.now),
      deps.now,
    );
    return { outcome: done ? 'COMPLETED' : 'DUPLICATE', payoutId: p._id };
  }
  const queryOcid = r.originatorConversationId;
  const moved = await transition(
    deps.store,
    { _id: p._id },
    (q) =>
      q.statusQuery && q.statusQuery.answer === null && q.statusQuery.queryOcid === queryOcid
        ? { set: { statusQuery: { ...q.statusQuery, answer: 'NOT_COMPLETED' } } }
        : null,
    deps.now,
  );
  return { outcome: moved ? 'NOT_COMPLETED' : 'IGNORED', payoutId: p._id };
}

// ---------------------------------------------------------------------------------------------
// Partner and ops reads, the partner's retry

export function payoutView(p: PayoutDoc) {
  return {
    payoutId: p._id,
    policyId: p.policyId,
    determinationId: p.determinationId,
    status: p.status,
    amountKES: amountKes(p),
    owedKES: formatMinor(BigInt(p.owedMinor), p.exponent),
    currency: 'KES' as const,
    amountUSDC: p.amountUSDC,
    quoteId: p.quoteId,
    phoneNumber: `${p.phone.slice(0, 5)}•••••${p.phone.slice(-3)}`,
    attempts: p.attempts,
    mobileMoneyRef: p.mobileMoneyRef ?? null,
    reason: (p.reason ?? null) as FailureReason | null,
    lastResultCode: p.lastResultCode ?? null,
    nextAttemptAt: p.nextAttemptAt ? p.nextAttemptAt.toISOString() : null,
    createdAt: p.createdAt.toISOString(),
    updatedAt: p.updatedAt.toISOString(),
    completedAt: p.completedAt ? p.completedAt.toISOString() : null,
  };
}

export const opsPayoutView = (p: PayoutDoc) => ({ ...payoutView(p), organizationId: p.organizationId });

export async function listPayouts(
  scope: TenantScope<PayoutDoc>,
  query: { page: number; limit: number; status?: PayoutDoc['status'] },
) {
  const filter: Record<string, unknown> = {};
  if (query.status !== undefined) filter.status = query.status;
  const [items, total] = await Promise.all([
    scope
      .find(filter as QueryFilter<PayoutDoc>)
      .sort({ createdAt: -1, _id: -1 })
      .skip((query.page - 1) * query.limit)
      .limit(query.limit)
      .lean<PayoutDoc[]>(),
    scope.countDocuments(filter as QueryFilter<PayoutDoc>),
  ]);
  return { items: items.map(payoutView), total };
}

export async function readPayout(scope: TenantScope<PayoutDoc>, id: string) {
  const p = await scope.findById(id).lean<PayoutDoc>();
  if (!p) throw AppError.notFound('Payout');
  return payoutView(p);
}

/**
 * A FAILED payout goes back to PENDING with a fresh attempt budget; its next attempt is sent
 * only once Transaction Status says the last one paid nothing.
 */
export async function retryPayout(
  scope: TenantScope<PayoutDoc>,
  id: string,
  deps: { findPolicy: PolicyLookup; maxAttempts: number; now: Date },
) {
  const p = await scope.findById(id).lean<PayoutDoc>();
  if (!p) throw AppError.notFound('Payout');
  const policy = await deps.findPolicy({ policyId: p.policyId });
  if (policy?.settlementMode !== 'DETERMINATION_AND_SETTLEMENT') {
    throw new AppError(
      'TIER_NOT_ENTITLED',
      'This policy is settled by the partner (Tier 1, DETERMINATION): the service pays out nothing for it',
    );
  }
  if (p.status !== 'FAILED')
    throw AppError.conflict(`The payout is ${p.status}: only a FAILED payout is retried`);
  const retried = await transition(
    tenantStoreOf(scope),
    { _id: id },
    (q) => {
      if (q.status !== 'FAILED') return null;
      return {
        set: {
          status: 'PENDING',
          phase: 'RETRY_WAIT',
          attemptLimit: q.attempts + deps.maxAttempts,
          nextAttemptAt: null,
          statusQuery: null,
          sendFailures: 0,
          reason: null,
        },
        visible: true,
        jobs: [outboxJob('payout-attempts', { payoutId: q._id }, payoutRetryJobId(q._id, q.revision + 1))],
      };
    },
    deps.now,
  );
  if (!retried) throw AppError.conflict('The payout is no longer FAILED');
  return payoutView(retried);
}
