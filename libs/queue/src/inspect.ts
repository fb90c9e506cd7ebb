import { Queue } from 'bullmq';
import {
  closeOwned,
  QUEUE_COMMAND_TIMEOUT_MS,
  QUEUE_CONNECT_TIMEOUT_MS,
  type RedisConnection,
  resolveConnection,
} from './connection';
import { QUEUES, type QueueName } from './registry';

export interface InspectedQueues {
  queues: Queue[];
  close(): Promise<void>;
}

/**
 * Every queue of the registry (or `names`), opened for inspection by ops tools such as the queue
 * dashboard: one client for all, its commands bounded (`QUEUE_COMMAND_TIMEOUT_MS`), so a hung
 * Redis fails a dashboard request instead of holding it.
 */
export function openQueues(
  options: { connection: RedisConnection; prefix?: string; onError?: (error: Error) => void },
  names: readonly QueueName[] = Object.keys(QUEUES) as QueueName[],
): InspectedQueues {
  const connection = resolveConnection(options.connection, {
    connectionName: `${options.prefix ?? 'bull'}:inspect`,
    commandTimeoutMs: QUEUE_COMMAND_TIMEOUT_MS,
    connectTimeout: QUEUE_CONNECT_TIMEOUT_MS,
    maxRetriesPerRequest: 1,
  });
  const queues = names.map((name) => {
    const queue = new Queue(name, { connection: connection.client, prefix: options.prefix });
    queue.on('error', options.onError ?? (() => undefined));
    return queue;
  });
  return {
    queues,
    async close() {
      try {
        await Promise.all(queues.map((queue) => queue.close()));
      } finally {
        await closeOwned(connection);
      }
    },
  };
}
