import { startTestGateway, type TestGateway } from './support';

describe('API keys', () => {
  let t: TestGateway;
  beforeAll(async () => {
    t = await startTestGateway();
  });
  afterAll(async () => {
    await t.stop();
  });

  it('GET /organizations/me/api-key shows masked metadata, never the key', async () => {
    const { apiKey } = await t.register();
    const reply = await t.api('GET', '/organizations/me/api-key', { key: apiKey });
    expect(reply.status).toBe(200);
    expect(reply.body.data).toEqual({
      keyPrefix: apiKey.slice(0, 12),
      last4: apiKey.slice(-4),
      masked: `${apiKey.slice(0, 12)}********${apiKey.slice(-4)}`,
      active: true,
      rotatedAt: null,
      createdAt: expect.any(String),
    });
    expect(JSON.stringify(reply.body)).not.toContain(apiKey);
  });

  it('rotation returns a new key and secret once; the old key is rejected on the very next request', async () => {
    const { apiKey } = await t.register();
    const rotated = await t.api('POST', '/organizations/me/api-key/rotate', { key: apiKey });
    expect(rotated.status).toBe(200);
    expect(rotated.body.data).toEqual({
      apiKey: expect.stringMatching(/^pik_rot_/),
      apiSecret: expect.stringMatching(/^pis_/),
    });
    const fresh = rotated.body.data.apiKey as string;
    expect(fresh).not.toBe(apiKey);

    const old = await t.api('GET', '/organizations/me', { key: apiKey });
    expect(old.status).toBe(401);
    expect(old.body.error.code).toBe('UNAUTHORIZED');
    expect((await t.api('GET', '/organizations/me', { key: fresh })).status).toBe(200);
    const meta = await t.api('GET', '/organizations/me/api-key', { key: fresh });
    expect(meta.body.data.rotatedAt).toEqual(expect.any(String));
    expect(meta.body.data.last4).toBe(fresh.slice(-4));
  });

  it('revoke answers metadata with active:false and the key stops working; the organization still exists', async () => {
    const { id, apiKey } = await t.register();
    const revoked = await t.api('POST', '/organizations/me/api-key/revoke', { key: apiKey });
    expect(revoked.status).toBe(200);
    expect(revoked.body.data).toMatchObject({ active: false, last4: apiKey.slice(-4) });
    expect((await t.api('GET', '/organizations/me', { key: apiKey })).status).toBe(401);
    expect((await t.ops('GET', `/organizations/${id}`)).body.data.apiKey.active).toBe(false);
  });

  it('a revoked organization is made active again by rotating (through the ops API)', async () => {
    const { id, apiKey } = await t.register();
    await t.api('POST', '/organizations/me/api-key/revoke', { key: apiKey });
    const rotated = await t.ops('POST', `/organizations/${id}/api-key/rotate`);
    expect(rotated.status).toBe(200);
    const fresh = rotated.body.data.apiKey as string;
    expect(fresh).toMatch(/^pik_ops_/);
    const me = await t.api('GET', '/organizations/me/api-key', { key: fresh });
    expect(me.status).toBe(200);
    expect(me.body.data.active).toBe(true);
    expect((await t.api('GET', '/organizations/me', { key: apiKey })).status).toBe(401);
  });

  it('rotating one organization leaves the others untouched', async () => {
    const a = await t.register();
    const b = await t.register();
    await t.api('POST', '/organizations/me/api-key/rotate', { key: a.apiKey });
    expect((await t.api('GET', '/organizations/me', { key: b.apiKey })).status).toBe(200);
  });
});
