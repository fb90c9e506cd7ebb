import { Queue } from 'bullmq';
import { sandboxEnabled } from '../src/config';
import { startTestGateway, type TestGateway } from './support';

describe('sandbox organizations (docs/api.md, "Sandbox")', () => {
  let t: TestGateway;
  let events: Queue;
  beforeAll(async () => {
    t = await startTestGateway();
    events = new Queue('events', { connection: { url: t.config.REDIS_URL }, prefix: t.config.REDIS_PREFIX });
  });
  afterAll(async () => {
    await events.close();
    await t.stop();
  });

  const queuedEvents = async (organizationId: string) =>
    (await events.getJobs(['waiting', 'delayed', 'active', 'completed']))
      .map((j) => j.data)
      .filter((e) => e.organizationId === organizationId);

  it('registers a sandbox organization: sandbox credentials, KYB VERIFIED with its kyb.verified event', async () => {
    const reply = await t.api('POST', '/auth/register-organization', {
      body: { name: 'Sandbox Growers', type: 'COOPERATIVE', countryCode: 'KE', environment: 'sandbox' },
    });
    expect(reply.status).toBe(201);
    const organization = reply.body.data.organization;
    expect(organization).toMatchObject({ environment: 'sandbox', kybStatus: 'VERIFIED' });
    expect(organization.apiKey).toMatch(/^pik_sandbox_reg_[0-9A-Za-z]{40}$/);
    expect(organization.apiSecret).toMatch(/^pis_sandbox_[0-9A-Za-z]{48}$/);

    // The key authenticates (looked up by its hash) and the organization reads as sandbox.
    const me = await t.api('GET', '/organizations/me', { key: organization.apiKey });
    expect(me.status).toBe(200);
    expect(me.body.data).toMatchObject({
      id: organization.id,
      environment: 'sandbox',
      kybStatus: 'VERIFIED',
    });
    const key = await t.api('GET', '/organizations/me/api-key', { key: organization.apiKey });
    expect(key.body.data).toMatchObject({
      keyPrefix: 'pik_sandbox_',
      masked: expect.stringMatching(/^pik_sandbox_\*{8}/),
    });

    const ops = await t.ops('GET', `/organizations/${organization.id}`);
    expect(ops.body.data).toMatchObject({
      environment: 'sandbox',
      kybStatus: 'VERIFIED',
      kybNotes: expect.stringContaining('Sandbox'),
      kybUpdatedAt: expect.any(String),
      apiKey: { keyPrefix: 'pik_sandbox_' },
    });

    // The same outbox an ops decision writes to.
    await t.gateway.drainOutbox();
    expect(await queuedEvents(organization.id)).toEqual([
      expect.objectContaining({
        event: 'kyb.verified',
        organizationId: organization.id,
        data: { organizationId: organization.id, kybStatus: 'VERIFIED' },
      }),
    ]);
  });

  it('rotation, by the partner or by ops, gives a sandbox organization a sandbox key again', async () => {
    const org = await t.register({ environment: 'sandbox' });
    const rotated = await t.api('POST', '/organizations/me/api-key/rotate', { key: org.apiKey });
    expect(rotated.status).toBe(200);
    expect(rotated.body.data.apiKey).toMatch(/^pik_sandbox_rot_/);
    expect(rotated.body.data.apiSecret).toMatch(/^pis_sandbox_/);
    expect((await t.api('GET', '/organizations/me', { key: org.apiKey })).status).toBe(401);
    expect((await t.api('GET', '/organizations/me', { key: rotated.body.data.apiKey })).status).toBe(200);
    const byOps = await t.ops('POST', `/organizations/${org.id}/api-key/rotate`);
    expect(byOps.body.data.apiKey).toMatch(/^pik_sandbox_ops_/);
  });

  it('registers a live organization by default: live credentials, KYB NOT_STARTED, no event', async () => {
    const org = await t.register();
    expect(org.organization).toMatchObject({ environment: 'live', kybStatus: 'NOT_STARTED' });
    expect(org.apiKey).toMatch(/^pik_reg_/);
    expect(org.apiSecret).toMatch(/^pis_[0-9A-Za-z]{48}$/);
    const explicit = await t.register({ environment: 'live' });
    expect(explicit.organization.environment).toBe('live');
    expect((await t.api('GET', '/organizations/me', { key: org.apiKey })).body.data.environment).toBe('live');
    expect((await t.ops('GET', `/organizations/${org.id}`)).body.data.environment).toBe('live');
    const rotated = await t.api('POST', '/organizations/me/api-key/rotate', { key: org.apiKey });
    expect(rotated.body.data.apiKey).toMatch(/^pik_rot_/);
    await t.gateway.drainOutbox();
    expect(await queuedEvents(org.id)).toEqual([]);
  });

  it('refuses an environment other than sandbox or live, naming the field', async () => {
    const reply = await t.api('POST', '/auth/register-organization', {
      body: { name: 'Test Growers', type: 'COOPERATIVE', countryCode: 'KE', environment: 'test' },
    });
    expect(reply.status).toBe(400);
    expect(reply.body.error.code).toBe('INVALID_INPUT');
    expect(reply.body.error.details).toEqual([expect.objectContaining({ field: 'environment' })]);
  });

  it('moves a sandbox organization to settlement like a live one (its mobile money goes only to test numbers)', async () => {
    const org = await t.register({ environment: 'sandbox' });
    const settled = await t.ops('POST', `/organizations/${org.id}/service-tier`, {
      body: { serviceTier: 'DETERMINATION_AND_SETTLEMENT' },
    });
    expect(settled.status).toBe(200);
    expect((await t.ops('GET', `/organizations/${org.id}`)).body.data).toMatchObject({
      environment: 'sandbox',
      serviceTier: 'DETERMINATION_AND_SETTLEMENT',
    });
  });

  it('needs no other service: the policy service is not even configured here', async () => {
    const org = await t.register({ environment: 'sandbox' });
    expect((await t.api('GET', '/organizations/me', { key: org.apiKey })).status).toBe(200);
  });
});

