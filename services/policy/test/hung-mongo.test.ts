import { type FreezableProxy, freezableProxy, testMongoUrl } from '@parametric/test-harness';
import {
  cropPurchase,
  type PolicyPlatform,
  type SellableOrg,
  sellableOrg,
  startPolicyPlatform,
} from './support';

/**
 * Issue 14, row 2: MongoDB hangs (bytes stop moving, connections stay open). Partners get a
 * definite `503` at the request deadline instead of a hung request, `/readyz` says not ready,
 * and everything works again once MongoDB answers.
 */
describe('the policy service while its MongoDB hangs', () => {
  let proxy: FreezableProxy;
  let p: PolicyPlatform;
  let org: SellableOrg;
  let policyId: string;

  beforeAll(async () => {
    const target = new URL(testMongoUrl());
    proxy = await freezableProxy({ host: target.hostname, port: Number(target.port) });
    p = await startPolicyPlatform(
      { MONGO_URL: `mongodb://${proxy.address}/?directConnection=true`, REQUEST_DEADLINE_MS: '3000' },
      // The gateway waits longer than the service, so the service's own answer comes through.
      { REQUEST_DEADLINE_MS: '6000' },
    );
    org = await sellableOrg(p);
    const bought = await p.gateway.api('POST', '/policies/purchase', {
      key: org.apiKey,
      body: cropPurchase(org),
    });
    expect(bought.status).toBe(201);
    policyId = bought.body.data.policy.id;
  });

  afterAll(async () => {
    proxy.thaw();
    await p.stop();
    await proxy.stop();
  });

  it('answers 503 SERVICE_UNAVAILABLE at the deadline, says not ready, and recovers after', async () => {
    proxy.freeze();
    try {
      // The proxy stays frozen until both answers are in: they can only come from the deadline
      // and the readiness check's own bound, never from MongoDB.
      const [read, ready] = await Promise.all([
        p.gateway.api('GET', `/policies/${policyId}`, { key: org.apiKey }),
        fetch(`${p.policy.url}/readyz`),
      ]);
      expect(read.status).toBe(503);
      expect(read.body.error.code).toBe('SERVICE_UNAVAILABLE');
      expect(read.body.error.message).toMatch(/did not complete within 3 s/);
      expect(read.headers.get('retry-after')).toBe('5');
      expect(ready.status).toBe(503);
      expect(await ready.json()).toMatchObject({ status: 'not ready', checks: { mongo: false } });
    } finally {
      proxy.thaw();
    }
    const after = await p.gateway.api('GET', `/policies/${policyId}`, { key: org.apiKey });
    expect(after.status).toBe(200);
    expect(after.body.data.id).toBe(policyId);
    expect((await fetch(`${p.policy.url}/readyz`)).status).toBe(200);
  });
});
