import { AppError } from '@parametric/http';
import type { Logger } from '@parametric/logger';
import { batchesOf, createWorker, type QueueWorker, type RedisConnection } from '@parametric/queue';
import { UnrecoverableError } from 'bullmq';
import type { PolicyRepositories } from '../repositories';
import { type BatchResult, type PolicySummary, recordSummaries } from './summaries';

export interface SummaryWorkerOptions {
  /**
   * Each job is bound to the organization it names: the batch write filters on it, and a job
   * decided alone gets that organization's binding, no wider door.
   */
  repositories: Pick<PolicyRepositories, 'forOrganization' | 'acrossOrganizations'>;
  connection: RedisConnection;
  prefix: string;
  concurrency: number;
  logger: Logger;
  /** Summaries written together at most (default 100). */
  maxBatch?: number;
}

/** How long the first summary of a batch waits for others (jobs arrive one fetch at a time). */
const BATCH_WINDOW_MS = 2;

/**
 * Consumes `policy-summaries`: what other services' records mean for the policy read
 * (docs/api.md, "Policies: damage assessments": `damageAssessments` from the determinations
 * service, `payouts` from the payments service). The jobs in hand (up to `concurrency`) are
 * written together (`recordSummaries`: one bulk write in the usual case, instead of a round trip
 * or two per summary); each job still finishes or fails on its own summary's result. A summary
 * naming a policy its organization does not hold (unknown, or another organization's) can never
 * succeed: the job fails at once and is logged as an error for ops. MongoDB trouble is left to
 * BullMQ's retries.
 */
export function startSummaryWorker(options: SummaryWorkerOptions): QueueWorker<'policy-summaries'> {
  const { repositories, logger } = options;
  const maxBatch = options.maxBatch ?? 100;
  const { policies } = repositories.acrossOrganizations();
  const record = batchesOf<PolicySummary, BatchResult>({ maxBatch, windowMs: BATCH_WINDOW_MS }, (batch) => {
    recordSummaries(
      policies.collection as never,
      repositories.forOrganization,
      batch.map((b) => b.item),
    ).then(
      (results) => {
        for (const [i, b] of batch.entries()) b.resolve(results[i] as BatchResult);
      },
      (error: unknown) => {
        for (const b of batch) b.resolve({ ok: false, error });
      },
    );
  });

  return createWorker(
    'policy-summaries',
    async (summary) => {
      const { kind, policyId, organizationId, determinationId, revision } = summary;
      const result = await record(summary);
      if (result.ok) {
        logger.info(
          { kind, policyId, organizationId, determinationId, revision, outcome: result.outcome },
          'policy summary',
        );
        return;
      }
      const err = result.error;
      if (!(err instanceof AppError) || err.code !== 'NOT_FOUND') throw err;
      logger.error(
        { kind, policyId, organizationId, determinationId, revision },
        'policy summary names no policy of its organization: needs ops attention',
      );
      throw new UnrecoverableError(`policy ${policyId} not found in organization ${organizationId}`);
    },
    {
      connection: options.connection,
      prefix: options.prefix,
      concurrency: options.concurrency,
      onError: (err) => logger.warn({ err: err.message }, 'policy-summaries worker: Redis error'),
    },
  );
}