describe('SANDBOX_ENABLED', () => {
  it('is on by default outside production and off in production, unless set', () => {
    expect(sandboxEnabled({ NODE_ENV: 'test', SANDBOX_ENABLED: undefined })).toBe(true);
    expect(sandboxEnabled({ NODE_ENV: 'development', SANDBOX_ENABLED: undefined })).toBe(true);
    expect(sandboxEnabled({ NODE_ENV: 'production', SANDBOX_ENABLED: undefined })).toBe(false);
    expect(sandboxEnabled({ NODE_ENV: 'production', SANDBOX_ENABLED: 'true' })).toBe(true);
    expect(sandboxEnabled({ NODE_ENV: 'test', SANDBOX_ENABLED: 'false' })).toBe(false);
  });

  it('switched off, a sandbox registration is 400 INVALID_INPUT naming environment and creates nothing', async () => {
    const t = await startTestGateway({ SANDBOX_ENABLED: 'false' });
    try {
      const before = await t.db.collection('organizations').countDocuments();
      const reply = await t.api('POST', '/auth/register-organization', {
        body: { name: 'Sandbox Growers', type: 'COOPERATIVE', countryCode: 'KE', environment: 'sandbox' },
      });
      expect(reply.status).toBe(400);
      expect(reply.body.error.code).toBe('INVALID_INPUT');
      expect(reply.body.error.details).toEqual([
        { field: 'environment', message: expect.stringContaining('sandbox is switched off') },
      ]);
      expect(await t.db.collection('organizations').countDocuments()).toBe(before);
      expect(await t.db.collection('api_keys').countDocuments()).toBe(before);
      // Live registration is untouched.
      expect((await t.register()).organization.environment).toBe('live');
    } finally {
      await t.stop();
    }
  });
});
