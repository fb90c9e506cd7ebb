import type { Logger } from '@parametric/logger';
import type { Producer } from '@parametric/queue';
import type { DeliveryDoc, DeliveryModel } from '../deliveries/model';
import { jobIdOf } from './deliverer';

/**
 * Finds PENDING deliveries whose next attempt is overdue (a job lost with Redis, a worker
 * that died between recording an attempt and scheduling the next) and makes sure their job
 * exists. Together with the workers' lock expiry this means no row stays PENDING forever.
 */
export function startReconciler(deps: {
  deliveries: DeliveryModel;
  producer: Producer<'webhook-deliveries'>;
  logger: Logger;
  intervalMs: number;
  graceMs: number;
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
    return requeued;
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
    /** One pass now (tests, start-up); resolves to how many deliveries were re-enqueued. */
    runOnce: runPass,
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}
