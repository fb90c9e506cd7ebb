import { AppError } from '@parametric/http';
import type { Logger } from '@parametric/logger';
import { createWorker, type QueueWorker, type RedisConnection } from '@parametric/queue';
import { DelayedError, UnrecoverableError } from 'bullmq';
import { type AttemptDeps, type OriginateDeps, originatePayout, runPayoutAttempt } from './domain';

interface WorkerBase {
  connection: RedisConnection;
  prefix: string;
  logger: Logger;
}

/**
 * `payout-originations`: one payout per determination. A Tier 1 policy (or anything else the
 * domain refuses as a client error) fails the job unrecoverably with an error log and pays
 * nothing; no current exchange rate or an unreachable policy service is retried by BullMQ.
 */
export function startOriginationWorker(
  options: WorkerBase & { deps: OriginateDeps; onOriginated(): void },
): QueueWorker<'payout-originations'> {
  const { logger } = options;
  return createWorker(
    'payout-originations',
    async (payload) => {
      try {
        const { created, payout } = await originatePayout(payload, options.deps);
        if (created) {
          logger.info(
            { payoutId: payout._id, determinationId: payload.determinationId },
            'payout originated',
          );
          options.onOriginated();
        }
      } catch (err) {
        if (err instanceof AppError && err.status < 500) {
          logger.error(
            {
              determinationId: payload.determinationId,
              policyId: payload.policyId,
              code: err.code,
              err: err.message,
            },
            'payout origination refused: nothing will be paid',
          );
          throw new UnrecoverableError(`${err.code}: ${err.message}`);
        }
        logger.warn(
          { determinationId: payload.determinationId, err: (err as Error).message },
          'payout origination retried later',
        );
        throw err;
      }
    },
    {
      connection: options.connection,
      prefix: options.prefix,
      onError: (err) => logger.warn({ err: err.message }, 'payout-originations worker: Redis error'),
    },
  );
}

/** `payout-attempts`: B2C sends and Transaction Status checks, rate-limited to what Daraja allows. */
export function startAttemptWorker(
  options: WorkerBase & { deps: AttemptDeps; concurrency: number; maxPerSecond: number; onChanged(): void },
): QueueWorker<'payout-attempts'> {
  const { logger } = options;
  return createWorker(
    'payout-attempts',
    async ({ payoutId }, job, token) => {
      const step = await runPayoutAttempt(payoutId, options.deps);
      options.onChanged();
      if (step.kind === 'delay') {
        await job.moveToDelayed(step.until, token);
        throw new DelayedError();
      }
    },
    {
      connection: options.connection,
      prefix: options.prefix,
      concurrency: options.concurrency,
      limiter: { max: options.maxPerSecond, duration: 1000 },
      onError: (err) => logger.warn({ err: err.message }, 'payout-attempts worker: Redis error'),
    },
  );
}
