import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { publishedServer } from './servers';

/** The run's private Redis URL, set by the jest globalSetup. */
export function testRedisUrl(): string {
  return publishedServer('TEST_REDIS_URL', 'Redis');
}

/** A key prefix no other test file uses, for BullMQ queues and rate limiter keys. */
export function uniqueRedisPrefix(label = 'test'): string {
  return `t${process.env.JEST_WORKER_ID ?? '0'}-${label.replace(/[^a-zA-Z0-9_-]/g, '_')}-${randomBytes(4).toString('hex')}`;
}

/** A plain client on the run's Redis; the caller quits it. */
export function connectRedis(): Redis {
  return new Redis(testRedisUrl(), { maxRetriesPerRequest: null, lazyConnect: false });
}
