import { startLocalRedis } from '@parametric/local-redis';
import { testRedisUrl, uniqueRedisPrefix } from '@parametric/test-harness';
import { Redis } from 'ioredis';
import { BoundedRedis, commandBoundOf } from '../src';

const clients: Redis[] = [];
afterEach(() => {
  for (const client of clients.splice(0)) client.disconnect();
});

function bounded(url: string, commandTimeoutMs: number, options: { enableAutoPipelining?: boolean } = {}) {
  const client = new BoundedRedis(url, { commandTimeoutMs, maxRetriesPerRequest: 1, ...options });
  clients.push(client);
  return client;
}

describe('BoundedRedis', () => {
  it('answers commands as a plain client does', async () => {
    const client = bounded(testRedisUrl(), 500);
    const key = uniqueRedisPrefix('bounded');
    expect(await client.set(key, 'v', 'EX', 60)).toBe('OK');
    expect(await client.get(key)).toBe('v');
    const [set, incr] = (await client.multi().set(`${key}:n`, '1', 'EX', 60).incr(`${key}:n`).exec()) ?? [];
    expect([set?.[1], incr?.[1]]).toEqual(['OK', 2]);
  });

  it('fails no command that Redis answers, however long the client stays busy', async () => {
    // A short bound and a stream of commands lasting many bounds: the watchdog ticks all along,
    // and must only ever fail a command that waited a whole timeout.
    const client = bounded(testRedisUrl(), 40, { enableAutoPipelining: true });
    const key = uniqueRedisPrefix('bounded-busy');
    const until = Date.now() + 400;
    let answered = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (Date.now() < until) {
          await client.incr(key);
          answered++;
        }
      }),
    );
    expect(Number(await client.get(key))).toBe(answered);
    await client.del(key);
  });

  it('fails a command against a hung Redis (SIGSTOP) with "Command timed out" once its timeout has passed, and keeps later answers in order', async () => {
    const redis = await startLocalRedis({});
    try {
      const client = bounded(redis.url, 200);
      expect(await client.set('k', 'v')).toBe('OK');
      process.kill(redis.pid as number, 'SIGSTOP');
      const sent = Date.now();
      const hung = [client.get('k'), client.incr('n')].map((p) =>
        p.then(
          () => 'answered',
          (err: Error) => ({ message: err.message, after: Date.now() - sent }),
        ),
      );
      const outcomes = await Promise.all(hung);
      for (const outcome of outcomes) {
        expect(outcome).toEqual({ message: 'Command timed out', after: expect.any(Number) });
        // Never before its timeout (a little slack for timer granularity).
        expect((outcome as { after: number }).after).toBeGreaterThanOrEqual(195);
      }
      process.kill(redis.pid as number, 'SIGCONT');
      // The late answers land on the failed commands; what is sent now gets its own.
      expect(await client.get('k')).toBe('v');
      expect(await client.incr('n')).toBe(2);
    } finally {
      process.kill(redis.pid as number, 'SIGCONT');
      await redis.stop();
    }
  });

  it('gives a duplicate the same bound', () => {
    const client = bounded(testRedisUrl(), 300);
    const copy = client.duplicate();
    clients.push(copy);
    expect(copy).toBeInstanceOf(BoundedRedis);
    expect(commandBoundOf(copy)).toBe(commandBoundOf(client));
  });

  it('says how long a command may wait: its timeout and one tick, the ioredis timeout, or none', () => {
    expect(commandBoundOf(bounded(testRedisUrl(), 500))).toBe(550);
    const own = new Redis(testRedisUrl(), { commandTimeout: 700, lazyConnect: true });
    const none = new Redis(testRedisUrl(), { lazyConnect: true });
    clients.push(own, none);
    expect(commandBoundOf(own)).toBe(700);
    expect(commandBoundOf(none)).toBeUndefined();
  });

  it('refuses ioredis commandTimeout beside its own bound (that would arm a timer per command again)', () => {
    expect(
      () =>
        new BoundedRedis(testRedisUrl(), { commandTimeoutMs: 500, commandTimeout: 500, lazyConnect: true }),
    ).toThrow(/commandTimeoutMs, not ioredis commandTimeout/);
  });
});
