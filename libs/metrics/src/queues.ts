import { Gauge, type Registry } from 'prom-client';

/** The states `queue_jobs` reports (BullMQ's names). */
export const QUEUE_STATES = ['waiting', 'active', 'delayed', 'failed'] as const;
export type QueueState = (typeof QUEUE_STATES)[number];

export interface QueueSnapshot {
  queue: string;
  counts: Record<QueueState, number>;
  /** Age of the oldest waiting job in seconds (0 when none waits). */
  oldestWaitingAgeSeconds: number;
}

/**
 * Reads the queues a service produces to or consumes from (`@parametric/queue`'s
 * `createQueueStats`). `read` must settle within its own bounded wait: a hung Redis must not
 * hang the scrape. A queue it could not read is left out of the snapshot.
 */
export interface QueueStatsSource {
  read(): Promise<QueueSnapshot[]>;
}

/**
 * Both queue gauges, filled at scrape time by one `read` shared between them (prom-client calls
 * each gauge's `collect` in turn within one scrape). A queue that could not be read has no
 * series in that scrape, rather than stale numbers.
 */
export function queueGauges(registry: Registry, source: QueueStatsSource): void {
  let pending: Promise<QueueSnapshot[]> | undefined;
  const snapshot = () => {
    if (!pending) {
      pending = source.read().catch(() => []);
      // Both gauges of one scrape share it; the next scrape reads again.
      pending.finally(() => setImmediate(() => (pending = undefined)));
    }
    return pending;
  };
  new Gauge({
    name: 'queue_jobs',
    help: 'Jobs in each queue this service produces to or consumes from, by state, read at scrape time',
    labelNames: ['queue', 'state'] as const,
    registers: [registry],
    async collect() {
      const found = await snapshot();
      this.reset();
      for (const { queue, counts } of found) {
        for (const state of QUEUE_STATES) this.set({ queue, state }, counts[state]);
      }
    },
  });
  new Gauge({
    name: 'queue_oldest_waiting_age_seconds',
    help: 'Seconds since the oldest waiting job of each queue was added (0 when none waits)',
    labelNames: ['queue'] as const,
    registers: [registry],
    async collect() {
      const found = await snapshot();
      this.reset();
      for (const { queue, oldestWaitingAgeSeconds } of found) this.set({ queue }, oldestWaitingAgeSeconds);
    },
  });
}
