import { startLocalMongo } from '@parametric/embedded-mongo';
import { startLocalRedis } from '@parametric/local-redis';
import { rememberForTeardown } from './handles';

/**
 * Jest globalSetup: one MongoDB and one private Redis per test run; their URLs reach every
 * test file through the environment. Test files isolate themselves with a fresh database
 * name and a fresh Redis key prefix.
 */
export default async function globalSetup(): Promise<void> {
  const [mongo, redis] = await Promise.all([startLocalMongo(), startLocalRedis()]);
  rememberForTeardown(mongo);
  rememberForTeardown(redis);
  process.env.TEST_MONGO_URL = mongo.url;
  process.env.TEST_MONGO_BACKEND = mongo.kind;
  process.env.TEST_REDIS_URL = redis.url;
  console.log(`\n[test-harness] MongoDB backend: ${mongo.description}`);
  console.log(`[test-harness] Redis backend: ${redis.description}`);
}
