import { localDevPrivateKey } from '@parametric/chain';
import { loadPolicyConfig } from '../../src/config';
import { activationRetryDelay } from '../../src/policies/activation-worker';

const OWNER_KEY = `0x${'4f'.repeat(32)}`;
const minimal = {
  MONGO_URL: 'mongodb://db:27017',
  REDIS_URL: 'redis://redis:6379',
  INTERNAL_SIGNING_SECRET: 'x'.repeat(32),
  CHAIN_RPC_URL: 'https://rpc.example.org/v2/project-key',
  CHAIN_REGISTRY_ADDRESS: '0x5FbDB2315678afecb367f032d93F642f64180aa3',
  CHAIN_PRIVATE_KEY: OWNER_KEY,
};

describe('policy configuration', () => {
  it('defaults: 10 s per chain call, breaker open 30 s, Tier 2 retries from 5 s doubling to 10 min, sweeps every minute, a 90-day claims window', () => {
    const config = loadPolicyConfig({ ...minimal, NODE_ENV: 'production' });
    expect(config).toMatchObject({
      CHAIN_TIMEOUT_MS: 10_000,
      CHAIN_BREAKER_RESET_MS: 30_000,
      ACTIVATION_RETRY_BASE_MS: 5_000,
      ACTIVATION_RETRY_MAX_MS: 600_000,
      SWEEP_INTERVAL_MS: 60_000,
      CLAIMS_WINDOW_SECONDS: 7_776_000,
      SUMMARY_CONCURRENCY: 200,
      CHAIN_REGISTRY_FROM_BLOCK: 0,
      RUN_WORKERS: true,
    });
    const delays = [1, 2, 3, 4, 5, 6, 7, 8, 50].map((n) => activationRetryDelay(n, 5_000, 600_000));
    expect(delays).toEqual([5_000, 10_000, 20_000, 40_000, 80_000, 160_000, 320_000, 600_000, 600_000]);
  });

  it('requires the chain endpoint, registry address and owner key, naming each without echoing values', () => {
    const { CHAIN_RPC_URL, CHAIN_REGISTRY_ADDRESS, CHAIN_PRIVATE_KEY, ...rest } = minimal;
    expect(() => loadPolicyConfig(rest)).toThrow(
      /CHAIN_RPC_URL[\s\S]*CHAIN_REGISTRY_ADDRESS[\s\S]*CHAIN_PRIVATE_KEY/,
    );
    const badKey = `0x${'4f'.repeat(31)}`;
    let message = '';
    try {
      loadPolicyConfig({ ...minimal, CHAIN_PRIVATE_KEY: badKey, CHAIN_REGISTRY_ADDRESS: '0x1234' });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toMatch(/CHAIN_PRIVATE_KEY: must be a 0x-prefixed 32-byte hex key/);
    expect(message).toMatch(/CHAIN_REGISTRY_ADDRESS: must be a 0x-prefixed 20-byte hex address/);
    expect(message).not.toContain(badKey);
    expect(() => loadPolicyConfig({ ...minimal, CHAIN_RPC_URL: 'ws://node:8546' })).toThrow(/CHAIN_RPC_URL/);
  });

  it("refuses anvil's public development keys in production, and allows them elsewhere", () => {
    const devKey = localDevPrivateKey(0);
    expect(() => loadPolicyConfig({ ...minimal, NODE_ENV: 'production', CHAIN_PRIVATE_KEY: devKey })).toThrow(
      /public anvil development key/,
    );
    expect(
      loadPolicyConfig({ ...minimal, NODE_ENV: 'development', CHAIN_PRIVATE_KEY: devKey }).CHAIN_PRIVATE_KEY,
    ).toBe(devKey);
  });

  it('refuses a retry cap below the first retry delay', () => {
    expect(() =>
      loadPolicyConfig({ ...minimal, ACTIVATION_RETRY_BASE_MS: '10000', ACTIVATION_RETRY_MAX_MS: '5000' }),
    ).toThrow(/ACTIVATION_RETRY_MAX_MS/);
  });
});
