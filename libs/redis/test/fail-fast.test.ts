import { freePort } from '@parametric/local-process';
import { startLocalRedis } from '@parametric/local-redis';
import { eventually, testRedisUrl, uniqueRedisPrefix } from '@parametric/test-harness';
import type { Redis } from 'ioredis';
import { connectFailFast } from '../src';

function recordingLog() {
  const warnings: { obj: object; msg: string }[] = [];
  return { warnings, warn: (obj: object, msg: string) => warnings.push({ obj, msg }) };
}

let client: Redis | undefined;
afterEach(() => {
  client?.disconnect();
  client = undefined;
});

describe('connectFailFast', () => {
  it('connects before returning when Redis answers, named for its purpose', async () => {
    const log = recordingLog();
    const purpose = uniqueRedisPrefix('fail-fast');
    client = await connectFailFast(testRedisUrl(), log, purpose);
    expect(client.status).toBe('ready');
    expect(await client.client('GETNAME')).toBe(purpose);
    expect(log.warnings).toEqual([]);
  });

  it('while Redis is unreachable, returns anyway and fails each command at once instead of queueing it', async () => {
    const log = recordingLog();
    client = await connectFailFast(`redis://127.0.0.1:${await freePort()}`, log, 'rate-limits');
    expect(log.warnings.map((w) => w.msg)).toContain('rate-limits: Redis not reachable at start-up');
    expect(client.status).not.toBe('ready');

    // Refused, not queued: a queued command would wait for a reconnect that never comes.
    await expect(client.get('some-key')).rejects.toThrow(/enableOfflineQueue/);
  });

  it('fails a command against a hung Redis (SIGSTOP) with a timeout instead of waiting for it', async () => {
    const redis = await startLocalRedis({});
    try {
      client = await connectFailFast(redis.url, recordingLog(), 'rate-limits');
      expect(await client.set('k', 'v')).toBe('OK');
      process.kill(redis.pid as number, 'SIGSTOP');
      // Without the command timeout this would wait until SIGCONT (and the test time out).
      await expect(client.get('k')).rejects.toThrow('Command timed out');
      process.kill(redis.pid as number, 'SIGCONT');
      expect(await eventually(() => client?.get('k'))).toBe('v');
    } finally {
      process.kill(redis.pid as number, 'SIGCONT');
      client?.disconnect();
      await redis.stop();
    }
  });
});
