import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';

/** Runs `task` while holding the right to send from the registry owner's account. */
export type SendLock = <T>(task: () => Promise<T>) => Promise<T>;

/** Runs tasks one at a time in this process (sends from one account must not race for a nonce). */
export function processSendLock(): SendLock {
  let tail: Promise<unknown> = Promise.resolve();
  return <T>(task: () => Promise<T>): Promise<T> => {
    const run = tail.then(task, task);
    tail = run.catch(() => {});
    return run;
  };
}

export interface RedisSendLockOptions {
  /** A client that fails fast while Redis is away (`enableOfflineQueue: false`). */
  redis: Redis;
  /** One key per sending account, shared by every process that sends from it. */
  key: string;
  /** Longest a holder may keep it: more than one send takes, so a dead holder frees it. */
  ttlMs: number;
  /** How long to wait for it before giving up (the chain call's own timeout). */
  waitMs: number;
  /** Redis could not be asked: the send goes ahead with the process lock only. */
  onUnavailable?: (err: Error) => void;
}

/** Thrown when another process held the sender lock for longer than `waitMs`. */
export class SendLockTimeoutError extends Error {
  override readonly name = 'SendLockTimeoutError';
}

// Deletes the key only if it still holds our token: a holder whose TTL ran out must not
// release the lock another process has taken since.
const RELEASE = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end`;

/**
 * The sender lock across processes (every replica of a service sending from one account):
 * each node hands out the next nonce from its count of pending transactions, so two processes
 * sending at once pick the same nonce and one transaction is refused. Held from reading the
 * nonce until the node has accepted the transaction. If Redis cannot be reached the send is
 * not refused: with one replica nothing races, with more an occasional send fails and is
 * retried like any chain failure, which beats failing every activation while Redis is away.
 */
export function redisSendLock(options: RedisSendLockOptions): SendLock {
  const { redis, key, ttlMs, waitMs } = options;
  const local = processSendLock();

  async function acquire(token: string): Promise<boolean> {
    const deadline = Date.now() + waitMs;
    for (;;) {
      try {
        if ((await redis.set(key, token, 'PX', ttlMs, 'NX')) === 'OK') return true;
      } catch (err) {
        options.onUnavailable?.(err as Error);
        return false;
      }
      if (Date.now() >= deadline) {
        throw new SendLockTimeoutError(`the chain sender lock was not free within ${waitMs} ms`);
      }
      await new Promise((r) => setTimeout(r, 10 + Math.floor(Math.random() * 15)));
    }
  }

  return (task) =>
    // The process lock first: this process's own sends queue here, not in Redis round trips.
    local(async () => {
      const token = randomBytes(16).toString('hex');
      const held = await acquire(token);
      try {
        return await task();
      } finally {
        if (held) await redis.eval(RELEASE, 1, key, token).catch(() => undefined);
      }
    });
}
