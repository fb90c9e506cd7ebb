import { parseExposition, type Sample, sampleValue } from '@parametric/metrics';
import {
  cropPurchase,
  type PolicyPlatform,
  sellableOrg,
  startPolicyPlatform,
} from '../../policy/test/support';
import { call, OPS_TOKEN, startTestGateway, type TestGateway } from './support';

/**
 * What an operator's Prometheus sees: the gateway's metrics on the ops port (behind the ops
 * token, never on the partner port), each service's own on its internal port.
 */

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i;

async function scrape(url: string, headers: Record<string, string> = {}): Promise<Sample[]> {
  const res = await fetch(url, { headers });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return parseExposition(await res.text());
}

const opsScrape = (g: TestGateway) =>
  scrape(`${g.gateway.opsUrl}/metrics`, { authorization: `Bearer ${OPS_TOKEN}` });

const requests = (samples: Sample[], labels: Record<string, string>) =>
  sampleValue(samples, 'http_request_duration_seconds_count', labels);

describe('a purchase through the gateway, then a scrape', () => {
  let p: PolicyPlatform;

  beforeAll(async () => {
    p = await startPolicyPlatform({ RUN_WORKERS: 'false' });
  });

  afterAll(async () => {
    await p?.stop();
  });

  it('counts the purchase under its route template on the gateway and the policy service, with no id in any label', async () => {
    const org = await sellableOrg(p);
    const purchase = { method: 'POST', route: '/api/policies/purchase', status: '201' };
    const gatewayBefore = await opsScrape(p.gateway);
    const policyBefore = await scrape(`${p.policy.url}/metrics`);

    const bought = await p.gateway.api('POST', '/policies/purchase', {
      key: org.apiKey,
      body: cropPurchase(org),
    });
    expect(bought.status).toBe(201);
    const policyId: string = bought.body.data.policy.id;
    expect(await p.gateway.api('GET', `/policies/${policyId}`, { key: org.apiKey })).toMatchObject({
      status: 200,
    });
    // A route that answers with an error is still named by its template.
    const unknown = crypto.randomUUID();
    expect(await p.gateway.api('GET', `/policies/${unknown}`, { key: org.apiKey })).toMatchObject({
      status: 404,
    });

    const gatewayAfter = await opsScrape(p.gateway);
    const policyAfter = await scrape(`${p.policy.url}/metrics`);
    expect(requests(gatewayAfter, { ...purchase, service: 'gateway' })).toBe(
      requests(gatewayBefore, { ...purchase, service: 'gateway' }) + 1,
    );
    expect(requests(policyAfter, { ...purchase, service: 'policy' })).toBe(
      requests(policyBefore, { ...purchase, service: 'policy' }) + 1,
    );
    // The read by id is labelled by its template on both sides, never by the policy's id.
    const read = { method: 'GET', route: '/api/policies/:id', status: '200' };
    expect(requests(gatewayAfter, read)).toBeGreaterThanOrEqual(1);
    expect(requests(policyAfter, read)).toBeGreaterThanOrEqual(1);
    const notFound = { method: 'GET', route: '/api/policies/:id', status: '404' };
    expect(requests(gatewayAfter, notFound)).toBe(requests(gatewayBefore, notFound) + 1);
    expect(requests(policyAfter, notFound)).toBe(requests(policyBefore, notFound) + 1);
    // The organization registered and set up through the ops API: templates too.
    expect(
      requests(gatewayAfter, { method: 'POST', route: '/ops/organizations/:id/kyb', status: '200' }),
    ).toBeGreaterThanOrEqual(1);

    for (const sample of [...gatewayAfter, ...policyAfter]) {
      for (const value of Object.values(sample.labels)) expect(value).not.toMatch(UUID);
    }
    // Node's process metrics and the gateway's queue, with the service label.
    expect(
      gatewayAfter.some((s) => s.name === 'process_cpu_seconds_total' && s.labels.service === 'gateway'),
    ).toBe(true);
    expect(gatewayAfter.some((s) => s.name === 'queue_jobs' && s.labels.queue === 'events')).toBe(true);
    expect(
      policyAfter.some(
        (s) =>
          s.name === 'queue_jobs' && s.labels.queue === 'policy-activations' && s.labels.state === 'waiting',
      ),
    ).toBe(true);
  });

  it('declares the domain metrics from the start, with bounded labels', async () => {
    const declared = async (url: string, headers: Record<string, string> = {}) => {
      const text = await (await fetch(url, { headers })).text();
      return new Set([...text.matchAll(/^# TYPE (\S+) \S+$/gm)].map((m) => m[1] as string));
    };
    const gateway = await declared(`${p.gateway.gateway.opsUrl}/metrics`, {
      authorization: `Bearer ${OPS_TOKEN}`,
    });
    for (const name of ['outbox_pending_documents', 'outbox_relay_lag_seconds']) {
      expect([name, gateway.has(name)]).toEqual([name, true]);
    }
    const policy = await declared(`${p.policy.url}/metrics`);
    for (const name of [
      'outbox_pending_documents',
      'outbox_relay_lag_seconds',
      'circuit_breaker_state',
      'circuit_breaker_transitions_total',
      'chain_activation_duration_seconds',
    ]) {
      expect([name, policy.has(name)]).toEqual([name, true]);
    }
    const samples = await opsScrape(p.gateway);
    expect(
      sampleValue(samples, 'outbox_pending_documents', { collection: 'organizations' }),
    ).toBeGreaterThanOrEqual(0);
    expect(
      samples.some((s) => s.name === 'outbox_pending_documents' && s.labels.collection === 'organizations'),
    ).toBe(true);
    const breakers = (await scrape(`${p.policy.url}/metrics`)).filter((s) =>
      s.name.startsWith('circuit_breaker'),
    );
    for (const s of breakers) {
      expect(s.labels.breaker).toBe('chain');
      if (s.name === 'circuit_breaker_transitions_total')
        expect(['open', 'half_open', 'closed']).toContain(s.labels.to);
    }
  });

  it('labels a request no route matched "unmatched", whatever its path', async () => {
    const path = `/nothing-here/${crypto.randomUUID()}`;
    const before = await opsScrape(p.gateway);
    expect((await call('GET', `${p.gateway.gateway.partnerUrl.replace(/\/api$/, '')}${path}`)).status).toBe(
      404,
    );
    const after = await opsScrape(p.gateway);
    const unmatched = { method: 'GET', route: 'unmatched', status: '404' };
    expect(requests(after, unmatched)).toBe(requests(before, unmatched) + 1);
  });
});

describe('where the gateway serves metrics', () => {
  let g: TestGateway;

  beforeAll(async () => {
    g = await startTestGateway({ RATE_LIMIT_POINTS: '2' });
  });

  afterAll(async () => {
    await g?.stop();
  });

  it('not on the partner port: /api/metrics is 404', async () => {
    const { apiKey } = await g.register();
    expect((await g.api('GET', '/metrics', { key: apiKey })).status).toBe(404);
  });

  it('on the ops port only with the ops token: 401 in the error envelope without it', async () => {
    const attempts: Array<Record<string, string>> = [{}, { authorization: 'Bearer not-the-ops-token' }];
    for (const headers of attempts) {
      const reply = await call('GET', `${g.gateway.opsUrl}/metrics`, { headers });
      expect(reply.status).toBe(401);
      expect(reply.body).toEqual({
        success: false,
        error: { code: 'UNAUTHORIZED', message: expect.any(String) },
      });
    }
    const samples = await opsScrape(g);
    expect(sampleValue(samples, 'auth_failures_total', { reason: 'ops_token' })).toBeGreaterThanOrEqual(2);
  });

  it('counts a refused API key by its reason, and a missing one', async () => {
    const before = await opsScrape(g);
    expect((await g.api('GET', '/organizations/me', { key: 'pk_live_not-a-key-of-anyone' })).status).toBe(
      401,
    );
    expect((await g.api('GET', '/organizations/me')).status).toBe(401);
    const after = await opsScrape(g);
    for (const reason of ['invalid_key', 'missing_key']) {
      expect(sampleValue(after, 'auth_failures_total', { reason })).toBe(
        sampleValue(before, 'auth_failures_total', { reason }) + 1,
      );
    }
    const refused = { method: 'GET', route: '/api/organizations/me', status: '401' };
    expect(requests(after, refused)).toBe(requests(before, refused) + 2);
  });

  it('counts a rate-limited request by limiter, never by organization', async () => {
    const { apiKey } = await g.register();
    const before = await opsScrape(g);
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++)
      statuses.push((await g.api('GET', '/organizations/me', { key: apiKey })).status);
    expect(statuses).toEqual([200, 200, 429]);
    const after = await opsScrape(g);
    expect(sampleValue(after, 'rate_limit_rejections_total', { limiter: 'partner' })).toBe(
      sampleValue(before, 'rate_limit_rejections_total', { limiter: 'partner' }) + 1,
    );
    const rejections = after.filter((s) => s.name === 'rate_limit_rejections_total');
    for (const sample of rejections)
      expect(Object.keys(sample.labels).sort()).toEqual(['limiter', 'service']);
  });
});
