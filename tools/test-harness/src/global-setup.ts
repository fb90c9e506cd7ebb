import { startLocalMongo } from '@parametric/embedded-mongo';
import { startLocalChain } from '@parametric/local-chain';
import { startLocalRedis } from '@parametric/local-redis';
import { rememberForTeardown } from './handles';

/**
 * Jest globalSetup: one MongoDB, one private Redis and one local EVM chain (anvil) per test
 * run; their URLs reach every test file through the environment. Test files isolate
 * themselves with a fresh database name, a fresh Redis key prefix and their own registry
 * contract (`testChain()`).
 */
export default async function globalSetup(): Promise<void> {
  const [mongo, redis, chain] = await Promise.all([startLocalMongo(), startLocalRedis(), startLocalChain()]);
  rememberForTeardown(mongo);
  rememberForTeardown(redis);
  rememberForTeardown(chain);
  process.env.TEST_MONGO_URL = mongo.url;
  process.env.TEST_MONGO_BACKEND = mongo.kind;
  process.env.TEST_REDIS_URL = redis.url;
  process.env.TEST_CHAIN_RPC_URL = chain.rpcUrl;
  process.env.TEST_CHAIN_KIND = chain.kind;
  process.env.TEST_CHAIN_REGISTRY_ADDRESS = chain.registryAddress;
  process.env.TEST_CHAIN_PRIVATE_KEY = chain.ownerPrivateKey;
  console.log(`\n[test-harness] MongoDB backend: ${mongo.description}`);
  console.log(`[test-harness] Redis backend: ${redis.description}`);
  console.log(`[test-harness] Chain: ${chain.description}`);
}
