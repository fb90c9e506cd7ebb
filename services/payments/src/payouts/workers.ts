import { AppError } from '@parametric/http';
import type { Logger } from '@parametric/logger';
import { createWorker, type QueueWorker, type RedisConnection } from '@parametric/queue';
import { DelayedError, type Job, UnrecoverableError } from 'bullmq';
import { type AttemptDeps, runPayoutAttempt } from './attempt';
import { type OriginateDeps, originatePayout } from './originate';

interface WorkerBase {
  connection: RedisConnection;
  prefix: string;
  logger: Logger;
}

/** Longest wait between two tries of one origination: retries keep coming while an outage lasts. */
export const ORIGINATION_MAX_DELAY_MS = 5 * 60_000;

/**
 * When a job that has existed `ageMs` tries again: after as long again as it has already waited
 * (1 s at first, so the waits double), at most `ORIGINATION_MAX_DELAY_MS`.
 */
export const originationRetryDelay = (ageMs: number) =>
  Math.min(Math.max(1_000, ageMs), ORIGINATION_MAX_DELAY_MS);

/**
 * `payout-originations`: one payout per determination. A determination that may not be paid
 * (Tier 1, unattributed, nothing owed) fails the job unrecoverably with an error log. Anything
 * that may pass (no current or plausible exchange rate, a service that cannot be read, MongoDB)
 * is tried again with a growing delay for `retryBudgetMs` (`PAYOUT_ORIGINATION_RETRY_HOURS`),
 * far longer than any breaker stays open; after that the job fails and the origination sweep
 * (sweep.ts), which never gives up, originates the payout once it can.
 */
export function startOriginationWorker(
  options: WorkerBase & { deps: OriginateDeps; retryBudgetMs: number },
): QueueWorker<'payout-originations'> {
  const { logger } = options;
  return createWorker(
    'payout-originations',
    async (payload, job, token) => {
      try {
        const { created, payout } = await originatePayout(payload.determinationId, options.deps);
        if (created) {
          logger.info(
            { payoutId: payout._id, determinationId: payload.determinationId, status: payout.status },
            'payout originated',
          );
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
        await retryLater(job, token, options.retryBudgetMs, err as Error, logger);
      }
    },
    {
      connection: options.connection,
      prefix: options.prefix,
      onError: (err) => logger.warn({ err: err.message }, 'payout-originations worker: Redis error'),
    },
  );
}

async function retryLater(job: Job, token: string | undefined, budgetMs: number, err: Error, logger: Logger) {
  const ageMs = Date.now() - job.timestamp;
  const determinationId = (job.data as { determinationId?: string }).determinationId;
  if (ageMs >= budgetMs || !token) {
    logger.error(
      { determinationId, ageMs, err: err.message },
      'payout origination still failing after its retry budget: left to the origination sweep',
    );
    throw err;
  }
  const delayMs = originationRetryDelay(ageMs);
  logger.warn({ determinationId, retryInMs: delayMs, err: err.message }, 'payout origination retried later');
  await job.moveToDelayed(Date.now() + delayMs, token);
  throw new DelayedError();
}

/**
 * BullMQ's limiter for `maxPerSecond` Daraja requests: one job start per `1000 / maxPerSecond` ms
 * rather than `maxPerSecond` starts per second. BullMQ counts starts in fixed windows, so
 * `maxPerSecond` per 1000 ms lets a burst of twice that through across a window's edge, and
 * Daraja's spike arrest counts the requests of the last second: the excess is refused
 * (`THROTTLED`) and backed off (attempt.ts), which slows the very payouts it was meant to speed
 * (docs/performance.md, "Tier 2 against Daraja's spike arrest"). Evenly spaced starts keep every
 * second at the limit, give or take one start at a window's edge.
 */
export function darajaPacing(maxPerSecond: number): { max: number; duration: number } {
  return { max: 1, duration: Math.ceil(1000 / maxPerSecond) };
}

/** `payout-attempts`: B2C sends and Transaction Status checks, rate-limited to what Daraja allows. */
export function startAttemptWorker(
  options: WorkerBase & { deps: AttemptDeps; concurrency: number; maxPerSecond: number },
): QueueWorker<'payout-attempts'> {
  const { logger } = options;
  return createWorker(
    'payout-attempts',
    async ({ payoutId, part }, job, token) => {
      const step = await runPayoutAttempt(payoutId, part, options.deps);
      if (step.kind === 'delay') {
        await job.moveToDelayed(step.until, token);
        throw new DelayedError();
      }
    },
    {
      connection: options.connection,
      prefix: options.prefix,
      concurrency: options.concurrency,
      limiter: darajaPacing(options.maxPerSecond),
      onError: (err) => logger.warn({ err: err.message }, 'payout-attempts worker: Redis error'),
    },
  );
}
