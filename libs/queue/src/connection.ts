import { Redis, type RedisOptions } from 'ioredis';

/** An ioredis client the caller owns, or a Redis URL for which we create (and close) one. */
export type RedisConnection = Redis | string;

export interface ResolvedConnection {
  client: Redis;
  /** True when we created the client, so `close()` must quit it. */
  owned: boolean;
}

export function resolveConnection(connection: RedisConnection, options: RedisOptions): ResolvedConnection {
  // disconnectTimeout: closing a client whose socket is already gone (Redis died) makes
  // ioredis wait this long, on an uncleared timer, to end that socket; keep it short.
  if (typeof connection === 'string') {
    return { client: new Redis(connection, { disconnectTimeout: 100, ...options }), owned: true };
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
