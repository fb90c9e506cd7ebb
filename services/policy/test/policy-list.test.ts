import {
  cropPurchase,
  farmerBody,
  herdBody,
  type PolicyPlatform,
  plotBody,
  type SellableOrg,
  sellableOrg,
  startPolicyPlatform,
} from './support';

// GET /policies (docs/api.md, "Listing policies"): the organization's policies, newest first,
// paginated, filtered, through the gateway as partners call it.
describe('GET /policies', () => {
  let p: PolicyPlatform;
  let org: SellableOrg;
  let other: SellableOrg;
  /** Ids of org's policies in the order they were bought. */
  const bought: string[] = [];
  let secondFarmerId: string;
  let livestockId: string;
  let tier2Id: string;
  let activeId: string;

  const list = (key: string, query = '') => p.gateway.api('GET', `/policies${query}`, { key });
  const ids = (reply: { body: { data: { id: string }[] } }) => reply.body.data.map((x) => x.id);
  const buy = async (key: string, body: unknown) => {
    const reply = await p.gateway.api('POST', '/policies/purchase', { key, body });
    if (reply.status !== 201) throw new Error(JSON.stringify(reply.body));
    return reply.body.data.policy.id as string;
  };

  beforeAll(async () => {
    p = await startPolicyPlatform();
    org = await sellableOrg(p, { capacity: 10_000_000 });
    other = await sellableOrg(p);
    await buy(other.apiKey, cropPurchase(other));

    bought.push(await buy(org.apiKey, cropPurchase(org)));
    const farmer = (await p.gateway.api('POST', '/farmers', { key: org.apiKey, body: farmerBody() })).body
      .data;
    secondFarmerId = farmer.id;
    await p.gateway.ops('POST', `/farmers/${farmer.id}/kyc`, { body: { status: 'APPROVED' } });
    const herd = (await p.gateway.api('POST', '/herds', { key: org.apiKey, body: herdBody(farmer.id) })).body
      .data;
    livestockId = await buy(org.apiKey, {
      farmerId: farmer.id,
      productType: 'LIVESTOCK',
      herdId: herd.id,
      season: 'LRLD',
    });
    bought.push(livestockId);
    const plot = (await p.gateway.api('POST', '/plots', { key: org.apiKey, body: plotBody(farmer.id) })).body
      .data;
    bought.push(await buy(org.apiKey, cropPurchase({ farmerId: farmer.id, plotId: plot.id })));
    activeId = bought[0] as string;
    const activated = await p.gateway.api('PUT', `/policies/${activeId}/activate`, { key: org.apiKey });
    if (activated.status !== 200) throw new Error(JSON.stringify(activated.body));
    const tier = await p.gateway.ops('POST', `/organizations/${org.id}/service-tier`, {
      body: { serviceTier: 'DETERMINATION_AND_SETTLEMENT' },
    });
    if (tier.status !== 200) throw new Error(JSON.stringify(tier.body));
    tier2Id = await buy(org.apiKey, cropPurchase(org));
    bought.push(tier2Id);
  });
  afterAll(async () => {
    await p.stop();
  });

  it("lists only the caller's policies, newest first, in the success envelope with pagination", async () => {
    const reply = await list(org.apiKey);
    expect(reply.status).toBe(200);
    expect(reply.body.success).toBe(true);
    expect(ids(reply)).toEqual([...bought].reverse());
    expect(reply.body.pagination).toEqual({ page: 1, limit: 20, total: 4, totalPages: 1 });
    // The same view as GET /policies/{id}.
    const one = await p.gateway.api('GET', `/policies/${livestockId}`, { key: org.apiKey });
    expect(reply.body.data.find((x: { id: string }) => x.id === livestockId)).toEqual(one.body.data);

    const theirs = await list(other.apiKey);
    expect(ids(theirs)).toHaveLength(1);
    expect(ids(theirs)).not.toContain(bought[0]);
    expect(theirs.body.pagination.total).toBe(1);
  });

  it('pages through the same order without repeating or skipping, with totals', async () => {
    const first = await list(org.apiKey, '?limit=3');
    const second = await list(org.apiKey, '?limit=3&page=2');
    expect(first.body.pagination).toEqual({ page: 1, limit: 3, total: 4, totalPages: 2 });
    expect(second.body.pagination).toEqual({ page: 2, limit: 3, total: 4, totalPages: 2 });
    expect([...ids(first), ...ids(second)]).toEqual([...bought].reverse());
    const beyond = await list(org.apiKey, '?limit=3&page=3');
    expect([beyond.status, beyond.body.data, beyond.body.pagination.total]).toEqual([200, [], 4]);
  });

  it('filters by status, farmerId, productType and settlementMode, and the filters combine', async () => {
    expect(ids(await list(org.apiKey, '?status=ACTIVE'))).toEqual([activeId]);
    expect(ids(await list(org.apiKey, `?farmerId=${secondFarmerId}`))).toEqual([bought[2], livestockId]);
    expect(ids(await list(org.apiKey, '?productType=LIVESTOCK'))).toEqual([livestockId]);
    expect(ids(await list(org.apiKey, '?settlementMode=DETERMINATION_AND_SETTLEMENT'))).toEqual([tier2Id]);
    const combined = await list(org.apiKey, `?farmerId=${secondFarmerId}&productType=CROP&status=PENDING`);
    expect(ids(combined)).toEqual([bought[2]]);
    expect(combined.body.pagination.total).toBe(1);
    expect(ids(await list(org.apiKey, `?farmerId=${org.farmerId}&settlementMode=DETERMINATION`))).toEqual([
      activeId,
    ]);
    // Another organization's farmer finds nothing here.
    expect((await list(org.apiKey, `?farmerId=${other.farmerId}`)).body.pagination.total).toBe(0);
  });

  it('refuses bad filters, unknown parameters and bad paging with INVALID_INPUT naming each', async () => {
    const bad = await list(org.apiKey, '?status=LIVE&productType=FISH&farmerId=abc&page=0&limit=x&sort=asc');
    expect(bad.status).toBe(400);
    expect(bad.body.success).toBe(false);
    expect(bad.body.error.code).toBe('INVALID_INPUT');
    expect(bad.body.error.details).toEqual(
      expect.arrayContaining([
        { field: 'status', message: 'must be one of PENDING, ACTIVE, EXPIRED, CANCELLED' },
        { field: 'productType', message: 'must be one of CROP, LIVESTOCK' },
        { field: 'farmerId', message: 'must be a uuid' },
        { field: 'page', message: 'must be at least 1' },
        { field: 'limit', message: 'must be a whole number' },
      ]),
    );
    expect(bad.body.error.message).toBe('Invalid query parameters');
    expect(bad.body.error.details).toContainEqual({
      field: 'sort',
      message:
        'Unknown query parameter: this endpoint takes page, limit, status, farmerId, productType, settlementMode',
    });
    const mode = await list(org.apiKey, '?settlementMode=TIER2');
    expect(mode.body.error.details).toEqual([
      { field: 'settlementMode', message: 'must be one of DETERMINATION, DETERMINATION_AND_SETTLEMENT' },
    ]);
  });

  it('orders policies created in the same millisecond by id, descending, so pages are stable', async () => {
    const [a, b] = [bought[1], bought[2]];
    const same = new Date('2026-01-01T00:00:00.000Z');
    await p.db
      .collection('policies')
      .updateMany({ _id: { $in: [a, b] } as never }, { $set: { createdAt: same } });
    const reply = await list(org.apiKey, `?farmerId=${secondFarmerId}`);
    expect(ids(reply)).toEqual([a, b].sort().reverse());
  });
});
