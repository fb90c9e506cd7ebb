import { randomUUID } from 'node:crypto';
import {
  cropPurchase,
  type PolicyPlatform,
  type SellableOrg,
  sellableOrg,
  startPolicyPlatform,
} from './support';

describe('policy look-up through the ops API', () => {
  let p: PolicyPlatform;
  beforeAll(async () => {
    p = await startPolicyPlatform();
  });
  afterAll(async () => {
    await p.stop();
  });

  const buy = async (org: SellableOrg, overrides: Record<string, unknown> = {}) => {
    const reply = await p.gateway.api('POST', '/policies/purchase', {
      key: org.apiKey,
      body: cropPurchase(org, overrides),
    });
    if (reply.status !== 201) throw new Error(`purchase failed: ${JSON.stringify(reply.body)}`);
    return reply.body.data.policy as { id: string; policyNumber: string };
  };

  it('reads any organization’s policy by id and by number: the partner view plus organization, exact money and capacity state', async () => {
    const [a, b] = await Promise.all([sellableOrg(p), sellableOrg(p)]);
    const [aPolicy, bPolicy] = await Promise.all([
      buy(a, { sumInsured: 123_456.78 }),
      buy(b, { sumInsured: 50_000 }),
    ]);
    const partnerView = (await p.gateway.api('GET', `/policies/${aPolicy.id}`, { key: a.apiKey })).body.data;

    const byId = await p.gateway.ops('GET', `/policies/${aPolicy.id}`);
    expect(byId.status).toBe(200);
    expect(byId.body.data).toEqual({
      ...partnerView,
      organizationId: a.id,
      exponent: 2,
      sumInsuredMinor: '12345678',
      premiumMinor: expect.stringMatching(/^[1-9]\d*$/),
      expiredAt: null,
      capacityReleasedAt: null,
      environment: 'live',
    });
    expect(Number(byId.body.data.premiumMinor) / 100).toBe(partnerView.premium);
    expect(byId.body.data).toMatchObject({ status: 'PENDING', productType: 'CROP', currency: 'KES' });

    const byNumber = await p.gateway.ops('GET', `/policies/by-number/${aPolicy.policyNumber}`);
    expect(byNumber.status).toBe(200);
    expect(byNumber.body.data).toEqual(byId.body.data);

    // Ops are not an organization: every organization's policies are theirs to read.
    const other = await p.gateway.ops('GET', `/policies/by-number/${bPolicy.policyNumber}`);
    expect(other.body.data).toMatchObject({
      id: bPolicy.id,
      organizationId: b.id,
      sumInsuredMinor: '5000000',
    });
  });

  it('looks many policies up at once by id and number, each found once, the unknown left out', async () => {
    const [a, b] = await Promise.all([sellableOrg(p), sellableOrg(p)]);
    const [aPolicy, bPolicy] = await Promise.all([buy(a), buy(b)]);
    const reply = await p.gateway.ops('POST', '/policies/lookup', {
      body: {
        policyIds: [aPolicy.id, randomUUID()],
        policyNumbers: [bPolicy.policyNumber, aPolicy.policyNumber, 'KE-209901-ZZZZZZ', 'not a number'],
      },
    });
    expect(reply.status).toBe(200);
    const found = reply.body.data.policies as { id: string }[];
    const single = async (id: string) => (await p.gateway.ops('GET', `/policies/${id}`)).body.data;
    expect([...found].sort((x, y) => x.id.localeCompare(y.id))).toEqual(
      [await single(aPolicy.id), await single(bPolicy.id)].sort((x, y) => x.id.localeCompare(y.id)),
    );

    const none = await p.gateway.ops('POST', '/policies/lookup', { body: {} });
    expect([none.status, none.body.data]).toEqual([200, { policies: [] }]);
    const tooMany = await p.gateway.ops('POST', '/policies/lookup', {
      body: { policyIds: Array.from({ length: 1_001 }, () => randomUUID()) },
    });
    expect([tooMany.status, tooMany.body.error.code]).toEqual([400, 'INVALID_INPUT']);
  });

  it('answers 404 for an unknown id or number, 400 for a malformed one', async () => {
    const unknownId = await p.gateway.ops('GET', `/policies/${randomUUID()}`);
    expect([unknownId.status, unknownId.body.error.code]).toEqual([404, 'NOT_FOUND']);
    const unknownNumber = await p.gateway.ops('GET', '/policies/by-number/KE-209901-ZZZZZZ');
    expect([unknownNumber.status, unknownNumber.body.error.code]).toEqual([404, 'NOT_FOUND']);

    const badId = await p.gateway.ops('GET', '/policies/not-a-uuid');
    expect([badId.status, badId.body.error.code]).toEqual([400, 'INVALID_INPUT']);
    const badNumber = await p.gateway.ops('GET', '/policies/by-number/ke-2026');
    expect([badNumber.status, badNumber.body.error.code]).toEqual([400, 'INVALID_INPUT']);
    expect(badNumber.body.error.details).toEqual([
      { field: 'policyNumber', message: 'must be a policy number such as KE-202611-7K3Q9X' },
    ]);
  });

  it('needs the ops token: a partner key is refused there, and the partner API has no such route', async () => {
    const org = await sellableOrg(p);
    const policy = await buy(org);
    const asPartner = await p.gateway.ops('GET', `/policies/${policy.id}`, {
      headers: { authorization: `Bearer ${org.apiKey}` },
    });
    expect(asPartner.status).toBe(401);
    const partnerPort = await p.gateway.api('GET', `/policies/by-number/${policy.policyNumber}`, {
      key: org.apiKey,
    });
    expect(partnerPort.status).toBe(404);
  });
});
