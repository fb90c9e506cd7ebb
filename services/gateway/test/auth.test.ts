import { createLogger } from '@parametric/logger';
import { captureLogs } from '@parametric/test-harness';
import { startGateway } from '../src/gateway';
import { call, startTestGateway, type TestGateway, testConfig } from './support';

describe('authentication', () => {
  let t: TestGateway;
  beforeAll(async () => {
    t = await startTestGateway();
  });
  afterAll(async () => {
    await t.stop();
  });

  it('answers 401 UNAUTHORIZED without an x-api-key header', async () => {
    const reply = await t.api('GET', '/organizations/me');
    expect(reply.status).toBe(401);
    expect(reply.body).toEqual({
      success: false,
      error: { code: 'UNAUTHORIZED', message: 'Missing x-api-key header' },
    });
  });

  it.each([
    ['an unknown key', 'pik_reg_0000000000000000000000000000000000000000'],
    ['an empty-looking key', ' '],
    ['an absurdly long key', 'x'.repeat(5000)],
  ])('answers 401 UNAUTHORIZED for %s', async (_what, key) => {
    const reply = await t.api('GET', '/organizations/me', { key });
    expect(reply.status).toBe(401);
    expect(reply.body.error.code).toBe('UNAUTHORIZED');
  });

  it('answers 401 on every partner route except registration, before revealing whether the route exists', async () => {
    for (const path of ['/organizations/me/api-key', '/policies/purchase', '/no/such/route', '/me/wallet']) {
      expect((await t.api('GET', path)).status).toBe(401);
    }
  });

  it('answers 403 FORBIDDEN for a deactivated organization, and 200 again once it is reactivated', async () => {
    const { id, apiKey } = await t.register();
    expect((await t.ops('POST', `/organizations/${id}/deactivate`)).status).toBe(200);
    const denied = await t.api('GET', '/organizations/me', { key: apiKey });
    expect(denied.status).toBe(403);
    expect(denied.body.error).toEqual({ code: 'FORBIDDEN', message: 'Organization is deactivated' });
    await t.ops('POST', `/organizations/${id}/activate`);
    expect((await t.api('GET', '/organizations/me', { key: apiKey })).status).toBe(200);
  });

  it('ignores an organization id a partner puts in headers: the key alone decides', async () => {
    const a = await t.register({ name: 'Header Org A' });
    const b = await t.register({ name: 'Header Org B' });
    const reply = await t.api('GET', '/organizations/me', {
      key: a.apiKey,
      headers: {
        'x-organization-id': b.id,
        'x-internal-context': 'forged',
        'x-internal-signature': 'forged',
      },
    });
    expect(reply.body.data.id).toBe(a.id);
  });
});

describe('secrets in logs', () => {
  it('never writes an API key or secret to the log, even at debug level', async () => {
    const logs = captureLogs();
    const gateway = await startGateway(
      testConfig(),
      createLogger({ name: 'gateway', level: 'trace', destination: logs.destination }),
    );
    try {
      const registered = await call('POST', `${gateway.partnerUrl}/auth/register-organization`, {
        body: { name: 'Log Check', type: 'COOPERATIVE', countryCode: 'KE' },
      });
      const { apiKey, apiSecret } = registered.body.data.organization;
      await call('GET', `${gateway.partnerUrl}/organizations/me`, { key: apiKey });
      const rotated = await call('POST', `${gateway.partnerUrl}/organizations/me/api-key/rotate`, {
        key: apiKey,
      });
      await call('GET', `${gateway.partnerUrl}/organizations/me`, {
        key: 'pik_reg_wrongwrongwrongwrongwrongwrongwrongwrong',
      });
      const log = logs.text();
      expect(log).toContain('/organizations/me');
      for (const secret of [
        apiKey,
        apiSecret,
        rotated.body.data.apiKey,
        rotated.body.data.apiSecret,
        'pik_reg_wrongwrong',
      ]) {
        expect(log).not.toContain(secret);
      }
      // The requests that carried a key were logged, and their lines name no credential header.
      const lines = logs.records().filter((r) => r.msg === 'request completed');
      expect(lines.length).toBeGreaterThanOrEqual(4);
      expect(JSON.stringify(lines)).not.toMatch(/x-api-key|authorization/i);
    } finally {
      await gateway.stop();
    }
  });
});
