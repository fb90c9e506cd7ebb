import { BoundedRedis } from '@parametric/redis';
import { Redis, type RedisOptions } from 'ioredis';

/** An ioredis client the caller owns, or a Redis URL for which we create (and close) one. */
export type RedisConnection = Redis | string;

/**
 * How long a queue connection may take to connect (each attempt; ioredis then retries), as
 * `connectFailFast` in `@parametric/redis` does for the other clients.
 */
export const QUEUE_CONNECT_TIMEOUT_MS = 2_000;
/**
 * How long one producer command may wait for Redis: a hung Redis (paused, overloaded, a network
 * black hole) fails it instead of holding it for as long as it hangs. Producers only: a worker's
 * connection is duplicated by BullMQ for its blocking fetch (BZPOPMIN, which legitimately waits
 * `drainDelay` seconds), and a command timeout there would abort every idle wait.
 */
export const QUEUE_COMMAND_TIMEOUT_MS = 2_000;
/** The most a whole `producer.add` (or `ensure`, `schedule`) may take, connecting included. */
export const QUEUE_OPERATION_TIMEOUT_MS = 5_000;

/**
 * A queue operation Redis did not complete in time. The operation may still take effect once
 * Redis answers (the command was sent): callers that retry should use a `jobId`, which BullMQ
 * de-duplicates, as the outbox relays do.
 */
export class QueueTimeoutError extends Error {
  readonly code = 'QUEUE_TIMEOUT';
  constructor(what: string, ms: number, options?: { cause?: unknown }) {
    super(`${what}: Redis did not answer within ${ms} ms`, options);
    this.name = 'QueueTimeoutError';
  }
}

/**
 * `promise`, or a `QueueTimeoutError` after `ms`. A command timeout of the connection (ioredis's
 * `Command timed out`) is reported as a `QueueTimeoutError` too, so callers see one error for
 * "Redis did not answer", whichever bound was reached first.
 */
export function withDeadline<T>(
  promise: Promise<T>,
  ms: number,
  what: string,
  commandTimeoutMs?: number,
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new QueueTimeoutError(what, ms)), ms);
  });
  const answered = promise.catch((err: unknown) => {
    if (err instanceof Error && err.message === 'Command timed out') {
      throw new QueueTimeoutError(what, commandTimeoutMs ?? ms, { cause: err });
    }
    throw err;
  });
  // The abandoned operation may still reject later: not an unhandled rejection.
  answered.catch(() => undefined);
  return Promise.race([answered, deadline]).finally(() => clearTimeout(timer));
}

export interface ResolvedConnection {
  client: Redis;
  /** True when we created the client, so `close()` must quit it. */
  owned: boolean;
}

/**
 * The caller's client, or one we create for a URL; given `commandTimeoutMs`, its commands fail
 * once they have waited that long (`BoundedRedis`, `@parametric/redis`: one timer per client,
 * not one per command as ioredis's `commandTimeout` arms).
 */
export function resolveConnection(
  connection: RedisConnection,
  options: Omit<RedisOptions, 'commandTimeout'> & { commandTimeoutMs?: number },
): ResolvedConnection {
  if (typeof connection === 'string') {
    const { commandTimeoutMs, ...rest } = options;
    // disconnectTimeout: closing a client whose socket is already gone (Redis died) makes
    // ioredis wait this long, on an uncleared timer, to end that socket; keep it short.
    const redisOptions = { disconnectTimeout: 100, connectTimeout: QUEUE_CONNECT_TIMEOUT_MS, ...rest };
    return {
      client:
        commandTimeoutMs === undefined
          ? new Redis(connection, redisOptions)
          : new BoundedRedis(connection, { ...redisOptions, commandTimeoutMs }),
      owned: true,
    };
  }
  return { client: connection, owned: false };
}

export async function closeOwned({ client, owned }: ResolvedConnection): Promise<void> {
  if (!owned) return;
  try {
    if (client.status !== 'end') await client.quit();
  } catch {
    // QUIT needs a live connection; one that never connected is simply dropped. (Not once
    // it has ended: ioredis then arms a disconnect timer that nothing clears.)
    if (client.status !== 'end') client.disconnect();
  }
}
