import type { Logger } from '@parametric/logger';
import type { Clock } from '../clock';
import {
  type Accepted,
  type B2cInput,
  DarajaError,
  stableReason,
  type TransactionStatusInput,
} from '../provider';
import { type ByEnvironment, providerOf } from '../sandbox';
import { ledgerRow, recordAfter } from './ledger';
import type { PartDoc, PayoutDoc } from './model';
import type { PayoutLedger, PayoutStore } from './store';
import { type FailureReason, failedPart, partOf, startedPart, transition } from './transitions';

/** What payouts need of Daraja (the client in `../provider` implements it). */
export interface PayoutProvider {
  b2c(input: B2cInput): Promise<Accepted>;
  transactionStatus(input: TransactionStatusInput): Promise<Accepted>;
}

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
  ledger: PayoutLedger;
  /** Each environment's Daraja: a payout goes through its policy's (origination recorded it). */
  providers: ByEnvironment<PayoutProvider>;
  settings: PayoutSettings;
  now: Clock;
  logger: Logger;
  /**
   * Books a turn on Daraja's schedule (workers.ts) and returns the wait for it, awaited right
   * before the request: a job that finds nothing to ask Daraja takes no turn, and what is written
   * before a request is written during the wait. It may throw when no turn is free soon enough;
   * it is called before anything about that request is recorded, so the job simply runs again
   * later.
   */
  bookSlot?: () => Promise<() => Promise<void>>;
}

export type AttemptStep = { kind: 'done' } | { kind: 'delay'; until: number };

const DONE: AttemptStep = { kind: 'done' };

const KNOWN_REASONS = new Set<string>([
  'INSUFFICIENT_BALANCE',
  'AMOUNT_LIMIT_EXCEEDED',
  'RECIPIENT_NOT_REGISTERED',
  'INVALID_PHONE',
  'PROVIDER_ERROR',
]);

/**
 * The Daraja a payout goes through. A sandbox payout where the sandbox Daraja is gone (its
 * configuration removed since origination) throws inside the caller's provider try, so it waits
 * like an unreachable Daraja: it never falls back to the live one.
 */
function providerOfPayout(p: PayoutDoc, deps: AttemptDeps): PayoutProvider {
  const provider = providerOf(deps.providers, p.environment);
  if (!provider) throw new Error('no sandbox Daraja is configured for this sandbox payout');
  return provider;
}

/** Books this request's turn on Daraja's schedule (none to wait for without a schedule). */
const bookTurn = (deps: AttemptDeps): Promise<() => Promise<void>> =>
  deps.bookSlot ? deps.bookSlot() : Promise.resolve(async () => {});

/** The stable reason of a B2C ResultCode (anything unknown is PROVIDER_ERROR). */
export function reasonOf(resultCode: string | null | undefined): FailureReason {
  if (!resultCode) return 'PROVIDER_ERROR';
  const reason = stableReason(resultCode, 'B2C');
  return reason && KNOWN_REASONS.has(reason) ? (reason as FailureReason) : 'PROVIDER_ERROR';
}

/**
 * Moves one part of a payout on by one step: sends the current attempt's B2C, or (before attempt
 * n ≥ 2) asks Transaction Status whether the previous attempt paid after all and waits for the
 * answer. Returns when to look again, if ever. A part waiting for the one before it, or done, is
 * left alone.
 */
export async function runPayoutAttempt(
  payoutId: string,
  index: number,
  deps: AttemptDeps,
): Promise<AttemptStep> {
  const { store, settings } = deps;
  const p = await store.get(payoutId);
  const part = p ? partOf(p, index) : undefined;
  if (!p || !part || part.phase === 'DONE' || part.phase === 'WAITING') return DONE;
  const now = deps.now();
  if (part.phase === 'AWAITING_RESULT') {
    // Neither a Result nor a QueueTimeOut this long after acceptance: Transaction Status is
    // asked; `Completed` completes the part. Anything else leaves it PROCESSING for ops (an error
    // log): a payment Daraja may still be processing is never sent a second time.
    if (!part.acceptedAt) return DONE;
    const due = part.acceptedAt.getTime() + settings.resultWaitMs;
    if (now.getTime() < due) return { kind: 'delay', until: due };
    deps.logger.error(
      { payoutId, part: index, ocid: part.originatorConversationId },
      'no B2C Result in time: asking Transaction Status; needs ops if it does not complete',
    );
    await askStatusWhileAwaiting(p, part, deps);
    return awaitResult(deps);
  }
  if (part.nextAttemptAt && part.nextAttemptAt.getTime() > now.getTime()) {
    return { kind: 'delay', until: part.nextAttemptAt.getTime() };
  }
  let sending = part;
  if (part.phase === 'RETRY_WAIT') {
    const next = await beforeRetry(p, part, deps);
    if (next.kind !== 'send') return next.step;
    sending = next.part;
  }
  return sendB2c(p, sending, deps);
}

