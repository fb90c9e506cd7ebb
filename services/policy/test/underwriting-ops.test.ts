import { type PolicyPlatform, startPolicyPlatform } from './support';

describe('underwriting setup through the ops API', () => {
  let p: PolicyPlatform;
  beforeAll(async () => {
    p = await startPolicyPlatform();
  });
  afterAll(async () => {
    await p.stop();
  });

  const underwriting = async (orgId: string) =>
    (await p.gateway.ops('GET', `/organizations/${orgId}/underwriting`)).body.data;

  it('records a licence per market; a new one for the same market replaces it; no expiry is kept as null', async () => {
    const { id } = await p.gateway.register();
    const first = await p.gateway.ops('POST', `/organizations/${id}/licences`, {
      body: { market: 'KE', licenceNumber: 'IRA/123', expiresAt: '2027-12-31T23:59:59Z' },
    });
    expect(first.status).toBe(200);
    expect(first.body.data).toMatchObject({
      market: 'KE',
      licenceNumber: 'IRA/123',
      expiresAt: '2027-12-31T23:59:59.000Z',
    });
    await p.gateway.ops('POST', `/organizations/${id}/licences`, {
      body: { market: 'KE', licenceNumber: 'IRA/456' },
    });
    await p.gateway.ops('POST', `/organizations/${id}/licences`, {
      body: { market: 'GH', licenceNumber: 'NIC-9', expiresAt: null },
    });
    const { licences } = await underwriting(id);
    expect(licences).toEqual([
      { market: 'GH', licenceNumber: 'NIC-9', expiresAt: null, updatedAt: expect.any(String) },
      { market: 'KE', licenceNumber: 'IRA/456', expiresAt: null, updatedAt: expect.any(String) },
    ]);
  });

  it('records capacity exactly in minor units with the solvency attestation', async () => {
    const { id } = await p.gateway.register();
    const reply = await p.gateway.ops('POST', `/organizations/${id}/capacity`, {
      body: { amount: 1_000_000.1, currency: 'KES', solvencyAttestedUntil: '2027-06-30T00:00:00Z' },
    });
    expect(reply.status).toBe(200);
    expect(reply.body.data).toMatchObject({
      currency: 'KES',
      amount: '1000000.10',
      reserved: '0.00',
      remaining: '1000000.10',
      solvencyAttestedUntil: '2027-06-30T00:00:00.000Z',
    });
    const stored = await p.db.collection('underwriting_capacity').findOne({ _id: id as never });
    expect(stored?.amountMinor).toBe(100_000_010);
  });

  it.each([
    ['a market we do not serve', 'licences', { market: 'UG', licenceNumber: 'X' }, 'market'],
    [
      'a malformed expiry',
      'licences',
      { market: 'KE', licenceNumber: 'X', expiresAt: 'tomorrow' },
      'expiresAt',
    ],
    [
      'an unknown currency',
      'capacity',
      { amount: 10, currency: 'USD', solvencyAttestedUntil: '2027-01-01T00:00:00Z' },
      'currency',
    ],
    [
      'three decimals',
      'capacity',
      { amount: 10.001, currency: 'KES', solvencyAttestedUntil: '2027-01-01T00:00:00Z' },
      'amount',
    ],
    [
      'a negative amount',
      'capacity',
      { amount: -5, currency: 'KES', solvencyAttestedUntil: '2027-01-01T00:00:00Z' },
      'amount',
    ],
    ['a missing attestation date', 'capacity', { amount: 10, currency: 'KES' }, 'solvencyAttestedUntil'],
  ])('rejects %s with 400 and records nothing', async (_what, sub, body, field) => {
    const { id } = await p.gateway.register();
    const reply = await p.gateway.ops('POST', `/organizations/${id}/${sub}`, { body });
    expect(reply.status).toBe(400);
    expect(reply.body.error.details).toEqual(expect.arrayContaining([expect.objectContaining({ field })]));
    expect(await underwriting(id)).toEqual({ licences: [], capacity: null });
  });

  it('answers 404 for an unknown organization and 401 without the ops token', async () => {
    const unknown = await p.gateway.ops(
      'POST',
      '/organizations/5d1c2b3a-4e5f-4a6b-9c8d-7e6f5a4b3c2d/licences',
      {
        body: { market: 'KE', licenceNumber: 'X' },
      },
    );
    expect(unknown.status).toBe(404);
    const { id, apiKey } = await p.gateway.register();
    const asPartner = await p.gateway.ops('POST', `/organizations/${id}/capacity`, {
      headers: { authorization: `Bearer ${apiKey}` },
      body: { amount: 10, currency: 'KES', solvencyAttestedUntil: '2027-01-01T00:00:00Z' },
    });
    expect(asPartner.status).toBe(401);
    expect((await underwriting(id)).capacity).toBeNull();
  });
});
