import { AppError, createApp, finishApp, organizationOf, requireInternalContext } from '@parametric/http';
import { freePort } from '@parametric/local-process';
import { createLogger } from '@parametric/logger';
import { call, serveStandIn, startTestGateway, type TestGateway } from './support';

const SECRET = 'test-internal-signing-secret-0123';

/**
 * A platform service as the gateway sees it: our own HTTP stack behind the real
 * `requireInternalContext` guard, echoing what it was asked.
 */
async function startService(): Promise<{ url: string; close(): Promise<void> }> {
  const logger = createLogger({ name: 'downstream', level: 'silent' });
  const app = createApp(logger);
  app.use('/api', requireInternalContext(SECRET));
  app.get('/api/policies/slow', () => {
    // Never answers: the gateway's timeout must cut it off.
  });
  app.get('/api/policies/stalls', (_req, res) => {
    // Headers, the start of a body, then nothing: the body must not hang the gateway either.
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write('{"success":');
  });
  app.get('/api/policies/context', (req, res) => {
    res.json({ success: true, data: req.context?.organization });
  });
  app.get('/api/policies/missing', () => {
    throw AppError.notFound('Policy');
  });
  app.get('/api/policies/:id', (req, res) => {
    res.json({
      success: true,
      data: {
        organizationId: organizationOf(req),
        url: req.originalUrl,
        requestId: req.context?.requestId,
      },
    });
  });
  app.post('/api/farmers', (req, res) => {
    res
      .status(201)
      .json({ success: true, data: { organizationId: organizationOf(req), received: req.body } });
  });
  app.get('/api/payouts', (_req, res) => {
    res.type('text/html').send('<html>proxy error</html>');
  });
  finishApp(app, logger);
  return serveStandIn(app);
}

describe('forwarding to the owning service', () => {
  let t: TestGateway;
  let service: Awaited<ReturnType<typeof startService>>;
  let org: { id: string; apiKey: string };

  beforeAll(async () => {
    service = await startService();
    t = await startTestGateway({
      POLICY_URL: service.url,
      PAYMENTS_URL: service.url,
      WEBHOOKS_URL: `http://127.0.0.1:${await freePort()}`,
      FORWARD_TIMEOUT_MS: '500',
    });
    org = await t.register();
  });
  afterAll(async () => {
    await t.stop();
    await service.close();
  });

  it('forwards with the path, query and a signed organization context the service verifies', async () => {
    const reply = await t.api('GET', '/policies/abc?verbose=1', {
      fromStandIn: true,
      key: org.apiKey,
      headers: { 'x-request-id': 'trace-7' },
    });
    expect(reply.status).toBe(200);
    expect(reply.body.data).toEqual({
      organizationId: org.id,
      url: '/api/policies/abc?verbose=1',
      requestId: 'trace-7',
    });
  });

  it("signs a sandbox organization's environment, and a live one's context as before (no environment)", async () => {
    const live = await t.api('GET', '/policies/context', { key: org.apiKey, fromStandIn: true });
    expect(live.body.data).toEqual({
      countryCode: 'KE',
      kybStatus: 'NOT_STARTED',
      serviceTier: 'DETERMINATION',
      isActive: true,
    });
    const sandbox = await t.register({ environment: 'sandbox' });
    const reply = await t.api('GET', '/policies/context', { key: sandbox.apiKey, fromStandIn: true });
    expect(reply.body.data).toEqual({
      countryCode: 'KE',
      kybStatus: 'VERIFIED',
      serviceTier: 'DETERMINATION',
      isActive: true,
      environment: 'sandbox',
    });
  });

  it('forwards JSON bodies and passes the service status through', async () => {
    const reply = await t.api('POST', '/farmers', {
      fromStandIn: true,
      key: org.apiKey,
      body: { firstName: 'Amina', lastName: 'Otieno' },
    });
    expect(reply.status).toBe(201);
    expect(reply.body.data).toEqual({
      organizationId: org.id,
      received: { firstName: 'Amina', lastName: 'Otieno' },
    });
  });

  it("passes the service's error envelope through unchanged", async () => {
    const reply = await t.api('GET', '/policies/missing', { key: org.apiKey, fromStandIn: true });
    expect(reply.status).toBe(404);
    expect(reply.body).toEqual({ success: false, error: { code: 'NOT_FOUND', message: 'Policy not found' } });
  });

  it('cannot be steered to another organization by headers a partner sets', async () => {
    const other = await t.register();
    const forged = await call('GET', `${service.url}/api/policies/x`, {
      headers: {
        'x-internal-context': Buffer.from(JSON.stringify({ organizationId: other.id })).toString('base64url'),
      },
    });
    expect(forged.status).toBe(401);
    const reply = await t.api('GET', '/policies/x', {
      fromStandIn: true,
      key: org.apiKey,
      headers: { 'x-internal-context': 'forged', 'x-internal-signature': 'forged' },
    });
    expect(reply.body.data.organizationId).toBe(org.id);
  });

  it('answers 503 SERVICE_UNAVAILABLE at once when the service is down', async () => {
    const reply = await t.api('GET', '/organizations/me/webhook', { key: org.apiKey });
    expect(reply.status).toBe(503);
    expect(reply.body.error.code).toBe('SERVICE_UNAVAILABLE');
    expect(reply.headers.get('retry-after')).toBe('5');
  });

  it('answers 503 when the service does not answer within the timeout, instead of hanging', async () => {
    const reply = await t.api('GET', '/policies/slow', { key: org.apiKey });
    expect(reply.status).toBe(503);
    expect(reply.body.error.code).toBe('SERVICE_UNAVAILABLE');
  });

  it('answers 503 with Retry-After when the service starts answering and then stalls', async () => {
    const reply = await t.api('GET', '/policies/stalls', { key: org.apiKey });
    expect([reply.status, reply.body.error.code]).toEqual([503, 'SERVICE_UNAVAILABLE']);
    expect(reply.headers.get('retry-after')).toBe('5');
  });

  it('answers 503 for a service that is not configured', async () => {
    const reply = await t.api('GET', '/determinations', { key: org.apiKey });
    expect(reply.status).toBe(503);
    expect(reply.body.error.message).toContain('determinations');
  });

  it('answers 503 SERVICE_UNAVAILABLE (never 502, which means the chain or the provider) when the service answers something other than JSON', async () => {
    const reply = await t.api('GET', '/payouts', { key: org.apiKey });
    expect(reply.status).toBe(503);
    expect(reply.headers.get('retry-after')).toBe('5');
    expect(reply.body.error.code).toBe('SERVICE_UNAVAILABLE');
    expect(JSON.stringify(reply.body)).not.toContain('<html>');
  });

  it('authenticates before forwarding: no key, no forwarding', async () => {
    const reply = await t.api('GET', '/policies/abc');
    expect(reply.status).toBe(401);
  });
});
