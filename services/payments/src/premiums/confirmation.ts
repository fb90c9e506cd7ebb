import type { PAYMENT_FAILURE_REASONS } from '@parametric/contracts';
import type { PremiumState } from '../metrics';
import { stableReason } from '../provider';
import type { AllPayments } from '../repositories';
import { type ByEnvironment, providerOf } from '../sandbox';
import { resolvePremium } from './domain';
import type { TransactionDoc } from './model';
import type { PremiumProvider } from './provider';

type FailureReason = (typeof PAYMENT_FAILURE_REASONS)[number];

/** The stable reason of an STK result code (the provider client's mapping). */
export function stkFailureReason(resultCode: number | string): FailureReason {
  return stableReason(resultCode, 'STK') ?? 'PROVIDER_ERROR';
}

/** An STK callback, parsed (the provider client's `parseStkCallback`). */
export interface StkCallback {
  checkoutRequestId: string;
  resultCode: number;
  resultDesc: string;
  amount?: number;
  receipt?: string;
}

export interface ConfirmDeps {
  data: Pick<AllPayments, 'transactions'>;
  /** Each environment's Daraja: a premium is confirmed through the one that prompted it. */
  providers: ByEnvironment<PremiumProvider>;
  /** Ask the provider (STK query) before crediting a success callback. */
  confirmWithQuery: boolean;
  now: Date;
  /** Counts each resolution this service commits (`premium_collections_total`). */
  onPremium?: (state: PremiumState) => void;
}

/** What became of a callback: kept with the callback as received, for ops. */
export type CallbackOutcome =
  | 'UNKNOWN_CHECKOUT'
  | 'ALREADY_RESOLVED'
  | 'AMOUNT_MISMATCH'
  | 'FAILED'
  | 'SUCCEEDED'
  | 'AWAITING_CONFIRMATION';

/**
 * An STK callback. Daraja signs nothing, so it is only a hint: the transaction must exist and
 * be pending, the amount must be ours, and (by default) the provider must confirm the result
 * by STK query before the premium is credited. A duplicate changes nothing.
 */
export async function onStkCallback(
  cb: StkCallback,
  deps: ConfirmDeps,
): Promise<{ outcome: CallbackOutcome; transactionId: string | null }> {
  const t = await deps.data.transactions
    .findOne({ checkoutRequestId: cb.checkoutRequestId })
    .lean<TransactionDoc>();
  if (!t) return { outcome: 'UNKNOWN_CHECKOUT', transactionId: null };
  const transactionId = t._id;
  if (t.status !== 'PENDING') {
    await keepLateReceipt(t, cb, deps);
    return { outcome: 'ALREADY_RESOLVED', transactionId };
  }
  if (cb.resultCode === 0 && cb.amount !== undefined && BigInt(cb.amount) * 100n !== BigInt(t.amountMinor)) {
    return { outcome: 'AMOUNT_MISMATCH', transactionId };
  }
  await deps.data.transactions.updateOne(
    { _id: transactionId, status: 'PENDING' },
    { $set: { callbackReceivedAt: deps.now, ...(cb.receipt ? { mpesaReceiptNumber: cb.receipt } : {}) } },
  );
  if (cb.resultCode !== 0) {
    const failed = await resolvePremium(
      deps.data,
      transactionId,
      { succeeded: false, reason: stkFailureReason(cb.resultCode), resultCode: cb.resultCode },
      'CALLBACK',
      deps.now,
      deps.onPremium,
    );
    return { outcome: failed ? 'FAILED' : 'ALREADY_RESOLVED', transactionId };
  }
  if (!deps.confirmWithQuery) {
    const credited = await resolvePremium(
      deps.data,
      transactionId,
      { succeeded: true, receipt: cb.receipt ?? null, resultCode: 0 },
      'CALLBACK',
      deps.now,
      deps.onPremium,
    );
    return { outcome: credited ? 'SUCCEEDED' : 'ALREADY_RESOLVED', transactionId };
  }
  return {
    outcome: await confirm({ ...t, mpesaReceiptNumber: cb.receipt ?? null }, 'CALLBACK', deps),
    transactionId,
  };
}

/**
 * The reconciliation sweep credits by STK query, which carries no receipt number: when the
 * success callback comes after all (late, or re-sent after an outage), its receipt is kept, so
 * the partner sees the SUCCEEDED payment with its M-Pesa receipt. Nothing else changes.
 */
