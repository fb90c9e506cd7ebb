import { Queue } from 'bullmq';
import { call, OPS_TOKEN, startTestGateway, type TestGateway } from './support';

describe('ops API', () => {
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

  const queuedEvents = async () =>
    (await events.getJobs(['waiting', 'delayed', 'active', 'completed'])).map((j) => j.data);

  it('refuses requests without the bearer token, with a wrong one, or with a partner API key', async () => {
    const { id, apiKey } = await t.register();
    const url = `${t.gateway.opsUrl}/organizations/${id}`;
    expect((await call('GET', url)).status).toBe(401);
    expect((await call('GET', url, { headers: { authorization: `Bearer ${OPS_TOKEN}x` } })).status).toBe(401);
    expect((await call('GET', url, { headers: { authorization: OPS_TOKEN } })).status).toBe(401);
    expect((await call('GET', url, { key: apiKey })).status).toBe(401);
    const ok = await t.ops('GET', `/organizations/${id}`);
    expect(ok.status).toBe(200);
    expect(ok.body.data).toMatchObject({ id, kybStatus: 'NOT_STARTED', apiKey: { active: true } });
  });

  it('is not reachable on the partner port', async () => {
    const { id } = await t.register();
    const reply = await call('GET', `${t.gateway.partnerUrl.replace(/\/api$/, '')}/ops/organizations/${id}`, {
      headers: { authorization: `Bearer ${OPS_TOKEN}` },
    });
    expect(reply.status).toBe(404);
  });

  it('KYB VERIFIED updates the organization and puts kyb.verified on the events queue', async () => {
    const { id, apiKey } = await t.register();
    const reply = await t.ops('POST', `/organizations/${id}/kyb`, { body: { status: 'VERIFIED' } });
    expect(reply.status).toBe(200);
    expect(reply.body.data.kybStatus).toBe('VERIFIED');
    const requestId = reply.headers.get('x-request-id');
    expect((await t.api('GET', '/organizations/me', { key: apiKey })).body.data.kybStatus).toBe('VERIFIED');
    await t.gateway.drainOutbox();
    const mine = (await queuedEvents()).filter((e) => e.organizationId === id);
    expect(mine).toEqual([
      {
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        event: 'kyb.verified',
        createdAt: expect.any(String),
        organizationId: id,
        data: { organizationId: id, kybStatus: 'VERIFIED' },
        // The ops request's trace, for the delivery to continue (never sent to the partner).
        trace: { traceparent: expect.stringMatching(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/), requestId },
      },
    ]);
  });

  it('KYB REJECTED with notes emits kyb.rejected carrying the notes', async () => {
    const { id } = await t.register();
    await t.ops('POST', `/organizations/${id}/kyb`, {
      body: { status: 'REJECTED', notes: 'Registration certificate expired' },
    });
    await t.gateway.drainOutbox();
    const mine = (await queuedEvents()).filter((e) => e.organizationId === id);
    expect(mine.map((e) => [e.event, e.data])).toEqual([
      [
        'kyb.rejected',
        { organizationId: id, kybStatus: 'REJECTED', notes: 'Registration certificate expired' },
      ],
    ]);
  });

  it('repeating the current KYB status changes nothing and emits nothing more', async () => {
    const { id } = await t.register();
    await t.ops('POST', `/organizations/${id}/kyb`, { body: { status: 'VERIFIED' } });
    const again = await t.ops('POST', `/organizations/${id}/kyb`, { body: { status: 'VERIFIED' } });
    expect(again.status).toBe(200);
    await t.gateway.drainOutbox();
    expect((await queuedEvents()).filter((e) => e.organizationId === id)).toHaveLength(1);
  });

  it('rejects an invalid KYB status with 400, writing nothing and emitting nothing', async () => {
    const { id } = await t.register();
    for (const body of [{ status: 'APPROVED' }, { status: 'VERIFIED', extra: 1 }, {}]) {
      const reply = await t.ops('POST', `/organizations/${id}/kyb`, { body });
      expect(reply.status).toBe(400);
      expect(reply.body.error.code).toBe('INVALID_INPUT');
    }
    expect((await t.ops('GET', `/organizations/${id}`)).body.data.kybStatus).toBe('NOT_STARTED');
    await t.gateway.drainOutbox();
    expect((await queuedEvents()).filter((e) => e.organizationId === id)).toHaveLength(0);
  });

  it('answers 404 for an unknown organization and 400 for an id that is not a uuid', async () => {
    expect(
      (
        await t.ops('POST', '/organizations/6f1c2a8e-3b7d-4c5e-9f0a-1b2c3d4e5f60/kyb', {
          body: { status: 'VERIFIED' },
        })
      ).status,
    ).toBe(404);
    const bad = await t.ops('GET', '/organizations/not-a-uuid');
    expect(bad.status).toBe(400);
    expect(bad.body.error.details[0].field).toBe('id');
  });

  it('sets the service tier, validating it', async () => {
    const { id, apiKey } = await t.register();
    const reply = await t.ops('POST', `/organizations/${id}/service-tier`, {
      body: { serviceTier: 'DETERMINATION_AND_SETTLEMENT' },
    });
    expect(reply.status).toBe(200);
    expect((await t.api('GET', '/organizations/me', { key: apiKey })).body.data.serviceTier).toBe(
      'DETERMINATION_AND_SETTLEMENT',
    );
    expect(
      (await t.ops('POST', `/organizations/${id}/service-tier`, { body: { serviceTier: 'GOLD' } })).status,
    ).toBe(400);
  });

  it('deactivates and reactivates an organization', async () => {
    const { id, apiKey } = await t.register();
    expect((await t.ops('POST', `/organizations/${id}/deactivate`)).body.data.isActive).toBe(false);
    expect((await t.api('GET', '/organizations/me', { key: apiKey })).status).toBe(403);
    expect((await t.ops('POST', `/organizations/${id}/activate`)).body.data.isActive).toBe(true);
    expect((await t.api('GET', '/organizations/me', { key: apiKey })).status).toBe(200);
  });
});
