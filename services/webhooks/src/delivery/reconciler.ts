import type { Logger } from '@parametric/logger';
import type { Producer } from '@parametric/queue';
import { WAITING_FOR_URL } from '../deliveries/domain';
import type { DeliveryDoc, DeliveryModel } from '../deliveries/model';
import { jobIdOf } from './deliverer';

/**
 * The rows the reconciler may find forgotten: waiting for a URL (`WAITING_FOR_URL`) and recorded
 * before `cutoff` (a release in progress is left alone). The delivery model's
 * `{ status, nextAttemptAt, createdAt }` index bounds all three, so a pass reads the waiting rows
 * only, however long the delivery log grows.
 */
export function forgottenFilter(cutoff: Date) {
  return { ...WAITING_FOR_URL, createdAt: { $lte: cutoff } };
}

/**
 * Finds PENDING deliveries whose next attempt is overdue (a job lost with Redis, a worker
 * that died between recording an attempt and scheduling the next) and makes sure their job
 * exists. Together with the workers' lock expiry this means no row stays PENDING forever.
 *
 * It also starts deliveries still waiting for a URL (deliveries/domain.ts `WAITING_FOR_URL`)
 * whose organization has one: a release the URL's request or the consumer began and did not
 * finish (a crash, MongoDB gone in between).
 */
export function startReconciler(deps: {
  deliveries: DeliveryModel;
  producer: Producer<'webhook-deliveries'>;
  logger: Logger;
  intervalMs: number;
  graceMs: number;
  /** The endpoints as MongoDB holds them now, uncached. */
  storedEndpoints: (organizationIds: string[]) => Promise<Map<string, unknown>>;
  /** Starts an organization's waiting deliveries (`releaseWaiting`, deliveries/domain.ts). */
  releaseWaiting: (organizationId: string) => Promise<number>;
}) {
  let running: Promise<number> | undefined;
  let stopped = false;

  async function pass(): Promise<number> {
    const overdue = await deps.deliveries
      .find({ status: 'PENDING', nextAttemptAt: { $lte: new Date(Date.now() - deps.graceMs) } })
      .limit(500)
      .lean<DeliveryDoc[]>();
    let requeued = 0;
    for (const row of overdue) {
      const job = { deliveryId: row._id, cycle: row.cycle, attempt: row.attempts + 1 };
      if ((await deps.producer.ensure(job, { jobId: jobIdOf(job) })) === 'added') requeued++;
    }
    if (requeued > 0) deps.logger.warn({ requeued }, 'reconciler re-enqueued overdue deliveries');
    return requeued + (await releaseForgotten());
  }

  /** Waiting rows older than the grace (a release in progress is left alone) of organizations with a URL. */
  async function releaseForgotten(): Promise<number> {
    const organizationIds = (await deps.deliveries.distinct(
      'organizationId',
      forgottenFilter(new Date(Date.now() - deps.graceMs)),
    )) as string[];
    if (organizationIds.length === 0) return 0;
    const stored = await deps.storedEndpoints(organizationIds);
    let released = 0;
    for (const organizationId of organizationIds) {
      if (stored.has(organizationId)) released += await deps.releaseWaiting(organizationId);
    }
    if (released > 0)
      deps.logger.warn({ released }, 'reconciler started deliveries that still waited for a URL already set');
    return released;
  }

  const runPass = () => {
    running ??= pass()
      .catch((err) => {
        deps.logger.error({ err }, 'reconciler pass failed');
        return 0;
      })
      .finally(() => {
        running = undefined;
      });
    return running;
  };

  const timer = setInterval(() => {
    if (!stopped) void runPass();
  }, deps.intervalMs);
  timer.unref();

  return {
    /** One pass now (tests, start-up); resolves to how many deliveries were re-enqueued or started. */
    runOnce: runPass,
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}
