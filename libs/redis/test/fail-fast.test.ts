import { freePort } from '@parametric/local-process';
import { testRedisUrl, uniqueRedisPrefix } from '@parametric/test-harness';
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

    const started = Date.now();
    await expect(client.get('some-key')).rejects.toThrow(/enableOfflineQueue/);
    // A queued command would wait for a reconnect that never comes.
    expect(Date.now() - started).toBeLessThan(200);
  });
});
