import type { Logger } from '@parametric/logger';
import type { Sweep, TaskOf } from '@parametric/queue';
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
  logger: Logger;
  clock: Clock;
}

/**
 * The payments sweeps (scheduled and run by `startSweeps` of libs/queue, through the service's
 * declaration): premium reconciliation by STK query, and the origination of the payouts their
 * jobs lost or gave up on.
 */
export function paymentSweeps(options: PaymentSweepOptions): Record<TaskOf<'payment-sweeps'>, Sweep> {
  const { logger } = options;
  return {
    'reconcile-premiums': {
      everyMs: options.reconcileEveryMs,
      run: async () => {
        const { resolved, stillPending } = await reconcilePremiums(
          { ...options.confirm, now: options.clock() },
          options.reconcileAfterSeconds,
        );
        if (resolved > 0) logger.info({ resolved, stillPending }, 'premium payments reconciled by STK query');
      },
    },
    'originate-payouts': {
      everyMs: options.originateEveryMs,
      run: async () => {
        await sweepOriginations(options.originations, options.clock());
      },
    },
  };
}
