import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { type LocalRedis, startLocalRedis } from '../src';

/** `npm start --data-dir`'s Redis: queued work survives the server being killed. */
describe('a private redis-server with a data directory', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'local-redis-'));
  const started: LocalRedis[] = [];
  afterAll(async () => {
    for (const redis of started) await redis.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  async function start(dataDir?: string): Promise<LocalRedis> {
    const redis = await startLocalRedis({}, { dataDir });
    started.push(redis);
    return redis;
  }

  it('keeps what was written more than a second before a SIGKILL', async () => {
    const first = await start(path.join(dir, 'redis'));
    const client = new Redis(first.url, { maxRetriesPerRequest: 0 });
    await client.set('kept', 'yes');
    await client.rpush('queue', 'a', 'b');
    await client.quit();
    // appendfsync everysec: the append-only file is flushed once a second.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    process.kill(first.pid as number, 'SIGKILL');
    await first.stop();

    const second = await start(path.join(dir, 'redis'));
    expect(second.url).not.toBe(first.url);
    const reader = new Redis(second.url, { maxRetriesPerRequest: 0 });
    try {
      expect(await reader.get('kept')).toBe('yes');
      expect(await reader.lrange('queue', 0, -1)).toEqual(['a', 'b']);
    } finally {
      await reader.quit();
    }
  });

  it('writes nothing to disk without one', async () => {
    const cwd = mkdtempSync(path.join(tmpdir(), 'local-redis-cwd-'));
    const previous = process.cwd();
    process.chdir(cwd);
    try {
      const redis = await start();
      const client = new Redis(redis.url, { maxRetriesPerRequest: 0 });
      await client.set('gone', 'yes');
      await client.quit();
      await redis.stop();
      expect(readdirSync(cwd)).toEqual([]);
    } finally {
      process.chdir(previous);
      rmSync(cwd, { recursive: true, force: true });
    }
  });
});
