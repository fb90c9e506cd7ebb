import { MOBILE_MONEY_MARKETS } from '@parametric/contracts';
import { startTestGateway, type TestGateway } from './support';

/**
 * Issue 22, row 8: Tier 2 (`DETERMINATION_AND_SETTLEMENT`) collects premiums and pays farmers by
 * mobile money. A Ghana organization made Tier 2 could buy policies (capacity reserved) whose
 * premium could never be collected, and could not activate them itself either. Only a market
 * with a mobile-money provider may be Tier 2.
 */
describe('POST /ops/organizations/{id}/service-tier and the market', () => {
  let t: TestGateway;
  beforeAll(async () => {
    t = await startTestGateway();
  });
  afterAll(async () => {
    await t.stop();
  });

  const setTier = (id: string, serviceTier: string) =>
    t.ops('POST', `/organizations/${id}/service-tier`, { body: { serviceTier } });
  const auditOf = async (id: string) =>
    (await t.ops('GET', `/audit?organizationId=${id}&action=opsSetServiceTier`)).body.data as {
      organizationId: string;
      request: unknown;
    }[];

  it('refuses DETERMINATION_AND_SETTLEMENT in a market without mobile money (GH): 400 naming the field and the market, nothing changed', async () => {
    // The premise: GH has no mobile-money provider (KE has, below).
    expect(MOBILE_MONEY_MARKETS).not.toContain('GH');
    expect(MOBILE_MONEY_MARKETS).toContain('KE');
    const { id, apiKey } = await t.register({ countryCode: 'GH' });
    const before = (await t.ops('GET', `/organizations/${id}`)).body.data;
    const reply = await setTier(id, 'DETERMINATION_AND_SETTLEMENT');
    expect(reply.status).toBe(400);
    expect(reply.body.error.code).toBe('INVALID_INPUT');
    expect(reply.body.error.message).toMatch(/market GH/);
    expect(reply.body.error.details).toEqual([
      { field: 'serviceTier', message: expect.stringMatching(/not available in market GH.*KE/) },
    ]);
    // Read back, as ops and as the partner: the organization is as it was.
    expect((await t.ops('GET', `/organizations/${id}`)).body.data).toEqual(before);
    const me = await t.api('GET', '/organizations/me', { key: apiKey });
    expect(me.body.data.serviceTier).toBe('DETERMINATION');
    // A refusal changed nothing, so the audit trail has nothing either.
    expect(await auditOf(id)).toEqual([]);
  });

  it('still lets a GH organization be set to DETERMINATION', async () => {
    const { id } = await t.register({ countryCode: 'GH' });
    const reply = await setTier(id, 'DETERMINATION');
    expect(reply.status).toBe(200);
    expect(reply.body.data).toMatchObject({ id, countryCode: 'GH', serviceTier: 'DETERMINATION' });
  });

  it('lets a GH organization made Tier 2 before the rule go back to DETERMINATION, never to Tier 2 again', async () => {
    const { id, apiKey } = await t.register({ countryCode: 'GH' });
    // What an organization changed before this rule existed looks like.
    await t.db
      .collection('organizations')
      .updateOne({ _id: id as never }, { $set: { serviceTier: 'DETERMINATION_AND_SETTLEMENT' } });
    const again = await setTier(id, 'DETERMINATION_AND_SETTLEMENT');
    expect(again.status).toBe(400);
    expect(again.body.error.message).toMatch(/stays on DETERMINATION_AND_SETTLEMENT/);
    const back = await setTier(id, 'DETERMINATION');
    expect(back.status).toBe(200);
    expect(back.body.data.serviceTier).toBe('DETERMINATION');
    expect((await t.api('GET', '/organizations/me', { key: apiKey })).body.data.serviceTier).toBe(
      'DETERMINATION',
    );
  });

  it('makes a KE organization Tier 2 and back, the partner seeing each change at once', async () => {
    const { id, apiKey } = await t.register({ countryCode: 'KE' });
    const tier2 = await setTier(id, 'DETERMINATION_AND_SETTLEMENT');
    expect(tier2.status).toBe(200);
    expect(tier2.body.data).toMatchObject({ countryCode: 'KE', serviceTier: 'DETERMINATION_AND_SETTLEMENT' });
    expect((await t.api('GET', '/organizations/me', { key: apiKey })).body.data.serviceTier).toBe(
      'DETERMINATION_AND_SETTLEMENT',
    );
    expect((await setTier(id, 'DETERMINATION')).body.data.serviceTier).toBe('DETERMINATION');
    expect((await t.api('GET', '/organizations/me', { key: apiKey })).body.data.serviceTier).toBe(
      'DETERMINATION',
    );
  });

  it('takes the organization id in any case (row 11), and audits it under the id as stored', async () => {
    const { id } = await t.register({ countryCode: 'KE' });
    const reply = await setTier(id.toUpperCase(), 'DETERMINATION_AND_SETTLEMENT');
    expect(reply.status).toBe(200);
    expect(reply.body.data).toMatchObject({ id, serviceTier: 'DETERMINATION_AND_SETTLEMENT' });
    expect((await t.ops('GET', `/organizations/${id.toUpperCase()}`)).body.data.id).toBe(id);
    const entries = await auditOf(id);
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({
      organizationId: id,
      request: { serviceTier: 'DETERMINATION_AND_SETTLEMENT' },
    });
  });
});
