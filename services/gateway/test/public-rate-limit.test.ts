import { startTestGateway, type TestGateway } from './support';

/**
 * Issue 22, row 13: every answer under `/api` carries `X-RateLimit-*` (docs/api.md, Rate
 * limits), including those of the routes that need no key: the documents, `OPTIONS`, sign-in,
 * the signing keys. They spend the per-client-address budget of callers without a key.
 */
describe('routes without a caller: the per-address limit and its headers', () => {
  let t: TestGateway;
  beforeAll(async () => {
    // One proxy hop, so each test speaks from its own address (X-Forwarded-For).
    t = await startTestGateway({ ANONYMOUS_LIMIT_POINTS: '4', TRUST_PROXY_HOPS: '1' });
  });
  afterAll(async () => {
    await t.stop();
  });

  let addresses = 0;
  const newAddress = () => `203.0.113.${++addresses}`;
  const from = (address: string, init: RequestInit = {}) => ({
    ...init,
    headers: { 'x-forwarded-for': address, ...(init.headers as Record<string, string>) },
  });
  const get = (path: string, address: string, init: RequestInit = {}) =>
    fetch(`${t.gateway.partnerUrl}${path}`, from(address, init));

  function expectHeaders(reply: Response, remaining: number) {
    expect(reply.headers.get('x-ratelimit-limit')).toBe('4');
    expect(reply.headers.get('x-ratelimit-remaining')).toBe(String(remaining));
    const reset = Number(reply.headers.get('x-ratelimit-reset'));
    const now = Math.floor(Date.now() / 1000);
    expect(reset).toBeGreaterThanOrEqual(now);
    expect(reset).toBeLessThanOrEqual(now + t.config.RATE_LIMIT_WINDOW_SECONDS + 1);
  }

  it.each([
    ['GET /api/openapi.json', '/openapi.json', {}, 200],
    ['GET /api/docs', '/docs', {}, 200],
    ['GET /api/docs/assets/init.js', '/docs/assets/init.js', {}, 200],
    ['OPTIONS /api/determinations', '/determinations', { method: 'OPTIONS' }, 204],
    ['OPTIONS on an unknown path', '/no-such-thing', { method: 'OPTIONS' }, 404],
    // No determinations service in this test: 503, still with the headers.
    ['GET /api/.well-known/jwks.json', '/.well-known/jwks.json', {}, 503],
    ['GET on an unknown path under /auth', '/auth/no-such-route', {}, 404],
  ] as const)('%s carries X-RateLimit-* of the per-address limit', async (_what, path, init, status) => {
    const address = newAddress();
    const first = await get(path, address, init as RequestInit);
    expect(first.status).toBe(status);
    expectHeaders(first, 3);
    // The next one from the same address spends the same budget.
    expectHeaders(await get(path, address, init as RequestInit), 2);
  });

  it('answers 429 RATE_LIMIT_EXCEEDED with details.limit and details.retryAfter once the address has spent it', async () => {
    const address = newAddress();
    // One budget for everything this address sends without a key.
    expect((await get('/openapi.json', address)).status).toBe(200);
    expect((await get('/docs', address)).status).toBe(200);
    expect((await get('/determinations', address, { method: 'OPTIONS' })).status).toBe(204);
    expect((await get('/organizations/me', address)).status).toBe(401);
    const refused = await get('/openapi.json', address);
    expect(refused.status).toBe(429);
    expectHeaders(refused, 0);
    const body = (await refused.json()) as {
      success: boolean;
      error: { code: string; details: { limit: number; retryAfter: number } };
    };
    expect(body.success).toBe(false);
    expect(body.error.code).toBe('RATE_LIMIT_EXCEEDED');
    expect(body.error.details).toEqual({ limit: 4, retryAfter: expect.any(Number) });
    expect(body.error.details.retryAfter).toBeGreaterThan(0);
    expect(body.error.details.retryAfter).toBeLessThanOrEqual(t.config.RATE_LIMIT_WINDOW_SECONDS);
    expect(refused.headers.get('retry-after')).toBe(String(body.error.details.retryAfter));
    expect((await get('/docs', address)).status).toBe(429);
    expect((await get('/determinations', address, { method: 'OPTIONS' })).status).toBe(429);

    // Another address is untouched, and so is an organization calling from the spent one:
    // its key spends the organization's budget, not the address's.
    const elsewhere = await get('/openapi.json', newAddress());
    expect(elsewhere.status).toBe(200);
    expectHeaders(elsewhere, 3);
    const { apiKey } = await t.register();
    const keyed = await get('/organizations/me', address, { headers: { 'x-api-key': apiKey } });
    expect(keyed.status).toBe(200);
    expect(keyed.headers.get('x-ratelimit-limit')).toBe(String(t.config.RATE_LIMIT_POINTS));
  });

  it('leaves the health probes outside the API alone', async () => {
    const address = newAddress();
    for (let i = 0; i < 6; i++) {
      const reply = await fetch(t.gateway.partnerUrl.replace(/\/api$/, '/healthz'), from(address));
      expect(reply.status).toBe(200);
      expect(reply.headers.get('x-ratelimit-limit')).toBeNull();
    }
  });
});
