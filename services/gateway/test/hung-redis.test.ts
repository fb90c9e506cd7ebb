import { type FreezableProxy, freezableProxy, testRedisUrl } from '@parametric/test-harness';
import { startTestGateway, type TestGateway } from './support';

/**
 * Issue 14, row 1: Redis hangs (accepts connections, answers nothing) under a steady stream of
 * partner requests. Every request is answered within the command timeout and the documented
 * fallback (this replica's memory for the limits, MongoDB for callers), a registration too, so
 * nothing is committed for a client that has given up; once Redis answers, Redis counts again.
 */
describe('the gateway while Redis hangs', () => {
  let proxy: FreezableProxy;
  let t: TestGateway;
  beforeAll(async () => {
    const target = new URL(testRedisUrl());
    proxy = await freezableProxy({ host: target.hostname, port: Number(target.port) });
    t = await startTestGateway({ REDIS_URL: `redis://${proxy.address}` });
  });
  afterAll(async () => {
    proxy.thaw();
    await t.stop();
    await proxy.stop();
  });

  it('answers partner requests and registrations while frozen, then counts in Redis again', async () => {
    const { apiKey } = await t.register();
    const before = await t.api('GET', '/organizations/me', { key: apiKey });
    expect(before.status).toBe(200);
    const remainingBefore = Number(before.headers.get('x-ratelimit-remaining'));

    proxy.freeze();
    try {
      // The proxy stays frozen until every answer is in: none can come from Redis.
      const answers = await Promise.all([
        ...Array.from({ length: 20 }, () => t.api('GET', '/organizations/me', { key: apiKey })),
        t.api('POST', '/auth/register-organization', {
          body: { name: 'Registered While Frozen', type: 'COOPERATIVE', countryCode: 'KE' },
        }),
      ]);
      const registration = answers.pop();
      expect(answers.map((a) => a.status)).toEqual(Array(20).fill(200));
      // The fallback still limits: every answer carries the limit headers.
      for (const a of answers) expect(a.headers.get('x-ratelimit-limit')).toBe('100');
      expect(registration?.status).toBe(201);
      const registeredKey = registration?.body.data.organization.apiKey;
      const mine = await t.api('GET', '/organizations/me', { key: registeredKey });
      expect(mine.status).toBe(200);
      expect(mine.body.data.name).toBe('Registered While Frozen');
    } finally {
      proxy.thaw();
    }
    // Redis answers again: the organization's budget is counted there, where it was left.
    const after = await t.api('GET', '/organizations/me', { key: apiKey });
    expect(after.status).toBe(200);
    expect(Number(after.headers.get('x-ratelimit-remaining'))).toBeLessThan(remainingBefore);
  });
});