async function keepLateReceipt(t: TransactionDoc, cb: StkCallback, deps: ConfirmDeps): Promise<void> {
  if (t.status !== 'SUCCEEDED' || t.mpesaReceiptNumber || cb.resultCode !== 0 || !cb.receipt) return;
  if (cb.amount !== undefined && BigInt(cb.amount) * 100n !== BigInt(t.amountMinor)) return;
  await deps.data.transactions.updateOne(
    { _id: t._id, status: 'SUCCEEDED', mpesaReceiptNumber: null },
    { $set: { mpesaReceiptNumber: cb.receipt, callbackReceivedAt: deps.now } },
  );
}

/**
 * Asks the provider how a prompt ended and resolves the transaction accordingly; a prompt the
 * provider still processes, or a provider that cannot be asked, stays pending for the sweep.
 */
export async function confirm(
  t: TransactionDoc,
  by: 'CALLBACK' | 'RECONCILIATION',
  deps: ConfirmDeps,
): Promise<CallbackOutcome> {
  const provider = providerOf(deps.providers, t.environment);
  // No sandbox Daraja any more (its configuration removed since the prompt): left for the sweep.
  if (!t.checkoutRequestId || !provider) return 'AWAITING_CONFIRMATION';
  let answer: Awaited<ReturnType<PremiumProvider['stkQuery']>>;
  try {
    answer = await provider.stkQuery(t.checkoutRequestId);
  } catch {
    return 'AWAITING_CONFIRMATION';
  }
  if (answer.state === 'PENDING') return 'AWAITING_CONFIRMATION';
  const outcome =
    answer.resultCode === 0
      ? ({ succeeded: true, receipt: t.mpesaReceiptNumber ?? null, resultCode: 0 } as const)
      : ({
          succeeded: false,
          reason: stkFailureReason(answer.resultCode),
          resultCode: answer.resultCode,
        } as const);
  const resolved = await resolvePremium(deps.data, t._id, outcome, by, deps.now, deps.onPremium);
  if (!resolved) return 'ALREADY_RESOLVED';
  return outcome.succeeded ? 'SUCCEEDED' : 'FAILED';
}

/**
 * The reconciliation sweep: every prompt still pending `afterSeconds` after it was sent (no
 * callback, or one we could not confirm) is resolved by STK query; a transaction whose prompt was
 * never sent (a crash between the insert and the push) is failed so the partner can try again.
 */
export async function reconcilePremiums(
  deps: ConfirmDeps,
  afterSeconds: number,
): Promise<{ resolved: number; stillPending: number }> {
  const before = new Date(deps.now.getTime() - afterSeconds * 1000);
  const stale = await deps.data.transactions
    .find({ status: 'PENDING', updatedAt: { $lte: before } })
    .sort({ updatedAt: 1 })
    .limit(500)
    .lean<TransactionDoc[]>();
  let resolved = 0;
  for (const t of stale) {
    if (!t.checkoutRequestId) {
      const failed = await resolvePremium(
        deps.data,
        t._id,
        { succeeded: false, reason: 'PROMPT_NOT_SENT', resultCode: null },
        'RECONCILIATION',
        deps.now,
        deps.onPremium,
      );
      if (failed) resolved++;
      continue;
    }
    const outcome = await confirm(t, 'RECONCILIATION', deps);
    if (outcome === 'SUCCEEDED' || outcome === 'FAILED') resolved++;
  }
  return { resolved, stillPending: stale.length - resolved };
}

/**
 * A callback can overtake our own record of the prompt (the push answered, the callback came,
 * and only then did we store the CheckoutRequestID): it was kept as UNKNOWN_CHECKOUT. Once the id
 * is stored, such callbacks are taken up as if they had just arrived; each is claimed first, so
 * two takers cannot both act on it. The reconciliation sweep would find the payment anyway, later.
 */
export async function matchEarlyCallbacks(
  checkoutRequestId: string,
  deps: ConfirmDeps & {
    data: Pick<AllPayments, 'transactions' | 'callbacks'>;
    parseStk(body: unknown): StkCallback;
  },
): Promise<CallbackOutcome[]> {
  const early = await deps.data.callbacks
    .find({ kind: 'STK', checkoutRequestId, outcome: 'UNKNOWN_CHECKOUT' })
    .sort({ receivedAt: 1 })
    .lean();
  const outcomes: CallbackOutcome[] = [];
  for (const callback of early) {
    const claimed = await deps.data.callbacks.updateOne(
      { _id: callback._id, outcome: 'UNKNOWN_CHECKOUT' },
      { $set: { outcome: 'MATCHED_LATE' } },
    );
    if (claimed.modifiedCount !== 1) continue;
    const { outcome, transactionId } = await onStkCallback(deps.parseStk(callback.body), deps);
    await deps.data.callbacks.updateOne({ _id: callback._id }, { $set: { outcome, transactionId } });
    outcomes.push(outcome);
  }
  return outcomes;
}
