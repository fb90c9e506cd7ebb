import type { Logger } from '@parametric/logger';
import { minorFromNumber } from '@parametric/money';
import {
  type B2cQueueTimeout,
  type B2cResult,
  isRetriableB2c,
  type TransactionStatusResult,
} from '../provider';
import { reasonOf } from './attempt';
import { ledgerRow, recordAfter } from './ledger';
import type { PartDoc, PayoutDoc } from './model';
import type { PayoutLedger, PayoutStore } from './store';
import { attemptJob, completedStep, failedPart, partOf, transition } from './transitions';

export interface CallbackOutcome {
  outcome: string;
  payoutId: string | null;
}

export interface PayoutCallbackDeps {
  store: PayoutStore;
  ledger: PayoutLedger;
  settings: { retryBaseMs: number };
  now: Date;
  logger: Logger;
}

/** Daraja's amount (a JSON number of KES) is the part's amount in minor units, exactly. */
function sameAmount(amount: number, amountMinor: string, exponent: number): boolean {
  try {
    return minorFromNumber(amount, exponent) === BigInt(amountMinor);
  } catch {
    return false;
  }
}

const UNKNOWN: CallbackOutcome = { outcome: 'UNKNOWN_PAYOUT', payoutId: null };

/** The part that used this OriginatorConversationID. */
const partUsing = (p: PayoutDoc, ocid: string): PartDoc | undefined =>
  p.parts.find((part) => part.originatorConversationIds.includes(ocid));

/** The part whose Transaction Status query has this id. */
const partAsking = (p: PayoutDoc, queryOcid: string): PartDoc | undefined =>
  p.parts.find((part) => part.statusQuery?.queryOcid === queryOcid);

/**
 * A part was paid (a Result `0`, or Transaction Status `Completed`): it completes with the
 * receipt, and the next part starts. A success for a part we had FAILED completes it too: the
 * farmer was paid, and the partner is told so by `payout.completed` (an error log says it
 * happened). A second, different receipt for a part already paid is a double payment: nothing
 * changes, ops are told.
 */
async function paid(
  p: PayoutDoc,
  part: PartDoc,
  receipt: string,
  deps: PayoutCallbackDeps,
): Promise<CallbackOutcome> {
  if (part.status === 'FAILED') {
    deps.logger.error(
      { payoutId: p._id, part: part.index, receipt },
      'a payout part reported FAILED was paid after all: completing it',
    );
  }
  const done = await transition(
    deps.store,
    p._id,
    (q) => {
      const current = partOf(q, part.index);
      return current ? completedStep(q, current, receipt, deps.now) : null;
    },
    deps.now,
  );
  if (done) return { outcome: 'COMPLETED', payoutId: p._id };
  const stored = partOf((await deps.store.get(p._id)) ?? p, part.index);
  if (stored?.status === 'COMPLETED' && stored.receipt !== receipt) {
    deps.logger.error(
      { payoutId: p._id, part: part.index, receipt, previous: stored.receipt },
      'a second B2C payment of a payout part completed: paid twice, needs ops',
    );
    return { outcome: 'PAID_TWICE', payoutId: p._id };
  }
  return { outcome: 'DUPLICATE', payoutId: p._id };
}

/** A B2C Result: completes the part, fails it, or schedules its next attempt. Duplicates change nothing. */
export async function onB2cResult(r: B2cResult, deps: PayoutCallbackDeps): Promise<CallbackOutcome> {
  const ocid = r.originatorConversationId;
  const p = await deps.store.byOriginatorConversationId(ocid);
  const part = p ? partUsing(p, ocid) : undefined;
  if (!p || !part) return UNKNOWN;
  const receipt = r.rawResultCode === '0' ? (r.receipt ?? r.transactionId) : null;
  // An unsigned callback naming another amount than the part's is not taken as its payment:
  // nothing changes, ops are told, and the Result wait runs out into a Transaction Status query.
  const mismatch =
    receipt !== null && r.amount !== undefined && !sameAmount(r.amount, part.amountMinor, p.exponent);
  if (mismatch) {
    deps.logger.error(
      { payoutId: p._id, part: part.index, ocid, amount: r.amount, expected: part.amountMinor },
      'B2C Result of another amount than the payout part: ignored, needs ops',
    );
  }
  const outcome = mismatch
    ? { outcome: 'AMOUNT_MISMATCH', payoutId: p._id }
    : receipt
      ? await paid(p, part, receipt, deps)
      : await notPaid(p, part, r, deps);
  await recordAfter(
    deps.ledger,
    ledgerRow(p, part, 'B2C_RESULT', ocid, deps.now, {
      conversationId: r.conversationId ?? null,
      resultCode: r.rawResultCode,
      resultDesc: r.resultDesc,
      receipt,
    }),
    deps.logger,
  );
  return outcome;
}

