import type { QueueSnapshot, QueueStatsSource } from '@parametric/metrics';
import { Queue } from 'bullmq';
import {
  closeOwned,
  QUEUE_CONNECT_TIMEOUT_MS,
  type RedisConnection,
  resolveConnection,
  withDeadline,
} from './connection';
import type { QueueName } from './registry';

/** How long a scrape waits for the queue counts before leaving them out. */
export const QUEUE_STATS_TIMEOUT_MS = 1_000;

export interface QueueStatsOptions {
  /** A URL (a client with a command timeout is made for it) or a client the caller owns. */
  connection: RedisConnection;
  prefix?: string;
  /** The most one read may take (`QUEUE_STATS_TIMEOUT_MS`): a hung Redis must not hang a scrape. */
  timeoutMs?: number;
  /** Connection errors BullMQ reports; ignored by default (a failed read leaves the series out). */
  onError?: (error: Error) => void;
}

export interface QueueStats extends QueueStatsSource {
  close(): Promise<void>;
}

/**
 * Reads, for `queue_jobs` and `queue_oldest_waiting_age_seconds` (`@parametric/metrics`), the job
 * counts (waiting, active, delayed, failed: BullMQ's `getJobCounts`) and the oldest waiting job
 * of each queue a service produces to or consumes from. A queue Redis does not answer for
 * within the bound is left out of that read.
 */
export function createQueueStats(names: readonly QueueName[], options: QueueStatsOptions): QueueStats {
  const timeoutMs = options.timeoutMs ?? QUEUE_STATS_TIMEOUT_MS;
  const connection = resolveConnection(options.connection, {
    connectionName: `${options.prefix ?? 'bull'}:metrics`,
    commandTimeoutMs: timeoutMs,
    connectTimeout: Math.min(timeoutMs, QUEUE_CONNECT_TIMEOUT_MS),
  });
  const queues = names.map((name) => {
    const queue = new Queue(name, { connection: connection.client, prefix: options.prefix });
    queue.on('error', options.onError ?? (() => undefined));
    return queue;
  });

  const readOne = async (queue: Queue): Promise<QueueSnapshot> => {
    const [counts, oldest] = await Promise.all([
      queue.getJobCounts('waiting', 'active', 'delayed', 'failed'),
      queue.getWaiting(0, 0),
    ]);
    const job = oldest[0];
    // A delayed job waits from the end of its delay, not from when it was added.
    const since = job ? job.timestamp + (job.opts.delay ?? 0) : undefined;
    return {
      queue: queue.name,
      counts: {
        waiting: counts.waiting ?? 0,
        active: counts.active ?? 0,
        delayed: counts.delayed ?? 0,
        failed: counts.failed ?? 0,
      },
      oldestWaitingAgeSeconds: since === undefined ? 0 : Math.max(0, (Date.now() - since) / 1000),
    };
  };

  return {
    async read() {
      const settled = await Promise.allSettled(
        queues.map((queue) => withDeadline(readOne(queue), timeoutMs, `metrics of queue ${queue.name}`)),
      );
      return settled.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
    },
    async close() {
      try {
        await Promise.all(queues.map((queue) => queue.close()));
      } finally {
        await closeOwned(connection);
      }
    },
  };
}
