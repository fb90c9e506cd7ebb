import type { Logger } from '@parametric/logger';
import { createWorker, type Producer, type QueueWorker, type RedisConnection } from '@parametric/queue';
import type { Clock } from './clock';
import { type ConfirmDeps, reconcilePremiums } from './premiums/confirmation';

export interface PaymentSweepOptions {
  confirm: Omit<ConfirmDeps, 'now'>;
  reconcileAfterSeconds: number;
  sweeps: Producer<'payment-sweeps'>;
  connection: RedisConnection;
  prefix: string;
  intervalMs: number;
  logger: Logger;
  clock: Clock;
  onResolved(): void;
}

/** Schedules the reconciliation sweep (idempotent across replicas) and runs it as it comes due. */
export async function startPaymentSweeps(
  options: PaymentSweepOptions,
): Promise<QueueWorker<'payment-sweeps'>> {
  const { logger } = options;
  await options.sweeps.schedule('reconcile-premiums', options.intervalMs, { task: 'reconcile-premiums' });
  return createWorker(
    'payment-sweeps',
    async () => {
      const { resolved, stillPending } = await reconcilePremiums(
        { ...options.confirm, now: options.clock() },
        options.reconcileAfterSeconds,
      );
      if (resolved > 0) {
        logger.info({ resolved, stillPending }, 'premium payments reconciled by STK query');
        options.onResolved();
      }
    },
    {
      connection: options.connection,
      prefix: options.prefix,
      onError: (err) => logger.warn({ err: err.message }, 'payment-sweeps worker: Redis error'),
    },
  );
}
