import type { Logger } from '@parametric/logger';
import { type Producer, type QueueWorker, type RedisConnection, startSweeps } from '@parametric/queue';
import type { Clock } from './clock';
import { type OriginationSweepDeps, sweepOriginations } from './payouts/sweep';
import { type ConfirmDeps, reconcilePremiums } from './premiums/confirmation';

export interface PaymentSweepOptions {
  confirm: Omit<ConfirmDeps, 'now'>;
  reconcileAfterSeconds: number;
  /** How often premiums are reconciled (`PAYMENTS_RECONCILE_SWEEP_SECONDS`). */
  reconcileEveryMs: number;
  originations: OriginationSweepDeps;
  /** How often payable determinations are checked for a payout (`PAYOUT_ORIGINATION_SWEEP_SECONDS`). */
  originateEveryMs: number;
  sweeps: Producer<'payment-sweeps'>;
  connection: RedisConnection;
  prefix: string;
  logger: Logger;
  clock: Clock;
  /** After a sweep recorded events or jobs (premiums resolved, payouts originated), so they leave at once. */
  onChanged(): void;
}

/**
 * The payments sweeps: premium reconciliation by STK query, and the origination of the payouts
 * their jobs lost or gave up on.
 */
export function startPaymentSweeps(options: PaymentSweepOptions): Promise<QueueWorker<'payment-sweeps'>> {
  const { logger } = options;
  return startSweeps('payment-sweeps', {
    producer: options.sweeps,
    connection: options.connection,
    prefix: options.prefix,
    tasks: {
      'reconcile-premiums': {
        everyMs: options.reconcileEveryMs,
        run: async () => {
          const { resolved, stillPending } = await reconcilePremiums(
            { ...options.confirm, now: options.clock() },
            options.reconcileAfterSeconds,
          );
          if (resolved > 0) {
            logger.info({ resolved, stillPending }, 'premium payments reconciled by STK query');
            options.onChanged();
          }
        },
      },
      'originate-payouts': {
        everyMs: options.originateEveryMs,
        run: async () => {
          const { originated } = await sweepOriginations(options.originations, options.clock());
          if (originated > 0) options.onChanged();
        },
      },
    },
    onScheduleError: (err) =>
      logger.warn({ err: err.message }, 'payment sweeps: could not renew the schedules'),
    onError: (err) => logger.warn({ err: err.message }, 'payment-sweeps worker: Redis error'),
  });
}
