import type { Logger } from '@parametric/logger';
import {
  createWorker,
  type Producer,
  policyActivationJobId,
  type QueueWorker,
  type RedisConnection,
} from '@parametric/queue';
import { type Clock, systemClock } from '../clock';
import type { PolicyDoc, PolicyModel } from './model';

export interface SweepOptions {
  /** Across organizations (`acrossOrganizations`): see below. */
  policies: PolicyModel;
  activations: Producer<'policy-activations'>;
  sweeps: Producer<'policy-sweeps'>;
  connection: RedisConnection;
  prefix: string;
  intervalMs: number;
  logger: Logger;
  clock?: Clock;
}

// The sweeps run across every organization by design (they are the platform's own jobs, not a
// tenant's request): the service hands them the model through `acrossOrganizations`.

/** Marks every ACTIVE policy whose cover has ended EXPIRED; returns how many. */
export async function expirePolicies(policies: PolicyModel, at: Date): Promise<number> {
  const result = await policies.updateMany(
    { status: 'ACTIVE', coverEndsAt: { $lte: at } },
    { $set: { status: 'EXPIRED', expiredAt: at } },
  );
  return result.modifiedCount;
}

/**
 * Makes sure every paid policy still waiting for activation has its job (a no-op for those
 * whose job is waiting or delayed): covers a Redis that lost its data, or a job that failed
 * on errors BullMQ gave up retrying.
 */
export async function requeueActivations(
  policies: PolicyModel,
  activations: Producer<'policy-activations'>,
): Promise<number> {
  const waiting = await policies
    .find(
      { activationRequestedAt: { $type: 'date' }, status: 'PENDING', premiumReference: { $type: 'string' } },
      { organizationId: 1, premiumReference: 1 },
    )
    .limit(1000)
    .lean<Pick<PolicyDoc, '_id' | 'organizationId' | 'premiumReference'>[]>();
  let added = 0;
  for (const p of waiting) {
    if (!p.premiumReference) continue;
    const outcome = await activations.ensure(
      { policyId: p._id, organizationId: p.organizationId, paymentId: p.premiumReference },
      { jobId: policyActivationJobId(p._id) },
    );
    if (outcome === 'added') added++;
  }
  return added;
}

/** Schedules both sweeps (idempotent across replicas) and runs them as they come due. */
export async function startSweeps(options: SweepOptions): Promise<QueueWorker<'policy-sweeps'>> {
  const { policies, logger } = options;
  const now = options.clock ?? systemClock;
  await options.sweeps.schedule('expire-policies', options.intervalMs, { task: 'expire-policies' });
  await options.sweeps.schedule('requeue-activations', options.intervalMs, { task: 'requeue-activations' });
  return createWorker(
    'policy-sweeps',
    async ({ task }) => {
      if (task === 'expire-policies') {
        const expired = await expirePolicies(policies, now());
        if (expired > 0) logger.info({ expired }, 'policies past their cover end expired');
      } else {
        const added = await requeueActivations(policies, options.activations);
        if (added > 0) logger.warn({ added }, 'activation jobs re-queued for paid policies');
      }
    },
    {
      connection: options.connection,
      prefix: options.prefix,
      onError: (err) => logger.warn({ err: err.message }, 'policy-sweeps worker: Redis error'),
    },
  );
}