/**
 * RETRY_WAIT: Transaction Status is asked about the last attempt (once per attempt, again when
 * no answer comes), and only once it says the attempt did not complete is the next one started,
 * or the part FAILED when its attempts are spent.
 */
async function beforeRetry(
  p: PayoutDoc,
  part: PartDoc,
  deps: AttemptDeps,
): Promise<{ kind: 'send'; part: PartDoc } | { kind: 'wait'; step: AttemptStep }> {
  const { settings } = deps;
  const now = deps.now();
  const ocid = part.originatorConversationId as string;
  const sq = part.statusQuery;
  const stale =
    sq && sq.answer === null && now.getTime() - sq.askedAt.getTime() > settings.statusAnswerWaitMs;
  if (!sq || sq.forOcid !== ocid || stale) {
    await (await bookTurn(deps))();
    let ack: Accepted;
    try {
      ack = await providerOfPayout(p, deps).transactionStatus({
        originatorConversationId: ocid,
        resultUrl: settings.statusResultUrl,
        queueTimeoutUrl: settings.statusTimeoutUrl,
        remarks: 'Payout status before retry',
      });
    } catch (err) {
      return { kind: 'wait', step: await transportFailure(p, part, err, deps) };
    }
    await transition(
      deps.store,
      p._id,
      (q) => {
        const current = partOf(q, part.index);
        return current?.phase === 'RETRY_WAIT' && current.originatorConversationId === ocid
          ? { parts: { [part.index]: { statusQuery: statusQueryOf(ocid, ack, now), sendFailures: 0 } } }
          : null;
      },
      now,
    );
    await recordAfter(
      deps.ledger,
      ledgerRow(p, part, 'STATUS_QUERY', ocid, now, { conversationId: ack.conversationId, resultCode: '0' }),
      deps.logger,
    );
    return { kind: 'wait', step: { kind: 'delay', until: now.getTime() + settings.statusPollMs } };
  }
  if (sq.answer === null)
    return { kind: 'wait', step: { kind: 'delay', until: now.getTime() + settings.statusPollMs } };
  if (sq.answer === 'COMPLETED') return { kind: 'wait', step: DONE };
  const attempts = part.attempts;
  const started = await transition(
    deps.store,
    p._id,
    (q) => {
      const current = partOf(q, part.index);
      if (
        current?.phase !== 'RETRY_WAIT' ||
        current.attempts !== attempts ||
        current.statusQuery?.answer !== 'NOT_COMPLETED'
      ) {
        return null;
      }
      if (current.attempts >= current.attemptLimit) {
        return { parts: { [part.index]: failedPart(reasonOf(current.lastResultCode)) } };
      }
      return { parts: { [part.index]: startedPart(q._id, current, current.attempts + 1) } };
    },
    now,
  );
  const after = started ? partOf(started, part.index) : undefined;
  if (after?.phase !== 'SENDING') return { kind: 'wait', step: DONE };
  return { kind: 'send', part: after };
}

const statusQueryOf = (ocid: string, ack: Accepted, now: Date) => ({
  forOcid: ocid,
  queryOcid: ack.originatorConversationId,
  askedAt: now,
  answer: null,
});