/** A Result that paid nothing: the part fails (permanent code, or no attempts left) or retries after the backoff. */
async function notPaid(
  p: PayoutDoc,
  part: PartDoc,
  r: B2cResult,
  deps: PayoutCallbackDeps,
): Promise<CallbackOutcome> {
  const ocid = r.originatorConversationId;
  const moved = await transition(
    deps.store,
    p._id,
    (q) => {
      const current = partOf(q, part.index);
      if (
        current?.originatorConversationId !== ocid ||
        (current.phase !== 'AWAITING_RESULT' && current.phase !== 'SENDING')
      ) {
        return null;
      }
      const result = { lastResultCode: r.rawResultCode, lastResultDesc: r.resultDesc };
      if (!isRetriableB2c(r.rawResultCode) || current.attempts >= current.attemptLimit) {
        return { parts: { [part.index]: failedPart(reasonOf(r.rawResultCode), result) } };
      }
      return {
        parts: {
          [part.index]: {
            ...result,
            status: 'PROCESSING',
            phase: 'RETRY_WAIT',
            nextAttemptAt: new Date(
              deps.now.getTime() + deps.settings.retryBaseMs * 2 ** (current.attempts - 1),
            ),
            statusQuery: null,
          },
        },
        jobs: [attemptJob(q._id, part.index, current.attempts + 1)],
      };
    },
    deps.now,
  );
  if (!moved) return { outcome: 'DUPLICATE', payoutId: p._id };
  return {
    outcome: partOf(moved, part.index)?.status === 'FAILED' ? 'FAILED' : 'RETRY_SCHEDULED',
    payoutId: p._id,
  };
}

/** A QueueTimeOut: the outcome is unknown, never failed: Transaction Status is asked before anything else is sent. */
export async function onB2cQueueTimeout(
  t: B2cQueueTimeout,
  deps: PayoutCallbackDeps,
): Promise<CallbackOutcome> {
  const ocid = t.originatorConversationId;
  const p = await deps.store.byOriginatorConversationId(ocid);
  const part = p ? partUsing(p, ocid) : undefined;
  if (!p || !part) return UNKNOWN;
  const moved = await transition(
    deps.store,
    p._id,
    (q) => {
      const current = partOf(q, part.index);
      return current?.originatorConversationId === ocid &&
        (current.phase === 'AWAITING_RESULT' || current.phase === 'SENDING')
        ? {
            parts: {
              [part.index]: {
                status: 'PROCESSING',
                phase: 'RETRY_WAIT',
                nextAttemptAt: null,
                statusQuery: null,
                lastResultDesc: t.resultDesc ?? 'QueueTimeOut',
              },
            },
            jobs: [attemptJob(q._id, part.index, current.attempts + 1)],
          }
        : null;
    },
    deps.now,
  );
  await recordAfter(
    deps.ledger,
    ledgerRow(p, part, 'B2C_QUEUE_TIMEOUT', ocid, deps.now, {
      conversationId: t.conversationId ?? null,
      resultDesc: t.resultDesc ?? 'QueueTimeOut',
    }),
    deps.logger,
  );
  return { outcome: moved ? 'STATUS_TO_ASK' : 'IGNORED', payoutId: p._id };
}

/** A Transaction Status Result: Completed completes the part (paid once, with the receipt); anything else lets its next attempt go. */
export async function onStatusResult(
  r: TransactionStatusResult,
  deps: PayoutCallbackDeps,
): Promise<CallbackOutcome> {
  const queryOcid = r.originatorConversationId;
  let p = await deps.store.byStatusQuery(queryOcid);
  let part = p ? partAsking(p, queryOcid) : undefined;
  const askedAbout = r.transaction?.originatorConversationId;
  if ((!p || !part) && askedAbout) {
    p = await deps.store.byOriginatorConversationId(askedAbout);
    part = p ? partUsing(p, askedAbout) : undefined;
  }
  if (!p || !part) return UNKNOWN;
  const completed = r.rawResultCode === '0' && r.transaction?.status?.toLowerCase() === 'completed';
  const receipt = completed ? (r.transaction?.receipt ?? r.transactionId) : null;
  let outcome: CallbackOutcome;
  if (receipt) {
    outcome = await paid(p, part, receipt, deps);
  } else {
    const moved = await transition(
      deps.store,
      p._id,
      (q) => {
        const current = partOf(q, part.index);
        const sq = current?.statusQuery;
        return sq && sq.answer === null && sq.queryOcid === queryOcid
          ? { parts: { [part.index]: { statusQuery: { ...sq, answer: 'NOT_COMPLETED' } } } }
          : null;
      },
      deps.now,
    );
    outcome = { outcome: moved ? 'NOT_COMPLETED' : 'IGNORED', payoutId: p._id };
  }
  await recordAfter(
    deps.ledger,
    ledgerRow(p, part, 'STATUS_RESULT', askedAbout ?? part.statusQuery?.forOcid ?? queryOcid, deps.now, {
      conversationId: r.conversationId ?? null,
      resultCode: r.rawResultCode,
      resultDesc: r.transaction?.status ? `${r.resultDesc} (${r.transaction.status})` : r.resultDesc,
      receipt,
    }),
    deps.logger,
  );
  return outcome;
}

/** A Transaction Status query that timed out in Daraja's queue: no answer; the attempt asks again later. */
export async function onStatusTimeout(
  t: B2cQueueTimeout,
  deps: PayoutCallbackDeps,
): Promise<CallbackOutcome> {
  const p = await deps.store.byStatusQuery(t.originatorConversationId);
  const part = p ? partAsking(p, t.originatorConversationId) : undefined;
  if (!p || !part) return UNKNOWN;
  await recordAfter(
    deps.ledger,
    ledgerRow(p, part, 'STATUS_TIMEOUT', part.statusQuery?.forOcid ?? t.originatorConversationId, deps.now, {
      conversationId: t.conversationId ?? null,
      resultDesc: t.resultDesc ?? 'QueueTimeOut',
    }),
    deps.logger,
  );
  return { outcome: 'STATUS_TIMED_OUT', payoutId: p._id };
}
