import { DAY_MS } from '../../src/clock';
import { registerFarmer, setFarmerKyc } from '../../src/farmers/domain';
import { registerHerd } from '../../src/herds/domain';
import { registerPlot } from '../../src/plots/domain';
import { purchasePolicy } from '../../src/policies/purchase';
import type { TenantPolicyData } from '../../src/repositories';
import { recordCapacity, recordLicence, underwritingOf } from '../../src/underwriting/domain';
import {
  at,
  cropBody,
  type DomainDb,
  domainDb,
  farmerInput,
  herdInput,
  KE_VERIFIED,
  outcome,
  plotInput,
  sellable,
  T0,
} from './fixtures';

describe('purchasePolicy (domain)', () => {
  let db: DomainDb;
  beforeAll(async () => {
    db = await domainDb('purchase');
  });
  afterAll(async () => {
    await db.close();
  });

  const kyc = (farmerId: string, status: 'APPROVED' | 'REJECTED') =>
    setFarmerKyc(db.repositories.acrossOrganizations().farmers, farmerId, status);
  const reserved = async (tenant: TenantPolicyData) => (await tenant.capacity.get())?.reservedMinor;

  it('applies the gates in order: KYB, licence, its expiry, capacity, solvency, farmer KYC, plot, remaining capacity', async () => {
    const tenant = db.organization();
    const farmer = await registerFarmer(tenant, farmerInput());
    const plot = await registerPlot(tenant, plotInput(farmer.id));
    const neighbour = await registerFarmer(tenant, farmerInput());
    const neighboursPlot = await registerPlot(tenant, plotInput(neighbour.id));
    const body = cropBody({ farmerId: farmer.id, plotId: plot.id }, { sumInsured: 200_000 });
    const buy = (b = body, now = T0, org = KE_VERIFIED) => outcome(purchasePolicy(tenant, org, b, now));

    expect(await buy(body, T0, { ...KE_VERIFIED, kybStatus: 'PENDING' })).toMatchObject({
      code: 'FORBIDDEN',
    });
    expect(await buy()).toMatchObject({ code: 'REGULATOR_LICENSE_REQUIRED' });
    await recordLicence(tenant, { market: 'KE', licenceNumber: 'IRA-2' });
    expect(await buy()).toMatchObject({ code: 'REGULATOR_LICENSE_EXPIRED' });
    await recordLicence(tenant, { market: 'KE', licenceNumber: 'IRA-2', expiresAt: at(T0, DAY_MS) });
    // The licence lapses at T0 + 1 day: the injected clock decides, nothing in the database moves.
    expect(await buy(body, at(T0, DAY_MS))).toMatchObject({ code: 'REGULATOR_LICENSE_EXPIRED' });
    expect(await buy()).toMatchObject({
      code: 'INVALID_INPUT',
      message:
        'No underwriting capacity is recorded for your organization: send us your capacity (amount and currency) with a solvency attestation before selling policies',
    });
    await recordCapacity(tenant, {
      amount: 100_000,
      currency: 'KES',
      solvencyAttestedUntil: at(T0, DAY_MS / 2),
    });
    expect(await buy(body, at(T0, DAY_MS / 2))).toMatchObject({
      code: 'INVALID_INPUT',
      message: expect.stringMatching(/solvency attestation has lapsed/),
    });
    // KYC comes before the plot: another farmer's plot still gets the KYC answer.
    for (const plotId of [plot.id, neighboursPlot.id]) {
      expect(await buy({ ...body, plotId })).toMatchObject({
        code: 'INVALID_INPUT',
        details: [{ field: 'farmerId', message: 'farmer KYC is PENDING' }],
      });
    }
    await kyc(farmer.id, 'REJECTED');
    expect(await buy()).toMatchObject({
      details: [{ field: 'farmerId', message: 'farmer KYC is REJECTED' }],
    });
    await kyc(farmer.id, 'APPROVED');
    // The plot comes before the remaining capacity (200,000 asked, 100,000 recorded).
    expect(await buy({ ...body, plotId: neighboursPlot.id })).toMatchObject({
      code: 'NOT_FOUND',
      message: 'Plot not found',
    });
    expect(await buy()).toMatchObject({
      code: 'INVALID_INPUT',
      message: 'The sum insured exceeds the remaining underwriting capacity',
      details: [{ field: 'sumInsured', message: 'at most 100000.00 KES remains' }],
    });
    expect(await tenant.policies.countDocuments()).toBe(0);
    expect(await reserved(tenant)).toBe(0n);
    expect(await buy({ ...body, sumInsured: 100_000 })).toMatchObject({
      ok: { policy: { status: 'PENDING' } },
    });
    expect(await reserved(tenant)).toBe(10_000_000n);
  });

  it('refuses an unknown farmer, or one of another organization, with 404', async () => {
    const a = await sellable(db);
    const b = await sellable(db);
    const foreign = await outcome(
      purchasePolicy(a.tenant, KE_VERIFIED, cropBody({ ...a, farmerId: b.farmerId }), T0),
    );
    expect(foreign).toMatchObject({ code: 'NOT_FOUND', message: 'Farmer not found' });
  });

  it('prices a crop policy from the published table (docs/pricing.md, example 1) and stores int64 minor units', async () => {
    const org = await sellable(db);
    const sold = await purchasePolicy(org.tenant, KE_VERIFIED, cropBody(org), T0);
    // 5,000,000 × 600 × 180 / 3,650,000 = 147,945.2… → 147,945 minor: KES 1,479.45.
    expect(sold.policy).toMatchObject({
      status: 'PENDING',
      sumInsured: 50_000,
      premium: 1479.45,
      daysRemaining: 180,
      currency: 'KES',
      settlementMode: 'DETERMINATION',
      rateTableVersion: '2026-11-v1',
      coverStartsAt: null,
    });
    expect(sold.policy.policyNumber).toMatch(/^KE-202611-[A-Z2-9]{6}$/);
    expect(sold.paymentInstructions).toEqual({
      amount: 1479.45,
      policyNumber: sold.policy.policyNumber,
      message: expect.stringContaining(`KES 1479.45 for policy ${sold.policy.policyNumber}`),
    });
    // Asking the driver for bigint only turns int64 into bigint: a double would stay a number.
    const stored = await db.connection
      .collection('policies')
      .findOne({ _id: sold.policy.id as never }, { useBigInt64: true });
    expect([stored?.sumInsuredMinor, stored?.premiumMinor]).toEqual([5_000_000n, 147_945n]);
    expect((await org.tenant.capacity.get())?.reservedMinor).toBe(5_000_000n);
  });

  it('prices a livestock policy from the herd: 80% of its value, rounded down, by season (example 2)', async () => {
    const org = await sellable(db);
    const herd = await registerHerd(org.tenant, herdInput(org.farmerId, 250_000));
    const sold = await purchasePolicy(
      org.tenant,
      KE_VERIFIED,
      {
        farmerId: org.farmerId,
        productType: 'LIVESTOCK',
        herdId: herd.id,
        season: 'LRLD',
        coverageType: 'LIVESTOCK_DROUGHT',
      },
      T0,
    );
    expect(sold.policy).toMatchObject({
      sumInsured: 200_000,
      premium: 9000,
      durationDays: 183,
      season: 'LRLD',
      herdId: herd.id,
      plotId: null,
    });

    // 1,250.01 × 80% = 1,000.008 → 1,000.00: just insurable. 1,249.99 → 999.99: not.
    const justEnough = await registerHerd(org.tenant, herdInput(org.farmerId, 1250.01));
    const tooLittle = await registerHerd(org.tenant, herdInput(org.farmerId, 1249.99));
    const livestock = (herdId: string) =>
      outcome(
        purchasePolicy(
          org.tenant,
          KE_VERIFIED,
          {
            farmerId: org.farmerId,
            productType: 'LIVESTOCK',
            herdId,
            season: 'SRSD',
            coverageType: 'LIVESTOCK_DISEASE',
          },
          T0,
        ),
      );
    expect(await livestock(justEnough.id)).toMatchObject({
      ok: { policy: { sumInsured: 1000, premium: 35, durationDays: 182 } },
    });
    expect(await livestock(tooLittle.id)).toMatchObject({
      code: 'INVALID_INPUT',
      details: [{ field: 'herdId', message: 'calculated sum insured 999.99 is below 1000' }],
    });

    // Another farmer's herd, even in the same organization, is not found.
    const neighbour = await registerFarmer(org.tenant, farmerInput());
    const neighboursHerd = await registerHerd(org.tenant, herdInput(neighbour.id, 250_000));
    expect(await livestock(neighboursHerd.id)).toMatchObject({
      code: 'NOT_FOUND',
      message: 'Herd not found',
    });
  });

  it('freezes the settlement mode from the organization snapshot at sale', async () => {
    const org = await sellable(db);
    const tier2 = await purchasePolicy(
      org.tenant,
      { ...KE_VERIFIED, serviceTier: 'DETERMINATION_AND_SETTLEMENT' },
      cropBody(org),
      T0,
    );
    expect(tier2.policy.settlementMode).toBe('DETERMINATION_AND_SETTLEMENT');
    expect(tier2.paymentInstructions.message).toContain('POST /payments/initiate');
  });

  it('refuses to sell when the capacity is recorded in another currency than the market’s', async () => {
    const org = await sellable(db);
    await recordLicence(org.tenant, { market: 'GH', licenceNumber: 'NIC-1', expiresAt: at(T0, DAY_MS) });
    const ghana = { ...KE_VERIFIED, countryCode: 'GH' };
    expect(await outcome(purchasePolicy(org.tenant, ghana, cropBody(org), T0))).toMatchObject({
      code: 'INVALID_INPUT',
      message: 'Underwriting capacity is recorded in KES, policies in this market are sold in GHS',
    });
  });

  it('never lets parallel purchases together exceed the capacity', async () => {
    const org = await sellable(db, 100_000);
    const results = await Promise.all(
      Array.from({ length: 7 }, () =>
        outcome(purchasePolicy(org.tenant, KE_VERIFIED, cropBody(org, { sumInsured: 30_000 }), T0)),
      ),
    );
    expect(results.filter((r) => 'ok' in r)).toHaveLength(3);
    expect(results.filter((r) => r.code === 'INVALID_INPUT')).toHaveLength(4);
    expect(await org.tenant.policies.countDocuments()).toBe(3);
    expect((await underwritingOf(org.tenant)).capacity).toMatchObject({
      reserved: '90000.00',
      remaining: '10000.00',
    });
  });

  it('gives the reservation back when the policy cannot be written', async () => {
    const org = await sellable(db, 100_000);
    const failure = new Error('write failed');
    const failing: TenantPolicyData = {
      ...org.tenant,
      policies: { ...org.tenant.policies, create: () => Promise.reject(failure) },
    };
    await expect(
      purchasePolicy(failing, KE_VERIFIED, cropBody(org, { sumInsured: 60_000 }), T0),
    ).rejects.toBe(failure);
    expect(await reserved(org.tenant)).toBe(0n);
    expect(await org.tenant.policies.countDocuments()).toBe(0);
    // The whole capacity is still there to sell.
    expect(
      await outcome(purchasePolicy(org.tenant, KE_VERIFIED, cropBody(org, { sumInsured: 100_000 }), T0)),
    ).toHaveProperty('ok');
  });

  it('draws a new policy number when two collide, reserving capacity once', async () => {
    const org = await sellable(db);
    let collisions = 0;
    const colliding: TenantPolicyData = {
      ...org.tenant,
      policies: {
        ...org.tenant.policies,
        create: (doc) => {
          if (collisions++ > 0) return org.tenant.policies.create(doc);
          return Promise.reject(
            Object.assign(new Error('E11000 duplicate key'), {
              code: 11000,
              keyPattern: { policyNumber: 1 },
            }),
          );
        },
      },
    };
    const sold = await purchasePolicy(colliding, KE_VERIFIED, cropBody(org), T0);
    expect(collisions).toBe(2);
    expect(sold.policy.status).toBe('PENDING');
    expect(await reserved(org.tenant)).toBe(5_000_000n);
  });
});
