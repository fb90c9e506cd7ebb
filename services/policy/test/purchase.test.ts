import {
  cropPurchase,
  FUTURE,
  farmerBody,
  herdBody,
  type PolicyPlatform,
  plotBody,
  sellableOrg,
  startPolicyPlatform,
} from './support';

describe('POST /policies/purchase', () => {
  let p: PolicyPlatform;
  beforeAll(async () => {
    p = await startPolicyPlatform();
  });
  afterAll(async () => {
    await p.stop();
  });

  const readyOrg = (capacity = 1_000_000) => sellableOrg(p, { capacity });
  const crop = cropPurchase;
  const buy = (key: string, body: unknown) => p.gateway.api('POST', '/policies/purchase', { key, body });

  it('applies the gates in order: KYB, licence, licence expiry, capacity, solvency, farmer KYC, remaining capacity', async () => {
    const org = await p.gateway.register();
    const farmer = (await p.gateway.api('POST', '/farmers', { key: org.apiKey, body: farmerBody() })).body
      .data;
    const plot = (await p.gateway.api('POST', '/plots', { key: org.apiKey, body: plotBody(farmer.id) })).body
      .data;
    const body = crop({ farmerId: farmer.id, plotId: plot.id }, { sumInsured: 200_000 });
    const expectError = async (status: number, code: string, message?: string) => {
      const reply = await buy(org.apiKey, body);
      expect([reply.status, reply.body.error?.code]).toEqual([status, code]);
      // Each gate a partner meets before its first sale says where it stands and what to do.
      if (message) expect(reply.body.error.message).toBe(message);
    };

    await expectError(
      403,
      'FORBIDDEN',
      "Your organization's KYB is NOT_STARTED: policies can be sold once it is VERIFIED; complete KYB verification with us",
    );
    await p.gateway.ops('POST', `/organizations/${org.id}/kyb`, { body: { status: 'VERIFIED' } });
    await expectError(
      403,
      'REGULATOR_LICENSE_REQUIRED',
      'No regulator licence for market KE is on file: send us your current KE licence (number and expiry date) before selling policies',
    );
    await p.gateway.ops('POST', `/organizations/${org.id}/licences`, {
      body: { market: 'KE', licenceNumber: 'IRA-2' },
    });
    await expectError(403, 'REGULATOR_LICENSE_EXPIRED');
    await p.gateway.ops('POST', `/organizations/${org.id}/licences`, {
      body: { market: 'KE', licenceNumber: 'IRA-2', expiresAt: '2020-01-01T00:00:00Z' },
    });
    await expectError(403, 'REGULATOR_LICENSE_EXPIRED');
    await p.gateway.ops('POST', `/organizations/${org.id}/licences`, {
      body: { market: 'KE', licenceNumber: 'IRA-2', expiresAt: FUTURE },
    });
    await expectError(
      400,
      'INVALID_INPUT',
      'No underwriting capacity is recorded for your organization: send us your capacity (amount and currency) with a solvency attestation before selling policies',
    );
    await p.gateway.ops('POST', `/organizations/${org.id}/capacity`, {
      body: { amount: 100_000, currency: 'KES', solvencyAttestedUntil: '2020-01-01T00:00:00Z' },
    });
    const lapsed = await buy(org.apiKey, body);
    expect(lapsed.body.error.message).toMatch(/solvency/);
    await p.gateway.ops('POST', `/organizations/${org.id}/capacity`, {
      body: { amount: 100_000, currency: 'KES', solvencyAttestedUntil: FUTURE },
    });
    const kyc = await buy(org.apiKey, body);
    expect([kyc.status, kyc.body.error.message, kyc.body.error.details]).toEqual([
      400,
      "The farmer's KYC is PENDING: the farmer can be insured once it is APPROVED; have the farmer's KYC approved",
      [{ field: 'farmerId', message: 'farmer KYC is PENDING' }],
    ]);
    await p.gateway.ops('POST', `/farmers/${farmer.id}/kyc`, { body: { status: 'APPROVED' } });
    const invalid = await buy(org.apiKey, { ...body, durationDays: 29 });
    expect(invalid.body.error.details).toEqual([{ field: 'durationDays', message: 'must be 30 to 365' }]);
    const over = await buy(org.apiKey, body);
    expect(over.status).toBe(400);
    expect(over.body.error.details[0]).toEqual({
      field: 'sumInsured',
      message: 'at most 100000.00 KES remains',
    });
    expect(await p.db.collection('policies').countDocuments({ organizationId: org.id })).toBe(0);
    expect((await buy(org.apiKey, { ...body, sumInsured: 100_000 })).status).toBe(201);
  });

  it('creates a PENDING crop policy priced from the published table, with payment instructions', async () => {
    const org = await readyOrg();
    const reply = await buy(org.apiKey, crop(org));
    expect(reply.status).toBe(201);
    const policy = reply.body.data.policy;
    // 50,000 × 6% × 180/365 = 1,479.452… → 1,479.45 (docs/pricing.md, example 1).
    expect(policy).toMatchObject({
      status: 'PENDING',
      premiumPaid: false,
      sumInsured: 50_000,
      premium: 1479.45,
      coverageType: 'DROUGHT',
      onChainPolicyId: null,
      daysRemaining: 180,
      payouts: [],
      damageAssessments: [],
      settlementMode: 'DETERMINATION',
      currency: 'KES',
      rateTableVersion: '2026-11-v1',
    });
    expect(policy.policyNumber).toMatch(/^KE-\d{6}-[A-Z2-9]{6}$/);
    expect(reply.body.data.paymentInstructions).toEqual({
      amount: 1479.45,
      policyNumber: policy.policyNumber,
      message: expect.stringContaining('KES 1479.45'),
    });
    expect((await p.gateway.api('GET', `/policies/${policy.id}`, { key: org.apiKey })).body.data).toEqual(
      policy,
    );
    const status = await p.gateway.api('GET', `/policies/${policy.id}/status`, { key: org.apiKey });
    expect(status.body.data).toMatchObject({
      status: 'PENDING',
      activatedOnChain: false,
      daysRemaining: 180,
      nextStep: expect.stringContaining('activate'),
    });
  });

  it('calculates a livestock sum insured from the herd (80% of its value) and prices it by season', async () => {
    const org = await readyOrg();
    const herd = (await p.gateway.api('POST', '/herds', { key: org.apiKey, body: herdBody(org.farmerId) }))
      .body.data;
    const reply = await buy(org.apiKey, {
      farmerId: org.farmerId,
      productType: 'LIVESTOCK',
      herdId: herd.id,
      season: 'LRLD',
    });
    expect(reply.status).toBe(201);
    // 250,000 × 80% = 200,000; LIVESTOCK_DROUGHT in LRLD is 4.5%: 9,000.00 (docs/pricing.md, example 2).
    expect(reply.body.data.policy).toMatchObject({
      sumInsured: 200_000,
      premium: 9000,
      coverageType: 'LIVESTOCK_DROUGHT',
      durationDays: 183,
    });
    const noSeason = await buy(org.apiKey, {
      farmerId: org.farmerId,
      productType: 'LIVESTOCK',
      herdId: herd.id,
    });
    expect(noSeason.body.error.details).toEqual([
      { field: 'season', message: expect.stringContaining('LRLD or SRSD') },
    ]);
  });

  it('freezes the settlement mode from the tier at sale', async () => {
    const org = await readyOrg();
    await p.gateway.ops('POST', `/organizations/${org.id}/service-tier`, {
      body: { serviceTier: 'DETERMINATION_AND_SETTLEMENT' },
    });
    const tier2 = (await buy(org.apiKey, crop(org))).body.data;
    expect(tier2.policy.settlementMode).toBe('DETERMINATION_AND_SETTLEMENT');
    expect(tier2.paymentInstructions.message).toContain('/payments/initiate');
    await p.gateway.ops('POST', `/organizations/${org.id}/service-tier`, {
      body: { serviceTier: 'DETERMINATION' },
    });
    expect(
      (await p.gateway.api('GET', `/policies/${tier2.policy.id}`, { key: org.apiKey })).body.data
        .settlementMode,
    ).toBe('DETERMINATION_AND_SETTLEMENT');
  });

  it('never lets parallel purchases together exceed the capacity', async () => {
    const org = await readyOrg(100_000);
    const replies = await Promise.all(
      Array.from({ length: 6 }, () => buy(org.apiKey, crop(org, { sumInsured: 30_000 }))),
    );
    expect(replies.filter((r) => r.status === 201)).toHaveLength(3);
    expect(replies.filter((r) => r.status === 400)).toHaveLength(3);
    const { capacity } = (await p.gateway.ops('GET', `/organizations/${org.id}/underwriting`)).body.data;
    expect(capacity).toMatchObject({ reserved: '90000.00', remaining: '10000.00' });
  });

  it('says why a field of the other product is refused, rather than "Unknown field", and sells nothing', async () => {
    const org = await readyOrg();
    const herd = (await p.gateway.api('POST', '/herds', { key: org.apiKey, body: herdBody(org.farmerId) }))
      .body.data;
    const livestock = { farmerId: org.farmerId, productType: 'LIVESTOCK', herdId: herd.id, season: 'LRLD' };
    const cases: Array<[Record<string, unknown>, string, string]> = [
      [
        { ...livestock, sumInsured: 50_000 },
        'sumInsured',
        'is calculated for LIVESTOCK policies (80% of the herd’s estimated value); do not send it',
      ],
      [
        { ...livestock, durationDays: 180 },
        'durationDays',
        'is set by the season for LIVESTOCK policies (LRLD 183 days, SRSD 182 days); do not send it',
      ],
      [
        { ...livestock, plotId: org.plotId },
        'plotId',
        'is for CROP policies; a LIVESTOCK policy insures the herd in herdId',
      ],
      [
        crop(org, { season: 'LRLD' }),
        'season',
        'is for LIVESTOCK policies; a CROP policy runs for durationDays',
      ],
      [
        crop(org, { herdId: herd.id }),
        'herdId',
        'is for LIVESTOCK policies; a CROP policy insures the plot in plotId',
      ],
    ];
    for (const [body, field, message] of cases) {
      const reply = await buy(org.apiKey, body);
      expect([reply.status, reply.body.error.code]).toEqual([400, 'INVALID_INPUT']);
      expect(reply.body.error.details).toEqual([{ field, message }]);
    }
    expect(await p.db.collection('policies').countDocuments({ organizationId: org.id })).toBe(0);
    // Without the stray field, the same bodies sell.
    expect((await buy(org.apiKey, livestock)).status).toBe(201);
    expect((await buy(org.apiKey, crop(org))).status).toBe(201);
  });

  it("answers 404 for another organization's plot or policy, and 400 for a body that does not fit the product", async () => {
    const a = await readyOrg();
    const b = await readyOrg();
    const foreignPlot = await buy(a.apiKey, crop(a, { plotId: b.plotId }));
    expect(foreignPlot.status).toBe(404);
    const policy = (await buy(a.apiKey, crop(a))).body.data.policy;
    expect((await p.gateway.api('GET', `/policies/${policy.id}`, { key: b.apiKey })).status).toBe(404);
    for (const [change, field] of [
      [{ sumInsured: 999 }, 'sumInsured'],
      [{ durationDays: 366 }, 'durationDays'],
      [{ coverageType: 'LIVESTOCK_DROUGHT' }, 'coverageType'],
      [{ plotId: undefined }, 'plotId'],
      [{ sumInsured: 1000.001 }, 'sumInsured'],
      [{ discount: 10 }, 'discount'],
    ] as const) {
      const reply = await buy(a.apiKey, crop(a, change));
      expect(reply.status).toBe(400);
      expect(reply.body.error.details).toEqual(expect.arrayContaining([expect.objectContaining({ field })]));
    }
    expect((await buy(a.apiKey, { ...crop(a), productType: 'AQUACULTURE' })).status).toBe(400);
  });
});
