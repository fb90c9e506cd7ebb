import { DAY_MS } from '../../src/clock';
import { createActivator } from '../../src/policies/activation';
import { purchasePolicy } from '../../src/policies/purchase';
import { daysRemaining, readPolicy, readPolicyStatus } from '../../src/policies/reads';
import { at, cropBody, type DomainDb, domainDb, KE_VERIFIED, outcome, sellable, T0 } from './fixtures';

describe('policy reads (domain)', () => {
  let db: DomainDb;
  beforeAll(async () => {
    db = await domainDb('policy_reads');
  });
  afterAll(async () => {
    await db.close();
  });

  const registry = { registerPolicy: async () => ({ onChainPolicyId: '7', txHash: `0x${'ab'.repeat(32)}` }) };

  it('counts days remaining from the injected clock: the full duration while PENDING, then down to zero', async () => {
    const org = await sellable(db);
    const { policy } = await purchasePolicy(org.tenant, KE_VERIFIED, cropBody(org, { durationDays: 30 }), T0);
    // Pending: the duration, whatever the time.
    expect((await readPolicy(org.tenant, policy.id, at(T0, 100 * DAY_MS))).daysRemaining).toBe(30);

    const activator = createActivator({ registry, clock: () => T0 });
    await activator.activate(org.tenant.policies, { policyId: policy.id, via: 'PARTNER' });
    const days = async (now: Date) => (await readPolicy(org.tenant, policy.id, now)).daysRemaining;
    expect(await days(T0)).toBe(30);
    expect(await days(at(T0, 1))).toBe(30); // a part of a day counts as a day
    expect(await days(at(T0, DAY_MS))).toBe(29);
    expect(await days(at(T0, 29 * DAY_MS + 1))).toBe(1);
    expect(await days(at(T0, 30 * DAY_MS))).toBe(0);
    expect(await days(at(T0, 400 * DAY_MS))).toBe(0);
    const status = await readPolicyStatus(org.tenant, policy.id, at(T0, 10 * DAY_MS));
    expect(status).toMatchObject({
      status: 'ACTIVE',
      activatedOnChain: true,
      onChainPolicyId: '7',
      daysRemaining: 20,
      coverStartsAt: T0.toISOString(),
      coverEndsAt: at(T0, 30 * DAY_MS).toISOString(),
      activation: { via: 'PARTNER', pending: false, failedAttempts: 0, lastError: null },
      nextStep: 'Covered; determinations arrive by webhook',
    });
  });

  it('gives a non-active policy without a cover end no days', () => {
    const base = { coverEndsAt: null, durationDays: 90 } as const;
    expect(daysRemaining({ ...base, status: 'PENDING' } as never, T0)).toBe(90);
    expect(daysRemaining({ ...base, status: 'CANCELLED' } as never, T0)).toBe(0);
  });

  it('tells the partner the next step for each tier while PENDING', async () => {
    const org = await sellable(db);
    const tier1 = await purchasePolicy(org.tenant, KE_VERIFIED, cropBody(org), T0);
    const tier2 = await purchasePolicy(
      org.tenant,
      { ...KE_VERIFIED, serviceTier: 'DETERMINATION_AND_SETTLEMENT' },
      cropBody(org),
      T0,
    );
    expect((await readPolicyStatus(org.tenant, tier1.policy.id, T0)).nextStep).toBe(
      'Collect the premium, then activate the policy (PUT /policies/{id}/activate)',
    );
    expect((await readPolicyStatus(org.tenant, tier2.policy.id, T0)).nextStep).toBe(
      'Pay the premium by mobile money (POST /payments/initiate)',
    );
  });

  it("answers 404 for another organization's policy, exactly as for an unknown one", async () => {
    const owner = await sellable(db);
    const other = db.organization();
    const { policy } = await purchasePolicy(owner.tenant, KE_VERIFIED, cropBody(owner), T0);
    const foreign = await outcome(readPolicy(other, policy.id, T0));
    const unknown = await outcome(readPolicy(other, '0b3c6f1e-9f8a-4d2b-8c61-2f4a5e6d7c8b', T0));
    expect(foreign).toEqual(unknown);
    expect(foreign).toMatchObject({ code: 'NOT_FOUND', message: 'Policy not found' });
    expect((await readPolicy(owner.tenant, policy.id, T0)).id).toBe(policy.id);
  });
});
