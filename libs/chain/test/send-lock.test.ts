import { connectRedis, testChain, testRedisUrl, uniqueRedisPrefix } from '@parametric/test-harness';
import { Redis } from 'ioredis';
import { createRegistryClient, type RegistryClient, redisSendLock, SendLockTimeoutError } from '../src';

// Two registry clients stand for two replicas of the policy service sending from one owner
// account. Without a lock shared between them, each reads the same pending nonce and the node
// refuses one of the two transactions.

describe('sender lock across processes', () => {
  const redis = connectRedis();
  afterAll(() => redis.quit());

  const replicas = async (key: string) => {
    const chain = await testChain();
    // Each replica has its own Redis connection, as separate processes would.
    const connections = [0, 1].map(() => new Redis(testRedisUrl()));
    const unavailable: Error[] = [];
    const clients: RegistryClient[] = connections.map((connection) =>
      createRegistryClient({
        rpcUrl: chain.rpcUrl,
        registryAddress: chain.registryAddress,
        privateKey: chain.privateKey,
        pollingIntervalMs: 50,
        sendLock: redisSendLock({
          redis: connection,
          key,
          ttlMs: 20_000,
          waitMs: 10_000,
          onUnavailable: (err) => unavailable.push(err),
        }),
      }),
    );
    return {
      clients,
      unavailable,
      close: async () => {
        await Promise.all(clients.map((c) => c.close()));
        await Promise.all(connections.map((c) => c.quit()));
      },
    };
  };

  it('lets two replicas register 30 policies at once from one account, each exactly once', async () => {
    const key = `${uniqueRedisPrefix('lock')}:chain-sender`;
    const { clients, unavailable, close } = await replicas(key);
    try {
      const results = await Promise.all(
        Array.from({ length: 30 }, (_, i) => clients[i % 2]?.registerPolicy(`lock-policy-${i}`, { i })),
      );
      const ids = results.map((r) => Number(r?.onChainPolicyId));
      expect(new Set(ids).size).toBe(30);
      expect(Math.max(...ids) - Math.min(...ids)).toBe(29); // consecutive: no registration lost or doubled
      expect(await redis.exists(key)).toBe(0); // released after the last send
      expect(unavailable).toEqual([]);
    } finally {
      await close();
    }
  });

  it('gives up after waitMs while another process holds the lock, and never releases a lock it does not hold', async () => {
    const key = `${uniqueRedisPrefix('lock')}:chain-sender`;
    await redis.set(key, 'held-by-another-process', 'PX', 60_000);
    const lock = redisSendLock({ redis, key, ttlMs: 1_000, waitMs: 200 });
    let ran = false;
    await expect(
      lock(async () => {
        ran = true;
      }),
    ).rejects.toThrow(SendLockTimeoutError);
    expect(ran).toBe(false);
    expect(await redis.get(key)).toBe('held-by-another-process');
    await redis.del(key);
  });

  it('still sends when Redis cannot be reached, reporting it', async () => {
    const unreachable = new Redis({
      port: 1,
      lazyConnect: true,
      enableOfflineQueue: false,
      retryStrategy: () => null,
    });
    const reasons: string[] = [];
    const lock = redisSendLock({
      redis: unreachable,
      key: 'any',
      ttlMs: 1_000,
      waitMs: 200,
      onUnavailable: (err) => reasons.push(err.message),
    });
    try {
      expect(await lock(async () => 'sent')).toBe('sent');
      expect(reasons).toHaveLength(1);
    } finally {
      unreachable.disconnect();
    }
  });
});
