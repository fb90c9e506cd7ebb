import { Redis } from 'ioredis';

/**
 * A client for work that must not wait for Redis (rate limits, the chain sender lock): no
 * offline queue and one retry, so commands fail at once while Redis is away and callers fall
 * back; a short disconnect timeout, so shutdown is not held up by a dead Redis. Connected
 * before returning when Redis answers; otherwise it keeps reconnecting in the background.
 */
export async function connectFailFast(
  url: string,
  log: { warn(obj: object, msg: string): void },
  purpose: string,
): Promise<Redis> {
  const client = new Redis(url, {
    maxRetriesPerRequest: 1,
    enableOfflineQueue: false,
    lazyConnect: true,
    disconnectTimeout: 100,
    connectionName: purpose,
  });
  client.on('error', (err) => log.warn({ err: err.message }, `${purpose}: Redis error`));
  await client
    .connect()
    .catch((err) => log.warn({ err: err.message }, `${purpose}: Redis not reachable at start-up`));
  return client;
}