async function sendB2c(p: PayoutDoc, part: PartDoc, deps: AttemptDeps): Promise<AttemptStep> {
  const { settings, store } = deps;
  const ocid = part.originatorConversationId as string;
  const unit = 10n ** BigInt(p.exponent);
  const turn = await bookTurn(deps);
  const sentAt = deps.now();
  // Recorded before it is sent, and not sent if it cannot be recorded: the ledger never lacks a
  // request that went out (the job is retried).
  await deps.ledger.append(
    ledgerRow(p, part, 'B2C_REQUEST', ocid, sentAt, { amountMinor: part.amountMinor }),
  );
  await turn();
  let ack: Accepted;
  try {
    ack = await providerOfPayout(p, deps).b2c({
      originatorConversationId: ocid,
      amount: Number(BigInt(part.amountMinor) / unit),
      phone: p.phone,
      remarks: 'Insurance payout',
      occasion: p.parts.length > 1 ? `Payout ${p._id} part ${part.index}` : `Payout ${p._id}`,
      resultUrl: settings.resultUrl,
      queueTimeoutUrl: settings.queueTimeoutUrl,
    });
  } catch (err) {
    const refused = (facts: { resultCode: string | null; resultDesc: string }) =>
      recordAfter(deps.ledger, ledgerRow(p, part, 'B2C_RESPONSE', ocid, deps.now(), facts), deps.logger);
    if (err instanceof DarajaError && err.kind === 'DUPLICATE') {
      // Daraja already took this id: the payment exists. Wait for its Result, and ask
      // Transaction Status in case the Result was lost (never send it again).
      deps.logger.warn(
        { payoutId: p._id, part: part.index, ocid },
        'B2C already accepted under this id: awaiting its outcome',
      );
      await refused({ resultCode: err.errorCode ?? null, resultDesc: err.message });
      await accepted(p, part, deps);
      await askStatusWhileAwaiting(p, part, deps);
      return awaitResult(deps);
    }
    if (err instanceof DarajaError && err.kind === 'REJECTED') {
      // Daraja refused the request as made (our configuration, the number): sending it again won't help.
      deps.logger.error(
        { payoutId: p._id, part: part.index, err: err.message },
        'B2C refused by Daraja: payout failed',
      );
      await refused({ resultCode: err.errorCode ?? null, resultDesc: err.message });
      await transition(
        store,
        p._id,
        (q) => {
          const current = partOf(q, part.index);
          return current?.originatorConversationId === ocid && current.phase === 'SENDING'
            ? {
                parts: {
                  [part.index]: failedPart('PROVIDER_ERROR', {
                    lastResultCode: err.errorCode ?? null,
                    lastResultDesc: err.message,
                  }),
                },
              }
            : null;
        },
        deps.now(),
      );
      return DONE;
    }
    await refused({
      resultCode: err instanceof DarajaError ? (err.errorCode ?? null) : null,
      resultDesc: (err as Error).message,
    });
    return transportFailure(p, part, err, deps);
  }
  const answeredAt = deps.now();
  await accepted(p, part, deps);
  await recordAfter(
    deps.ledger,
    ledgerRow(p, part, 'B2C_RESPONSE', ocid, answeredAt, {
      conversationId: ack.conversationId,
      resultCode: '0',
    }),
    deps.logger,
  );
  return awaitResult(deps);
}

/** Asks Transaction Status about an accepted attempt whose Result is awaited (never sends it again). */
async function askStatusWhileAwaiting(p: PayoutDoc, part: PartDoc, deps: AttemptDeps): Promise<void> {
  const ocid = part.originatorConversationId as string;
  await (await bookTurn(deps))();
  try {
    const ack = await providerOfPayout(p, deps).transactionStatus({
      originatorConversationId: ocid,
      resultUrl: deps.settings.statusResultUrl,
      queueTimeoutUrl: deps.settings.statusTimeoutUrl,
      remarks: 'Payout status, Result awaited',
    });
    const now = deps.now();
    await transition(
      deps.store,
      p._id,
      (q) => {
        const current = partOf(q, part.index);
        return current?.originatorConversationId === ocid && current.phase === 'AWAITING_RESULT'
          ? { parts: { [part.index]: { statusQuery: statusQueryOf(ocid, ack, now) } } }
          : null;
      },
      now,
    );
    await recordAfter(
      deps.ledger,
      ledgerRow(p, part, 'STATUS_QUERY', ocid, now, { conversationId: ack.conversationId, resultCode: '0' }),
      deps.logger,
    );
  } catch (err) {
    deps.logger.warn(
      { payoutId: p._id, part: part.index, err: (err as Error).message },
      'Transaction Status not sent',
    );
  }
}

/** Looks again once the Result is overdue (it normally arrives long before). */
const awaitResult = (deps: AttemptDeps): AttemptStep => ({
  kind: 'delay',
  until: deps.now().getTime() + deps.settings.resultWaitMs,
});

async function accepted(p: PayoutDoc, part: PartDoc, deps: AttemptDeps): Promise<void> {
  const ocid = part.originatorConversationId;
  const now = deps.now();
  await transition(
    deps.store,
    p._id,
    (q) => {
      const current = partOf(q, part.index);
      return current && current.originatorConversationId === ocid && current.phase === 'SENDING'
        ? {
            parts: {
              [part.index]: {
                phase: 'AWAITING_RESULT',
                status: 'PROCESSING',
                sendFailures: 0,
                acceptedAt: now,
              },
            },
          }
        : null;
    },
    now,
  );
}

/** Throttled, unreachable, or any unexpected failure to ask: the same step again, later. */
async function transportFailure(
  p: PayoutDoc,
  part: PartDoc,
  err: unknown,
  deps: AttemptDeps,
): Promise<AttemptStep> {
  const now = deps.now();
  const failures = (part.sendFailures ?? 0) + 1;
  const delay = Math.min(deps.settings.transportRetryMs * 2 ** (failures - 1), 60_000);
  deps.logger.warn(
    { payoutId: p._id, part: part.index, failures, retryInMs: delay, err: (err as Error).message },
    'Daraja could not be asked; payout step retried later',
  );
  await transition(
    deps.store,
    p._id,
    (q) => {
      const current = partOf(q, part.index);
      return current && current.phase === part.phase && current.attempts === part.attempts
        ? { parts: { [part.index]: { sendFailures: failures } } }
        : null;
    },
    now,
  );
  return { kind: 'delay', until: now.getTime() + delay };
}
