import type { Redis } from 'ioredis';
import { BoundedRedis } from './bounded';

/**
 * How long one command may wait for Redis (at most a tenth more, see BoundedRedis). A Redis that
 * is down refuses at once; one that hangs (paused, overloaded, a network black hole) would
 * otherwise hold every request that touches it for as long as it hangs.
 */
export const REDIS_COMMAND_TIMEOUT_MS = 500;
export const REDIS_CONNECT_TIMEOUT_MS = 2_000;

/**
 * A client for work that must not wait for Redis (rate limits, the chain sender lock): no
 * offline queue and one retry, so commands fail at once while Redis is away and callers fall
 * back; a command timeout, so a hung Redis fails them within REDIS_COMMAND_TIMEOUT_MS too; a
 * short disconnect timeout, so shutdown is not held up by a dead Redis. Connected before
 * returning when Redis answers; otherwise it keeps reconnecting in the background.
 */
export async function connectFailFast(
  url: string,
  log: { warn(obj: object, msg: string): void },
  purpose: string,
): Promise<Redis> {
  const client = new BoundedRedis(url, {
    maxRetriesPerRequest: 1,
    enableOfflineQueue: false,
    lazyConnect: true,
    disconnectTimeout: 100,
    commandTimeoutMs: REDIS_COMMAND_TIMEOUT_MS,
    // Commands issued in the same tick (concurrent requests' limiter calls) go out in one
    // write: on loopback a socket write costs more CPU than the command it carries.
    enableAutoPipelining: true,
    connectTimeout: REDIS_CONNECT_TIMEOUT_MS,
    connectionName: purpose,
  });
  client.on('error', (err) => log.warn({ err: err.message }, `${purpose}: Redis error`));
  await client
    .connect()
    .catch((err) => log.warn({ err: err.message }, `${purpose}: Redis not reachable at start-up`));
  return client;
}
