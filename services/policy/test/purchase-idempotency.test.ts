import { request as httpRequest } from 'node:http';
import {
  cropPurchase,
  type PolicyPlatform,
  type SellableOrg,
  sellableOrg,
  startPolicyPlatform,
} from './support';

/** The `Idempotency-Key` of POST /policies/purchase, over HTTP through the gateway. */
describe('POST /policies/purchase with an Idempotency-Key', () => {
  let p: PolicyPlatform;
  beforeAll(async () => {
    p = await startPolicyPlatform();
  });
  afterAll(async () => {
    await p.stop();
  });

  const buy = (org: SellableOrg, body: unknown, key?: string) =>
    p.gateway.api('POST', '/policies/purchase', {
      key: org.apiKey,
      body,
      headers: key === undefined ? {} : { 'Idempotency-Key': key },
    });
  const reserved = async (org: SellableOrg) =>
    (await p.gateway.ops('GET', `/organizations/${org.id}/underwriting`)).body.data.capacity.reserved;
  const policiesOf = (org: SellableOrg) =>
    p.db.collection('policies').countDocuments({ organizationId: org.id });

  it('reaches the service through the gateway: a repeat answers the same policy, marked Idempotent-Replayed', async () => {
    const org = await sellableOrg(p);
    const body = cropPurchase(org, { sumInsured: 20_000 });
    const first = await buy(org, body, 'gw-order-1');
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const reservedAfterFirst = await reserved(org);

    // Header names are case-insensitive.
    const again = await p.gateway.api('POST', '/policies/purchase', {
      key: org.apiKey,
      body,
      headers: { 'idempotency-key': 'gw-order-1' },
    });
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    expect(await reserved(org)).toBe(reservedAfterFirst);
    expect(await policiesOf(org)).toBe(1);

    const other = await buy(org, cropPurchase(org, { sumInsured: 20_001 }), 'gw-order-1');
    expect([other.status, other.body.error.code]).toEqual([409, 'CONFLICT']);
    expect(other.body.error.details).toEqual([
      { field: 'Idempotency-Key', message: 'already used with a different request body' },
    ]);
    expect(await policiesOf(org)).toBe(1);
  });

  it('concurrent requests with one key buy one policy', async () => {
    const org = await sellableOrg(p, { capacity: 100_000 });
    const body = cropPurchase(org, { sumInsured: 60_000 });
    const answers = await Promise.all(Array.from({ length: 5 }, () => buy(org, body, 'gw-order-2')));
    expect(answers.map((a) => a.status)).toEqual([201, 201, 201, 201, 201]);
    expect(new Set(answers.map((a) => a.body.data.policy.id)).size).toBe(1);
    expect(answers.filter((a) => a.headers.get('idempotent-replayed') === 'true')).toHaveLength(4);
    expect(await policiesOf(org)).toBe(1);
    expect(await reserved(org)).toBe('60000.00');
  });

  it('refuses a malformed key with 400 INVALID_INPUT naming the header, before anything is bought', async () => {
    const org = await sellableOrg(p);
    const body = cropPurchase(org);
    for (const key of ['', 'x'.repeat(256), 'naïve-key']) {
      const reply = await p.gateway.api('POST', '/policies/purchase', {
        key: org.apiKey,
        body,
        headers: { 'Idempotency-Key': key },
      });
      expect([reply.status, reply.body.error?.code]).toEqual([400, 'INVALID_INPUT']);
      expect(reply.body.error.details).toEqual([
        { field: 'Idempotency-Key', message: 'must be 1 to 255 printable ASCII characters' },
      ]);
    }
    // Raw requests: a tab, a byte outside ASCII, or the header twice (never joined into one key).
    const raw = (key: string | string[]) =>
      new Promise<{
        status: number;
        body: { error?: { code?: string; details?: Array<{ field: string }> } };
      }>((resolve, reject) => {
        const payload = JSON.stringify(body);
        const url = new URL(p.gateway.gateway.partnerUrl);
        const req = httpRequest(
          {
            host: url.hostname,
            port: url.port,
            method: 'POST',
            path: `${url.pathname}/policies/purchase`,
            headers: { 'x-api-key': org.apiKey, 'content-type': 'application/json', 'Idempotency-Key': key },
          },
          (res) => {
            let text = '';
            res.on('data', (c) => {
              text += c;
            });
            res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
          },
        );
        req.on('error', reject);
        req.end(payload);
      });
    for (const key of ['a\tb', 'caf\xe9', ['key-1', 'key-2'], ['key-1', 'key-1']]) {
      const reply = await raw(key);
      expect([reply.status, reply.body.error?.code, reply.body.error?.details?.[0]?.field]).toEqual([
        400,
        'INVALID_INPUT',
        'Idempotency-Key',
      ]);
    }
    expect(await policiesOf(org)).toBe(0);
    // 255 characters is the longest accepted.
    expect((await buy(org, body, 'k'.repeat(255))).status).toBe(201);
  });
});
