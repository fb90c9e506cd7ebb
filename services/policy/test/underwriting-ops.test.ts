import { cropPurchase, FUTURE, type PolicyPlatform, sellableOrg, startPolicyPlatform } from './support';

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
    [
      'a licence expiring in year 0000',
      'licences',
      { market: 'KE', licenceNumber: 'X', expiresAt: '0000-01-01T00:00:00Z' },
      'expiresAt',
    ],
    [
      'a licence expiring before 2000',
      'licences',
      { market: 'KE', licenceNumber: 'X', expiresAt: '1999-12-31T23:59:59Z' },
      'expiresAt',
    ],
    [
      'an attestation in year 0000',
      'capacity',
      { amount: 10, currency: 'KES', solvencyAttestedUntil: '0000-01-01T00:00:00Z' },
      'solvencyAttestedUntil',
    ],
  ])('rejects %s with 400 and records nothing', async (_what, sub, body, field) => {
    const { id } = await p.gateway.register();
    const reply = await p.gateway.ops('POST', `/organizations/${id}/${sub}`, { body });
    expect(reply.status).toBe(400);
    expect(reply.body.error.details).toEqual(expect.arrayContaining([expect.objectContaining({ field })]));
    expect(await underwriting(id)).toEqual({ licences: [], capacity: null });
  });

  it('says which dates it takes: between the years 2000 and 9999', async () => {
    const { id } = await p.gateway.register();
    const reply = await p.gateway.ops('POST', `/organizations/${id}/licences`, {
      body: { market: 'KE', licenceNumber: 'IRA/0', expiresAt: '0000-01-01T00:00:00Z' },
    });
    expect(reply.status).toBe(400);
    expect(reply.body.error.code).toBe('INVALID_INPUT');
    expect(reply.body.error.details).toEqual([
      { field: 'expiresAt', message: 'must be a date-time between 2000-01-01 and 9999-12-31 (UTC)' },
    ]);
    const edge = await p.gateway.ops('POST', `/organizations/${id}/licences`, {
      body: { market: 'KE', licenceNumber: 'IRA/9', expiresAt: '9999-12-31T23:59:59Z' },
    });
    expect(edge.status).toBe(200);
    expect(edge.body.data.expiresAt).toBe('9999-12-31T23:59:59.000Z');
  });

  describe('capacity below what policies reserve (row 9)', () => {
    const underwritingOf = async (orgId: string) => (await underwriting(orgId)).capacity;
    const buy = (apiKey: string, body: unknown) =>
      p.gateway.api('POST', '/policies/purchase', { key: apiKey, body });

    it('is refused with 400 naming the amount and what is reserved; the capacity is unchanged', async () => {
      const org = await sellableOrg(p, { capacity: 1_000_000 });
      expect((await buy(org.apiKey, cropPurchase(org, { sumInsured: 50_000 }))).status).toBe(201);
      const before = await underwritingOf(org.id);
      expect(before).toMatchObject({ amount: '1000000.00', reserved: '50000.00', remaining: '950000.00' });

      const refused = await p.gateway.ops('POST', `/organizations/${org.id}/capacity`, {
        body: { amount: 10_000, currency: 'KES', solvencyAttestedUntil: FUTURE },
      });
      expect(refused.status).toBe(400);
      expect(refused.body.error).toEqual({
        code: 'INVALID_INPUT',
        message: 'Capacity cannot be set below the 50000.00 KES that policies already reserve',
        details: [
          {
            field: 'amount',
            message:
              'must be at least 50000.00 (KES already reserved by policies; the remaining capacity may not go below 0)',
          },
        ],
      });
      expect(await underwritingOf(org.id)).toEqual(before);

      // Exactly what is reserved is fine: nothing remains, and nothing more can be sold.
      const exact = await p.gateway.ops('POST', `/organizations/${org.id}/capacity`, {
        body: { amount: 50_000, currency: 'KES', solvencyAttestedUntil: FUTURE },
      });
      expect(exact.status).toBe(200);
      expect(exact.body.data).toMatchObject({ amount: '50000.00', reserved: '50000.00', remaining: '0.00' });
      const over = await buy(org.apiKey, cropPurchase(org, { sumInsured: 1_000 }));
      expect([over.status, over.body.error.code]).toEqual([400, 'INVALID_INPUT']);
    });

    it('holds against purchases reserving at the same time: the remaining capacity never goes below 0', async () => {
      const org = await sellableOrg(p, { capacity: 1_000_000 });
      const lowered = p.gateway.ops('POST', `/organizations/${org.id}/capacity`, {
        body: { amount: 100_000, currency: 'KES', solvencyAttestedUntil: FUTURE },
      });
      const purchases = Array.from({ length: 6 }, () =>
        buy(org.apiKey, cropPurchase(org, { sumInsured: 30_000 })),
      );
      const [capacityReply, ...replies] = await Promise.all([lowered, ...purchases]);
      const sold = replies.filter((r) => r.status === 201).length;
      for (const r of replies) expect([201, 400]).toContain(r.status);
      const capacity = await underwritingOf(org.id);
      expect(capacity.reserved).toBe(`${sold * 30_000}.00`);
      expect(capacity.remaining.startsWith('-')).toBe(false);
      if (capacityReply.status === 200) {
        expect(capacity.amount).toBe('100000.00');
        expect(sold).toBeLessThanOrEqual(3);
      } else {
        // Refused only because more than the new amount was already reserved when it was written.
        expect(capacityReply.status).toBe(400);
        expect(capacityReply.body.error.details[0].field).toBe('amount');
        expect(capacity.amount).toBe('1000000.00');
        expect(sold).toBeGreaterThan(3);
      }
    });
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
