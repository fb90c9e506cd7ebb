import { timingSafeEqual } from 'node:crypto';
import type { Logger } from '@parametric/logger';
import { type Request, type Response, Router } from 'express';
import type { Clock } from '../clock';
import { type ConfirmDeps, onStkCallback, type StkCallback } from '../premiums/confirmation';
import type { AllPayments } from '../repositories';

export interface CallbackDeps {
  data: AllPayments;
  token: string;
  confirm: Omit<ConfirmDeps, 'now' | 'data'>;
  parseStk(body: unknown): StkCallback;
  now: Clock;
  logger: Logger;
  /** After a callback resolved a transaction, so its jobs leave at once. */
  onResolved(): void;
}

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
    const record = (outcome: string, transactionId: string | null = null) =>
      deps.data.callbacks.create({ kind: 'STK', receivedAt, body: req.body ?? null, outcome, transactionId });
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
    await record(outcome, transactionId);
    if (outcome === 'SUCCEEDED' || outcome === 'FAILED') deps.onResolved();
    if (outcome === 'UNKNOWN_CHECKOUT' || outcome === 'AMOUNT_MISMATCH') {
      req.log.warn({ checkoutRequestId: cb.checkoutRequestId, outcome }, 'STK callback ignored');
    }
    res.json(ACCEPTED);
  });
  return router;
}
