import { loadWebhooksConfig, SPEC_BACKOFF_MS } from '../../src/config';
import { backoffAfter } from '../../src/delivery/deliverer';

const minimal = {
  MONGO_URL: 'mongodb://db:27017',
  REDIS_URL: 'redis://redis:6379',
  INTERNAL_SIGNING_SECRET: 'x'.repeat(32),
  WEBHOOK_SECRET_KEY: Buffer.alloc(32, 7).toString('base64'),
};

describe('webhooks configuration', () => {
  it("uses the spec's production values by default: 10 s timeout, 5 attempts, 30 s / 1 / 2 / 4 / 8 min backoff", () => {
    const config = loadWebhooksConfig({ ...minimal, NODE_ENV: 'production' });
    expect(config.DELIVERY_TIMEOUT_MS).toBe(10_000);
    expect(config.DELIVERY_MAX_ATTEMPTS).toBe(5);
    expect(config.DELIVERY_BACKOFF_MS).toEqual([30_000, 60_000, 120_000, 240_000, 480_000]);
    expect(config.ALLOW_INSECURE_WEBHOOKS).toBe(false);
  });

  it('waits 30 s, 1 min, 2 min and 4 min after the first four failed attempts', () => {
    expect([1, 2, 3, 4].map((attempt) => backoffAfter(attempt, SPEC_BACKOFF_MS))).toEqual([
      30_000, 60_000, 120_000, 240_000,
    ]);
  });

  it('refuses to allow insecure webhook targets in production', () => {
    expect(() =>
      loadWebhooksConfig({ ...minimal, NODE_ENV: 'production', ALLOW_INSECURE_WEBHOOKS: 'true' }),
    ).toThrow(/must not be set in production/);
  });

  it('requires a 32-byte encryption key for secrets at rest', () => {
    expect(() => loadWebhooksConfig({ ...minimal, WEBHOOK_SECRET_KEY: 'c2hvcnQ=' })).toThrow(
      /WEBHOOK_SECRET_KEY/,
    );
  });
});
