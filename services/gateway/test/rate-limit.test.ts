import { startTestGateway, type TestGateway, testConfig } from './support';

function expectRateHeaders(headers: Headers, limit: number) {
  expect(headers.get('x-ratelimit-limit')).toBe(String(limit));
  expect(Number(headers.get('x-ratelimit-remaining'))).toBeGreaterThanOrEqual(0);
  const reset = Number(headers.get('x-ratelimit-reset'));
  const now = Math.floor(Date.now() / 1000);
  // Unix seconds, within the window from now.
  expect(reset).toBeGreaterThanOrEqual(now);
  expect(reset).toBeLessThanOrEqual(now + 3600 + 1);
}

describe('rate limits (docs/api.md, Rate limits)', () => {
  it('defaults to 100 requests per 60 s per organization, and 10 per hour on POST /payments/initiate', () => {
    const config = testConfig();
    expect(config.RATE_LIMIT_POINTS).toBe(100);
    expect(config.RATE_LIMIT_WINDOW_SECONDS).toBe(60);
    expect(config.PAYMENTS_INITIATE_LIMIT_POINTS).toBe(10);
    expect(config.PAYMENTS_INITIATE_WINDOW_SECONDS).toBe(3600);
  });

  describe('with the default limits', () => {
    let t: TestGateway;
    beforeAll(async () => {
      t = await startTestGateway();
    });
    afterAll(async () => {
      await t.stop();
    });

    it('lets an organization make 100 requests in a minute and refuses the 101st with 429', async () => {
      const { apiKey } = await t.register();
      for (let i = 1; i <= 100; i++) {
        const reply = await t.api('GET', '/organizations/me', { key: apiKey });
        expect(reply.status).toBe(200);
        expect(reply.headers.get('x-ratelimit-remaining')).toBe(String(100 - i));
      }
      const refused = await t.api('GET', '/organizations/me', { key: apiKey });
      expect(refused.status).toBe(429);
      expect(refused.body.error.code).toBe('RATE_LIMIT_EXCEEDED');
      expect(refused.body.error.details.limit).toBe(100);
      expect(refused.body.error.details.retryAfter).toBeGreaterThan(0);
      expect(refused.body.error.details.retryAfter).toBeLessThanOrEqual(60);
      expect(refused.headers.get('retry-after')).toBe(String(refused.body.error.details.retryAfter));
      expectRateHeaders(refused.headers, 100);
      expect(refused.headers.get('x-ratelimit-remaining')).toBe('0');
    });

    it('keeps one budget per organization across a key rotation: the new key continues the count', async () => {
      const { apiKey } = await t.register();
      for (let i = 1; i <= 60; i++) {
        const reply = await t.api('GET', '/organizations/me', { key: apiKey });
        expect(reply.headers.get('x-ratelimit-remaining')).toBe(String(100 - i));
      }
      const rotated = await t.api('POST', '/organizations/me/api-key/rotate', { key: apiKey });
      expect(rotated.status).toBe(200);
      expect(rotated.headers.get('x-ratelimit-remaining')).toBe('39');
      const newKey: string = rotated.body.data.apiKey;
      expect(newKey).not.toBe(apiKey);
      for (let i = 62; i <= 100; i++) {
        const reply = await t.api('GET', '/organizations/me', { key: newKey });
        expect(reply.status).toBe(200);
        expect(reply.headers.get('x-ratelimit-remaining')).toBe(String(100 - i));
      }
      const refused = await t.api('GET', '/organizations/me', { key: newKey });
      expect(refused.status).toBe(429);
      expect(refused.body.error.code).toBe('RATE_LIMIT_EXCEEDED');
      expect(refused.body.error.details.limit).toBe(100);
      expect(refused.headers.get('x-ratelimit-remaining')).toBe('0');
    });

    it('99 requests, rotate, repeat: the new key gets no fresh budget (row 3)', async () => {
      const { apiKey } = await t.register();
      for (let i = 1; i <= 99; i++) {
        expect((await t.api('GET', '/organizations/me', { key: apiKey })).status).toBe(200);
      }
      const rotated = await t.api('POST', '/organizations/me/api-key/rotate', { key: apiKey });
      expect(rotated.status).toBe(200);
      expect(rotated.headers.get('x-ratelimit-remaining')).toBe('0');
      const newKey: string = rotated.body.data.apiKey;
      const refused = await t.api('GET', '/organizations/me', { key: newKey });
      expect(refused.status).toBe(429);
      expect(refused.body.error.details.limit).toBe(100);
      // Rotating again does not buy a budget either.
      const again = await t.api('POST', '/organizations/me/api-key/rotate', { key: newKey });
      expect(again.status).toBe(429);
      // The replaced key is not the organization any more: it is refused as a stranger (by IP).
      expect((await t.api('GET', '/organizations/me', { key: apiKey })).status).toBe(401);
      // Another organization is untouched.
      const other = await t.register();
      const fresh = await t.api('GET', '/organizations/me', { key: other.apiKey });
      expect(fresh.status).toBe(200);
      expect(fresh.headers.get('x-ratelimit-remaining')).toBe('99');
    });
  });

  describe('with small limits', () => {
    let t: TestGateway;
    beforeAll(async () => {
      t = await startTestGateway({
        RATE_LIMIT_POINTS: '5',
        PAYMENTS_INITIATE_LIMIT_POINTS: '2',
        ANONYMOUS_LIMIT_POINTS: '3',
      });
    });
    afterAll(async () => {
      await t.stop();
    });

    it('puts the X-RateLimit headers on successes and on every kind of error response', async () => {
      const { apiKey } = await t.register();
      const ok = await t.api('GET', '/organizations/me', { key: apiKey });
      expectRateHeaders(ok.headers, 5);
      const notFound = await t.api('GET', '/no/such/route', { key: apiKey });
      expect(notFound.status).toBe(404);
      expectRateHeaders(notFound.headers, 5);
      const invalid = await t.api('PUT', '/organizations/me/settings', {
        key: apiKey,
        body: { brandColor: 'red' },
      });
      expect(invalid.status).toBe(400);
      expectRateHeaders(invalid.headers, 5);
      const unauthorized = await t.api('GET', '/organizations/me', { key: 'pik_reg_nope' });
      expect(unauthorized.status).toBe(401);
      expectRateHeaders(unauthorized.headers, 3);
      const registered = await t.api('POST', '/auth/register-organization', {
        body: { name: 'Headers Co', type: 'COOPERATIVE', countryCode: 'KE' },
      });
      expectRateHeaders(registered.headers, t.config.REGISTRATION_LIMIT_POINTS);
    });

    it('counts each organization separately', async () => {
      const a = await t.register();
      const b = await t.register();
      for (let i = 0; i < 5; i++) await t.api('GET', '/organizations/me', { key: a.apiKey });
      expect((await t.api('GET', '/organizations/me', { key: a.apiKey })).status).toBe(429);
      const other = await t.api('GET', '/organizations/me', { key: b.apiKey });
      expect(other.status).toBe(200);
      expect(other.headers.get('x-ratelimit-remaining')).toBe('4');
    });

    it('limits POST /payments/initiate on its own tighter budget and reports it in the headers', async () => {
      const { apiKey } = await t.register();
      for (let i = 0; i < 2; i++) {
        const reply = await t.api('POST', '/payments/initiate', { key: apiKey, body: {} });
        // No payments service is configured yet: the request passes the limiter and gets 503.
        expect(reply.status).toBe(503);
        expectRateHeaders(reply.headers, 2);
      }
      const refused = await t.api('POST', '/payments/initiate', { key: apiKey, body: {} });
      expect(refused.status).toBe(429);
      expect(refused.body.error.details).toEqual({ limit: 2, retryAfter: expect.any(Number) });
      expect(refused.body.error.details.retryAfter).toBeGreaterThan(60);
      // Other routes still have budget left in the general window.
      expect((await t.api('GET', '/organizations/me', { key: apiKey })).status).toBe(200);
    });

    it('limits requests without a valid key by client IP', async () => {
      const anonymous = await startTestGateway({ ANONYMOUS_LIMIT_POINTS: '2' });
      try {
        expect((await anonymous.api('GET', '/organizations/me')).status).toBe(401);
        expect((await anonymous.api('GET', '/organizations/me', { key: 'guess-1' })).status).toBe(401);
        const refused = await anonymous.api('GET', '/organizations/me', { key: 'guess-2' });
        expect(refused.status).toBe(429);
        expect(refused.body.error.details.limit).toBe(2);
      } finally {
        await anonymous.stop();
      }
    });

    it('shares the count between gateway replicas through Redis', async () => {
      const replica = await startTestGateway({
        REDIS_PREFIX: t.config.REDIS_PREFIX,
        MONGO_DB: t.config.MONGO_DB,
        RATE_LIMIT_POINTS: '5',
      });
      try {
        const { apiKey } = await t.register();
        for (let i = 0; i < 3; i++)
          expect((await t.api('GET', '/organizations/me', { key: apiKey })).status).toBe(200);
        const onReplica = await replica.api('GET', '/organizations/me', { key: apiKey });
        expect(onReplica.headers.get('x-ratelimit-remaining')).toBe('1');
        await replica.api('GET', '/organizations/me', { key: apiKey });
        expect((await t.api('GET', '/organizations/me', { key: apiKey })).status).toBe(429);
      } finally {
        await replica.gateway.stop();
        await replica.db.close();
      }
    });
  });

  it('limits registrations per client IP', async () => {
    const t = await startTestGateway({ REGISTRATION_LIMIT_POINTS: '2' });
    try {
      await t.register();
      await t.register();
      const refused = await t.api('POST', '/auth/register-organization', {
        body: { name: 'Third', type: 'COOPERATIVE', countryCode: 'KE' },
      });
      expect(refused.status).toBe(429);
      expect(refused.body.error.details.limit).toBe(2);
      expect(await t.db.collection('organizations').countDocuments()).toBe(2);
    } finally {
      await t.stop();
    }
  });
});
