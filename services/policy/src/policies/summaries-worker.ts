import { AppError } from '@parametric/http';
import type { Logger } from '@parametric/logger';
import { createWorker, type QueueWorker, type RedisConnection } from '@parametric/queue';
import { UnrecoverableError } from 'bullmq';
import type { PolicyRepositories } from '../repositories';
import { recordDamageAssessment, recordPayout } from './summaries';

export interface SummaryWorkerOptions {
  /** Each job is bound to the organization it names: the worker gets no wider door. */
  repositories: Pick<PolicyRepositories, 'forOrganization'>;
  connection: RedisConnection;
  prefix: string;
  concurrency: number;
  logger: Logger;
}

/**
 * Consumes `policy-summaries`: what other services' records mean for the policy read
 * (docs/api.md, "Policies: damage assessments": `damageAssessments` from the determinations
 * service, `payouts` from the payments service). A summary naming a policy its
 * organization does not hold (unknown, or another organization's) can never succeed: the job
 * fails at once and is logged as an error for ops. MongoDB trouble is left to BullMQ's retries.
 */
export function startSummaryWorker(options: SummaryWorkerOptions): QueueWorker<'policy-summaries'> {
  const { repositories, logger } = options;
  return createWorker(
    'policy-summaries',
    async (summary) => {
      const { kind, policyId, organizationId, determinationId, revision } = summary;
      const tenant = repositories.forOrganization(organizationId);
      try {
        const outcome =
          summary.kind === 'PAYOUT'
            ? await recordPayout(tenant, summary)
            : await recordDamageAssessment(tenant, summary);
        logger.info({ kind, policyId, organizationId, determinationId, revision, outcome }, 'policy summary');
      } catch (err) {
        if (!(err instanceof AppError) || err.code !== 'NOT_FOUND') throw err;
        logger.error(
          { kind, policyId, organizationId, determinationId, revision },
          'policy summary names no policy of its organization: needs ops attention',
        );
        throw new UnrecoverableError(`policy ${policyId} not found in organization ${organizationId}`);
      }
    },
    {
      connection: options.connection,
      prefix: options.prefix,
      concurrency: options.concurrency,
      onError: (err) => logger.warn({ err: err.message }, 'policy-summaries worker: Redis error'),
    },
  );
}
