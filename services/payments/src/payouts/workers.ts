import { AppError } from '@parametric/http';
import type { Logger } from '@parametric/logger';
import {
  createPacer,
  createWorker,
  type Pacer,
  type QueueWorker,
  type RedisConnection,
} from '@parametric/queue';
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

/** The Redis key of Daraja's send schedule (under the queue prefix): one for every replica. */
export const DARAJA_PACING_KEY = 'pacing:daraja';

/**
 * The longest a job holds its lock waiting for its slot: a slot further away puts the job back,
 * delayed until about then. Only running jobs wait, so the waits are at most concurrency ×
 * replicas slots long; one second is about 20 slots at the default 20 a second.
 */
export const DARAJA_PACING_BOUND_MS = 1_000;

/**
 * How much longer than a second `maxPerSecond` slots span. Daraja counts requests as they arrive:
 * a request that leaves later after its slot than the one `maxPerSecond` slots on (a busy event
 * loop, a slow MongoDB write before it) would bring both into one second, and the later one is
 * refused, then retried a second or more later, stretching the run. Spread over a second's slots,
 * 50 ms is 2.5 ms a slot at 20 a second: at most 0.952 of the limit.
 */
export const DARAJA_SPARE_MS = 50;

/** How far apart Daraja's slots are at `maxPerSecond`. */
export const darajaIntervalMs = (maxPerSecond: number) => (1000 + DARAJA_SPARE_MS) / maxPerSecond;

/**
 * Daraja's pace for `payout-attempts`: right before each B2C send or Transaction Status check, the
 * job books the next slot of one schedule in Redis, `darajaIntervalMs` after the last, shared by
 * every replica (`createPacer`, libs/queue/src/pacer.ts), and the request waits for that slot
 * (`bookSlot` in attempt.ts). Daraja's spike arrest refuses a request when the last second
 * already holds the allowed number (`THROTTLED`, backed off in attempt.ts), so evenly spaced
 * requests keep every sliding second under the limit. BullMQ's limiter did the spacing before,
 * but it counted job starts, and a job it let through then waited for the worker's next fetch:
 * about 59 ms a start where 50 were allowed (docs/performance.md, "Tier 2 against Daraja's spike
 * arrest"). The jobs here are already fetched (the worker's concurrency), so each request leaves
 * on its slot; and a job that finds nothing to ask Daraja (a part already paid, a Transaction
 * Status answer still awaited) takes no slot.
 */
export function darajaPacer(options: {
  connection: RedisConnection;
  prefix: string;
  maxPerSecond: number;
}): Pacer {
  return createPacer({
    connection: options.connection,
    key: `${options.prefix}:${DARAJA_PACING_KEY}`,
    intervalMs: darajaIntervalMs(options.maxPerSecond),
    boundMs: DARAJA_PACING_BOUND_MS,
  });
}

/** No slot on Daraja's schedule within the bound: the job goes back delayed by `retryInMs`. */
export class NoDarajaSlot extends Error {
  constructor(readonly retryInMs: number) {
    super(`no Daraja slot within ${DARAJA_PACING_BOUND_MS} ms`);
    this.name = 'NoDarajaSlot';
  }
}

/** Books the next slot on Daraja's schedule and returns the wait for it; `NoDarajaSlot` if none is close. */
export async function bookSlotOf(pacer: Pacer): Promise<() => Promise<void>> {
  const slot = await pacer.take();
  // Back about when the schedule is half the bound away: other jobs book meanwhile.
  if (!slot.granted) throw new NoDarajaSlot(Math.ceil(slot.waitMs - DARAJA_PACING_BOUND_MS / 2));
  const at = performance.now() + slot.waitMs;
  return async () => {
    const wait = at - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  };
}

/**
 * Runs one `payout-attempts` job whose Daraja requests each book a slot (`bookSlot`). With
 * no slot within the bound, the job is put back delayed, holding neither its lock nor a slot.
 */
export async function runPaced<T>(
  pacer: Pacer,
  job: Job,
  token: string | undefined,
  run: (bookSlot: () => Promise<() => Promise<void>>) => Promise<T>,
): Promise<T> {
  try {
    return await run(() => bookSlotOf(pacer));
  } catch (err) {
    if (!(err instanceof NoDarajaSlot) || !token) throw err;
    await job.moveToDelayed(Date.now() + err.retryInMs, token);
    throw new DelayedError();
  }
}

/** `payout-attempts`: B2C sends and Transaction Status checks, paced to what Daraja allows. */
export function startAttemptWorker(
  options: WorkerBase & { deps: AttemptDeps; concurrency: number; maxPerSecond: number },
): QueueWorker<'payout-attempts'> {
  const { logger } = options;
  const pacer = darajaPacer(options);
  const worker = createWorker(
    'payout-attempts',
    async ({ payoutId, part }, job, token) => {
      const step = await runPaced(pacer, job, token, (bookSlot) =>
        runPayoutAttempt(payoutId, part, { ...options.deps, bookSlot }),
      );
      if (step.kind === 'delay') {
        await job.moveToDelayed(step.until, token);
        throw new DelayedError();
      }
    },
    {
      connection: options.connection,
      prefix: options.prefix,
      concurrency: options.concurrency,
      onError: (err) => logger.warn({ err: err.message }, 'payout-attempts worker: Redis error'),
    },
  );
  return {
    worker: worker.worker,
    async close() {
      try {
        await worker.close();
      } finally {
        await pacer.close();
      }
    },
  };
}
