import { FUTURE, type PolicyPlatform, startPolicyPlatform } from '../../policy/test/support';
import { opsActor } from '../src/audit/trail';
import { OPS_TOKEN } from './support';

/**
 * Issue 14: an append-only audit trail of ops actions (who, what, when, before/after), read
 * with `GET /ops/audit` and its filters; no route edits or deletes an entry.
 */
describe('the ops audit trail', () => {
  let p: PolicyPlatform;
  beforeAll(async () => {
    p = await startPolicyPlatform();
  });
  afterAll(async () => {
    await p.stop();
  });

  const ops = (method: string, path: string, body?: unknown) => p.gateway.ops(method, path, { body });

  it('records who did what and when, with the organization before and after', async () => {
    const org = await p.gateway.register();
    const startedAt = new Date().toISOString();
    expect(
      (await ops('POST', `/organizations/${org.id}/kyb`, { status: 'VERIFIED', notes: 'docs ok' })).status,
    ).toBe(200);

    const trail = await ops('GET', `/audit?organizationId=${org.id}`);
    expect(trail.status).toBe(200);
    expect(trail.body.pagination).toMatchObject({ total: 1 });
    const [entry] = trail.body.data;
    expect(entry).toMatchObject({
      actor: opsActor(OPS_TOKEN),
      action: 'opsSetKyb',
      method: 'POST',
      path: `/ops/organizations/${org.id}/kyb`,
      organizationId: org.id,
      targetId: org.id,
      status: 200,
      request: { status: 'VERIFIED', notes: 'docs ok' },
      before: { id: org.id, kybStatus: 'NOT_STARTED' },
      after: { id: org.id, kybStatus: 'VERIFIED', kybNotes: 'docs ok' },
    });
    expect(entry.at >= startedAt).toBe(true);
    expect(entry.actor).not.toContain(OPS_TOKEN);
  });

  it('records actions the gateway forwards (licences), and not refused attempts, which change nothing', async () => {
    const org = await p.gateway.register();
    await ops('POST', `/organizations/${org.id}/kyb`, { status: 'VERIFIED' });
    const licence = await ops('POST', `/organizations/${org.id}/licences`, {
      market: 'KE',
      licenceNumber: 'IRA-AUDIT-1',
      expiresAt: FUTURE,
    });
    expect(licence.status).toBeLessThan(300);
    const refused = await ops('POST', `/organizations/${org.id}/capacity`, { amount: -5, currency: 'KES' });
    expect(refused.status).toBe(400);

    const entries = (await ops('GET', `/audit?organizationId=${org.id}`)).body.data;
    expect(entries.map((e: { action: string; status: number }) => `${e.action} ${e.status}`)).toEqual([
      `${entries[0].action} ${licence.status}`,
      'opsSetKyb 200',
    ]);
    expect(entries[0]).toMatchObject({
      path: `/ops/organizations/${org.id}/licences`,
      request: { market: 'KE', licenceNumber: 'IRA-AUDIT-1' },
    });
    expect(entries[0].after).not.toBeNull();

    const byAction = (await ops('GET', `/audit?organizationId=${org.id}&action=opsSetKyb`)).body;
    expect(byAction.data.map((e: { action: string }) => e.action)).toEqual(['opsSetKyb']);
  });

  it('leaves out a POST that only reads (the policy look-up the determinations service makes)', async () => {
    const lookup = await ops('POST', '/policies/lookup', { policyIds: [], policyNumbers: ['P-NONE'] });
    expect(lookup.status).toBe(200);
    expect(lookup.body.data).toEqual({ policies: [] });
    const trail = (await ops('GET', '/audit?action=opsLookupPolicies')).body;
    expect(trail.pagination).toMatchObject({ total: 0 });
  });

  it('never stores the credentials an action hands out', async () => {
    const org = await p.gateway.register();
    const rotated = await ops('POST', `/organizations/${org.id}/api-key/rotate`);
    expect(rotated.status).toBe(200);
    const [entry] = (await ops('GET', `/audit?organizationId=${org.id}&action=opsRotateApiKey`)).body.data;
    expect(entry.after).toMatchObject({ apiKey: '[Redacted]', apiSecret: '[Redacted]' });
    const stored = JSON.stringify(
      await p.gateway.db.collection('ops_audit').find({ organizationId: org.id }).toArray(),
    );
    expect(stored).not.toContain(rotated.body.data.apiKey);
    expect(stored).not.toContain(rotated.body.data.apiSecret);
  });

  it('pages and filters by time, newest first', async () => {
    const org = await p.gateway.register();
    for (const tier of ['DETERMINATION_AND_SETTLEMENT', 'DETERMINATION', 'DETERMINATION_AND_SETTLEMENT']) {
      await ops('POST', `/organizations/${org.id}/service-tier`, { serviceTier: tier });
    }
    const all = (await ops('GET', `/audit?organizationId=${org.id}`)).body.data;
    expect(all).toHaveLength(3);
    expect(all.map((e: { request: { serviceTier: string } }) => e.request.serviceTier)).toEqual([
      'DETERMINATION_AND_SETTLEMENT',
      'DETERMINATION',
      'DETERMINATION_AND_SETTLEMENT',
    ]);
    const second = (await ops('GET', `/audit?organizationId=${org.id}&limit=1&page=2`)).body;
    expect(second.pagination).toMatchObject({ page: 2, limit: 1, total: 3 });
    expect(second.data[0].id).toBe(all[1].id);
    const later = (await ops('GET', `/audit?organizationId=${org.id}&from=${encodeURIComponent(all[0].at)}`))
      .body;
    expect(later.data.map((e: { id: string }) => e.id)).toContain(all[0].id);
    const none = (await ops('GET', `/audit?organizationId=${org.id}&to=2000-01-01T00:00:00Z`)).body;
    expect(none.data).toEqual([]);
    expect((await ops('GET', '/audit?action=drop-everything')).status).toBe(400);
  });

  it('has no way to edit or delete an entry', async () => {
    const org = await p.gateway.register();
    await ops('POST', `/organizations/${org.id}/deactivate`);
    const [entry] = (await ops('GET', `/audit?organizationId=${org.id}`)).body.data;
    for (const [method, path] of [
      ['DELETE', '/audit'],
      ['DELETE', `/audit/${entry.id}`],
      ['PUT', `/audit/${entry.id}`],
      ['PATCH', `/audit/${entry.id}`],
      ['POST', '/audit'],
    ] as const) {
      const reply = await ops(method, path, { action: 'nothing happened' });
      expect({ method, path, status: reply.status }).toEqual({ method, path, status: 404 });
    }
    const after = (await ops('GET', `/audit?organizationId=${org.id}`)).body.data;
    expect(after).toEqual([entry]);
  });
});
