import { timingSafeEqual } from 'node:crypto';
import type { Logger } from '@parametric/logger';
import { type Request, type Response, Router } from 'express';
import type { Clock } from '../clock';
import {
  type CallbackOutcome,
  onB2cQueueTimeout,
  onB2cResult,
  onStatusResult,
  onStatusTimeout,
  type PayoutCallbackDeps,
} from '../payouts/callbacks';
import { type ConfirmDeps, onStkCallback, type StkCallback } from '../premiums/confirmation';
import { parseB2cQueueTimeout, parseB2cResult, parseTransactionStatusResult } from '../provider';
import type { AllPayments } from '../repositories';

export interface CallbackDeps {
  data: AllPayments;
  token: string;
  confirm: Omit<ConfirmDeps, 'now' | 'data'>;
  parseStk(body: unknown): StkCallback;
  now: Clock;
  logger: Logger;
  /** Payouts' B2C and Transaction Status callbacks. */
  payouts: Omit<PayoutCallbackDeps, 'now' | 'logger'>;
}

type PayoutKind = 'B2C_RESULT' | 'B2C_TIMEOUT' | 'STATUS_RESULT' | 'STATUS_TIMEOUT';

/** What Daraja expects back, whatever we made of the callback (it retries nothing useful). */
const ACCEPTED = { ResultCode: 0, ResultDesc: 'Accepted' };

function sameToken(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * The provider's callbacks, on the callback listener (never behind a partner key). Daraja
 * signs nothing, so: a secret token in the path (compared in constant time), the body
 * validated, every callback recorded as received, and anything wrong logged and answered `200`
 * with nothing changed.
 */
export function callbackRoutes(deps: CallbackDeps): Router {
  const router = Router();
  router.post('/mpesa/:token/stk', async (req: Request, res: Response) => {
    const receivedAt = deps.now();
    const record = (
      outcome: string,
      transactionId: string | null = null,
      checkoutRequestId: string | null = null,
    ) =>
      deps.data.callbacks.create({
        kind: 'STK',
        receivedAt,
        body: req.body ?? null,
        outcome,
        transactionId,
        checkoutRequestId,
      });
    if (!sameToken(String(req.params.token), deps.token)) {
      req.log.warn('STK callback with a wrong path token: ignored');
      await record('REJECTED_TOKEN');
      res.json(ACCEPTED);
      return;
    }
    let cb: StkCallback;
    try {
      cb = deps.parseStk(req.body);
    } catch (err) {
      req.log.warn({ reason: (err as Error).message }, 'malformed STK callback: ignored');
      await record('MALFORMED');
      res.json(ACCEPTED);
      return;
    }
    const { outcome, transactionId } = await onStkCallback(cb, {
      ...deps.confirm,
      data: deps.data,
      now: receivedAt,
    });
    await record(outcome, transactionId, cb.checkoutRequestId);
    if (outcome === 'UNKNOWN_CHECKOUT' || outcome === 'AMOUNT_MISMATCH') {
      req.log.warn({ checkoutRequestId: cb.checkoutRequestId, outcome }, 'STK callback ignored');
    }
    res.json(ACCEPTED);
  });

  // Payouts: one handler shape for the four B2C / Transaction Status callbacks.
  const payoutCallback =
    <T>(
      kind: PayoutKind,
      parse: (body: unknown) => T,
      handle: (parsed: T, d: PayoutCallbackDeps) => Promise<CallbackOutcome>,
    ) =>
    async (req: Request, res: Response) => {
      const receivedAt = deps.now();
      const record = (outcome: string, transactionId: string | null = null) =>
        deps.data.callbacks.create({ kind, receivedAt, body: req.body ?? null, outcome, transactionId });
      if (!sameToken(String(req.params.token), deps.token)) {
        req.log.warn({ kind }, 'payout callback with a wrong path token: ignored');
        await record('REJECTED_TOKEN');
        res.json(ACCEPTED);
        return;
      }
      let parsed: T;
      try {
        parsed = parse(req.body);
      } catch (err) {
        req.log.warn({ kind, reason: (err as Error).message }, 'malformed payout callback: ignored');
        await record('MALFORMED');
        res.json(ACCEPTED);
        return;
      }
      const { outcome, payoutId } = await handle(parsed, {
        ...deps.payouts,
        now: receivedAt,
        logger: req.log,
      });
      await record(outcome, payoutId);
      if (outcome === 'UNKNOWN_PAYOUT')
        req.log.warn({ kind }, 'payout callback for no known payout: ignored');
      res.json(ACCEPTED);
    };
  router.post('/mpesa/:token/b2c/result', payoutCallback('B2C_RESULT', parseB2cResult, onB2cResult));
  router.post(
    '/mpesa/:token/b2c/timeout',
    payoutCallback('B2C_TIMEOUT', parseB2cQueueTimeout, onB2cQueueTimeout),
  );
  router.post(
    '/mpesa/:token/status/result',
    payoutCallback('STATUS_RESULT', parseTransactionStatusResult, onStatusResult),
  );
  // A status query that timed out in Daraja's queue: no answer; the attempt asks again later.
  router.post(
    '/mpesa/:token/status/timeout',
    payoutCallback('STATUS_TIMEOUT', parseB2cQueueTimeout, onStatusTimeout),
  );
  return router;
}
