import { randomUUID } from 'node:crypto';
import type { PartnerSettlementStatus } from '@parametric/contracts';
import { DAY_MS } from '../../src/clock';
import { createActivator } from '../../src/policies/activation';
import type { PolicyDoc } from '../../src/policies/model';
import { purchasePolicy } from '../../src/policies/purchase';
import { readPolicyForOps } from '../../src/policies/reads';
import { recordDamageAssessment } from '../../src/policies/summaries';
import { expirePolicies, type ReleasedPolicy, releaseCapacityAfterCover } from '../../src/policies/sweeps';
import type { TenantPolicyData } from '../../src/repositories';
import { at, cropBody, type DomainDb, domainDb, KE_VERIFIED, sellable, T0 } from './fixtures';

/** The claims window of these tests: 90 days, the default. */
const WINDOW_MS = 90 * DAY_MS;
/** Cover of 90 days from T0, so cover ends at T0 + 90 d and the window closes at T0 + 180 d. */
const COVER_ENDS = at(T0, 90 * DAY_MS);
const WINDOW_CLOSES = at(T0, 180 * DAY_MS);
/** 50,000.00 KES, the sum insured of `cropBody`, in minor units. */
const SUM_INSURED_MINOR = 5_000_000n;

describe('capacity release after the claims window (domain, time injected)', () => {
  let db: DomainDb;
  beforeAll(async () => {
    db = await domainDb('capacity_release');
  });
  afterAll(async () => {
    await db.close();
  });

  const registry = { registerPolicy: async () => ({ onChainPolicyId: '1', txHash: `0x${'cd'.repeat(32)}` }) };
  const policies = () => db.repositories.acrossOrganizations().policies;
  const capacityOf = (organizationId: string) => db.repositories.forOrganization(organizationId);
  const release = (now: Date) => releaseCapacityAfterCover(policies(), capacityOf, now, WINDOW_MS);
  /** The sweep works across organizations (this file's other tests' too): the ids among `ids` it released. */
  const releasedAmong = async (ids: readonly string[], run: Promise<ReleasedPolicy[]>) =>
    (await run)
      .map((r) => r.policyId)
      .filter((id) => ids.includes(id))
      .sort();
  const reserved = async (tenant: TenantPolicyData) => (await tenant.capacity.get())?.reservedMinor;
  const stored = (tenant: TenantPolicyData, id: string) => tenant.policies.findById(id).lean<PolicyDoc>();

  type Tier = 'DETERMINATION' | 'DETERMINATION_AND_SETTLEMENT';
  /** An organization with `count` policies of `tier`, activated at T0 for 90 days. */
  const organizationWith = async (count: number, tier: Tier = 'DETERMINATION') => {
    const org = await sellable(db);
    const activator = createActivator({ registry, clock: () => T0 });
    const ids: string[] = [];
    for (let i = 0; i < count; i++) {
      const { policy } = await purchasePolicy(
        org.tenant,
        { ...KE_VERIFIED, serviceTier: tier },
        cropBody(org, { durationDays: 90 }),
        T0,
      );
      const via = tier === 'DETERMINATION' ? 'PARTNER' : 'PAYMENT';
      await activator.activate(org.tenant.policies, { policyId: policy.id, via });
      ids.push(policy.id);
    }
    return { tenant: org.tenant, ids };
  };
  /** Expires every policy whose cover has ended (the expiry sweep), as at cover end. */
  const expireAll = () => expirePolicies(policies(), COVER_ENDS);
  const assess = (tenant: TenantPolicyData, policyId: string, status: PartnerSettlementStatus, extra = {}) =>
    recordDamageAssessment(tenant, {
      policyId,
      determinationId: randomUUID(),
      revision: 1,
      triggered: status !== 'NOT_REQUIRED',
      damagePercentBp: status === 'NOT_REQUIRED' ? 0 : 3000,
      assessedAt: at(T0, 30 * DAY_MS).toISOString(),
      issuedAt: at(T0, 100 * DAY_MS).toISOString(),
      partnerSettlementStatus: status,
      dueAt: status === 'PENDING' ? at(T0, 130 * DAY_MS).toISOString() : null,
      ...extra,
    });

  it('gives an expired policy’s sum insured back once the claims window after its cover has passed, once', async () => {
    const org = await organizationWith(1);
    const other = await organizationWith(1);
    const [policyId] = org.ids as [string];
    await expireAll();
    expect(await reserved(org.tenant)).toBe(SUM_INSURED_MINOR);

    expect(await release(at(WINDOW_CLOSES, -1))).toEqual([]);
    // Both organizations' policies are due at once; each goes back to its own capacity.
    const released = await release(WINDOW_CLOSES);
    expect(released).toEqual(
      expect.arrayContaining([
        {
          policyId,
          organizationId: org.tenant.organizationId,
          sumInsuredMinor: SUM_INSURED_MINOR,
          capacityFound: true,
        },
      ]),
    );
    expect(released.map((r) => r.policyId).sort()).toEqual([policyId, ...other.ids].sort());
    expect([await reserved(org.tenant), await reserved(other.tenant)]).toEqual([0n, 0n]);
    expect((await stored(org.tenant, policyId))?.capacityReleasedAt).toEqual(WINDOW_CLOSES);
    expect(await readPolicyForOps(policies(), { id: policyId }, WINDOW_CLOSES)).toMatchObject({
      status: 'EXPIRED',
      sumInsuredMinor: '5000000',
      capacityReleasedAt: WINDOW_CLOSES.toISOString(),
    });

    expect(await release(at(WINDOW_CLOSES, DAY_MS))).toEqual([]);
    expect(await reserved(org.tenant)).toBe(0n);
  });

  it('keeps the capacity of a policy that has not expired, even long after its cover end', async () => {
    const active = await organizationWith(1); // the expiry sweep has not run for it
    const org = await sellable(db);
    await purchasePolicy(org.tenant, KE_VERIFIED, cropBody(org, { durationDays: 90 }), T0); // PENDING
    await release(at(WINDOW_CLOSES, 365 * DAY_MS));
    expect([await reserved(active.tenant), await reserved(org.tenant)]).toEqual([
      SUM_INSURED_MINOR,
      SUM_INSURED_MINOR,
    ]);
  });

  it('waits while a Tier 1 settlement report is PENDING, and releases once it is reported or overdue', async () => {
    const org = await organizationWith(2);
    const [reportedLater, overdueLater] = org.ids as [string, string];
    const pending = { determinationId: randomUUID() };
    const alsoPending = { determinationId: randomUUID() };
    await assess(org.tenant, reportedLater, 'PENDING', pending);
    await assess(org.tenant, reportedLater, 'REPORTED'); // another determination, already settled
    await assess(org.tenant, overdueLater, 'PENDING', alsoPending);
    await expireAll();

    expect(await releasedAmong(org.ids, release(at(WINDOW_CLOSES, 30 * DAY_MS)))).toEqual([]);
    expect(await reserved(org.tenant)).toBe(2n * SUM_INSURED_MINOR);

    await assess(org.tenant, reportedLater, 'REPORTED', { ...pending, revision: 2 });
    expect(await releasedAmong(org.ids, release(at(WINDOW_CLOSES, 31 * DAY_MS)))).toEqual([reportedLater]);
    expect(await reserved(org.tenant)).toBe(SUM_INSURED_MINOR);

    // The determinations service's overdue sweep moves the other one on: nothing is awaited any more.
    await assess(org.tenant, overdueLater, 'OVERDUE', { ...alsoPending, revision: 2 });
    expect(await releasedAmong(org.ids, release(at(WINDOW_CLOSES, 32 * DAY_MS)))).toEqual([overdueLater]);
    expect(await reserved(org.tenant)).toBe(0n);
  });

  it('is not held up by Tier 2 determinations or untriggered ones', async () => {
    const tier2 = await organizationWith(1, 'DETERMINATION_AND_SETTLEMENT');
    const tier1 = await organizationWith(1);
    await assess(tier2.tenant, tier2.ids[0] as string, 'NOT_APPLICABLE');
    await assess(tier1.tenant, tier1.ids[0] as string, 'NOT_REQUIRED');
    await expireAll();

    const ids = [...tier2.ids, ...tier1.ids];
    expect(await releasedAmong(ids, release(WINDOW_CLOSES))).toEqual([...ids].sort());
    expect([await reserved(tier2.tenant), await reserved(tier1.tenant)]).toEqual([0n, 0n]);
  });

  it('releases each policy exactly once when two sweeps run at the same time', async () => {
    const org = await organizationWith(6);
    await expireAll();
    const [first, second] = await Promise.all([release(WINDOW_CLOSES), release(WINDOW_CLOSES)]);
    const releasedIds = [...first, ...second].map((r) => r.policyId).filter((id) => org.ids.includes(id));
    expect(releasedIds.sort()).toEqual([...org.ids].sort());
    expect(await reserved(org.tenant)).toBe(0n);
  });

  it('errs on the safe side after a crash between claiming and giving back: the capacity stays reserved', async () => {
    const org = await organizationWith(1);
    const [policyId] = org.ids as [string];
    await expireAll();
    // What a sweeper that died right after its claim leaves behind.
    await org.tenant.policies.updateOne({ _id: policyId }, { $set: { capacityReleasedAt: WINDOW_CLOSES } });

    expect(await releasedAmong(org.ids, release(at(WINDOW_CLOSES, DAY_MS)))).toEqual([]);
    expect(await reserved(org.tenant)).toBe(SUM_INSURED_MINOR);
  });
});
