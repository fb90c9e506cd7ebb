import { AppError } from '@parametric/http';
import type { Logger } from '@parametric/logger';
import { scopedTo } from '@parametric/mongo';
import { createWorker, type QueueWorker, type RedisConnection } from '@parametric/queue';
import { DelayedError, UnrecoverableError } from 'bullmq';
import { type Clock, systemClock } from '../clock';
import type { Activator } from './activation';
import type { PolicyModel } from './model';

export interface ActivationWorkerOptions {
  /**
   * Across organizations (`acrossOrganizations`): the worker serves every organization's
   * payments, and binds each job's work to the organization the job names.
   */
  policies: PolicyModel;
  activator: Activator;
  connection: RedisConnection;
  prefix: string;
  concurrency: number;
  retryBaseMs: number;
  retryMaxMs: number;
  /** A dead worker's activation is picked up again after about this long. */
  lockDurationMs?: number;
  logger: Logger;
  clock?: Clock;
}

/** Delay before the next try after `failures` chain failures in a row: doubling, capped. */
export function activationRetryDelay(failures: number, baseMs: number, maxMs: number): number {
  return Math.min(maxMs, baseMs * 2 ** Math.min(Math.max(failures - 1, 0), 30));
}

/**
 * Tier 2 activation: the premium has been received, so the policy must end up on chain. A chain
 * failure never fails the job: it is put back with a capped, doubling delay, and the count and
 * last error are kept on the policy for the status view and ops. Anything a retry cannot fix
 * (unknown policy, wrong tier, cancelled) fails the job for good and is logged as an error,
 * because a paid premium then needs a person.
 */
export function startActivationWorker(options: ActivationWorkerOptions): QueueWorker<'policy-activations'> {
  const { policies, activator, logger } = options;
  const now = options.clock ?? systemClock;

  return createWorker(
    'policy-activations',
    async ({ policyId, organizationId, paymentId }, job, token) => {
      // The job names its organization; everything it does stays within that organization.
      const scoped = scopedTo(policies, organizationId);
      // Recorded first, so the requeue sweep finds this policy even if Redis loses the job. Only
      // for a pending Tier 2 policy: anything else is refused below and must not be re-queued.
      await scoped.updateOne(
        {
          _id: policyId,
          status: 'PENDING',
          settlementMode: 'DETERMINATION_AND_SETTLEMENT',
          activationRequestedAt: null,
        },
        { $set: { activationRequestedAt: now(), premiumPaid: true, premiumReference: paymentId } },
      );
      try {
        const { activatedNow } = await activator.activate(scoped, {
          policyId,
          via: 'PAYMENT',
          premiumReference: paymentId,
        });
        if (activatedNow) logger.info({ policyId, organizationId }, 'policy activated after payment');
      } catch (err) {
        if (!(err instanceof AppError)) throw err; // MongoDB trouble and the like: BullMQ's own retries
        if (err.code !== 'BLOCKCHAIN_ERROR') {
          logger.error(
            { policyId, organizationId, paymentId, code: err.code, reason: err.message },
            'paid policy cannot be activated: needs ops attention',
          );
          throw new UnrecoverableError(`${err.code}: ${err.message}`);
        }
        const updated = await scoped.findOneAndUpdate(
          { _id: policyId, status: 'PENDING' },
          {
            $inc: { activationFailures: 1 },
            $set: { lastActivationError: err.message, lastActivationAttemptAt: now() },
          },
        );
        const failures = updated?.activationFailures ?? 1;
        const delay = activationRetryDelay(failures, options.retryBaseMs, options.retryMaxMs);
        logger.warn(
          { policyId, organizationId, failures, retryInMs: delay, reason: err.message },
          'policy activation failed on chain; retrying later',
        );
        await job.moveToDelayed(Date.now() + delay, token);
        throw new DelayedError();
      }
    },
    {
      connection: options.connection,
      prefix: options.prefix,
      concurrency: options.concurrency,
      lockDurationMs: options.lockDurationMs,
      onError: (err) => logger.warn({ err: err.message }, 'policy-activations worker: Redis error'),
    },
  );
}
