import { AppError } from '@parametric/http';
import type { Logger } from '@parametric/logger';
import { createWorker, type QueueWorker, type RedisConnection } from '@parametric/queue';
import { DelayedError, UnrecoverableError } from 'bullmq';
import { type IngestDeps, ingestDetermination } from './domain';

export interface IngestWorkerOptions {
  ingest: IngestDeps;
  connection: RedisConnection;
  prefix: string;
  concurrency: number;
  /** Delay before trying again while the policy service is unavailable. */
  retryDelayMs: number;
  logger: Logger;
}

/**
 * The index pipeline's door: the same domain function as the ops routes. A job the platform can
 * never accept (a key reused with other content, a bad assessment) fails for good with the
 * reason on the job and an error log; while the policy service is unavailable the job waits and
 * tries again, never counting as a failure, so no assessment is lost to an outage.
 */
export function startIngestWorker(options: IngestWorkerOptions): QueueWorker<'determination-ingest'> {
  const { logger } = options;
  return createWorker(
    'determination-ingest',
    async (payload, job, token) => {
      try {
        const { replayed, determination } = await ingestDetermination(payload, options.ingest);
        logger.info(
          { determinationId: determination._id, status: determination.status, replayed, jobId: job.id },
          'determination ingested from the queue',
        );
      } catch (err) {
        if (!(err instanceof AppError)) throw err; // MongoDB trouble and the like: BullMQ's own retries
        if (err.code === 'SERVICE_UNAVAILABLE') {
          logger.warn(
            { jobId: job.id, reason: err.message },
            'determination ingestion waits for the policy service',
          );
          await job.moveToDelayed(Date.now() + options.retryDelayMs, token);
          throw new DelayedError();
        }
        logger.error(
          {
            jobId: job.id,
            idempotencyKey: payload.idempotencyKey,
            code: err.code,
            reason: err.message,
            details: err.details,
          },
          'determination job refused: needs the pipeline’s attention',
        );
        throw new UnrecoverableError(`${err.code}: ${err.message}`);
      }
    },
    {
      connection: options.connection,
      prefix: options.prefix,
      concurrency: options.concurrency,
      onError: (err) => logger.warn({ err: err.message }, 'determination-ingest worker: Redis error'),
    },
  );
}
