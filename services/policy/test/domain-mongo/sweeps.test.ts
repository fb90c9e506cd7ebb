import { DAY_MS } from '../../src/clock';
import { createActivator } from '../../src/policies/activation';
import type { PolicyDoc } from '../../src/policies/model';
import { purchasePolicy } from '../../src/policies/purchase';
import { expirePolicies } from '../../src/policies/sweeps';
import { at, cropBody, type DomainDb, domainDb, KE_VERIFIED, outcome, sellable, T0 } from './fixtures';

describe('expiry sweep (domain, time injected)', () => {
  let db: DomainDb;
  beforeAll(async () => {
    db = await domainDb('sweeps');
  });
  afterAll(async () => {
    await db.close();
  });

  const registry = { registerPolicy: async () => ({ onChainPolicyId: '1', txHash: `0x${'ef'.repeat(32)}` }) };
  const buy = async () => {
    const org = await sellable(db);
    const { policy } = await purchasePolicy(org.tenant, KE_VERIFIED, cropBody(org, { durationDays: 90 }), T0);
    return { ...org, policyId: policy.id };
  };
  const stored = (tenant: Awaited<ReturnType<typeof buy>>['tenant'], id: string) =>
    tenant.policies.findById(id).lean<PolicyDoc>();

  it('expires an active policy when the injected time reaches its cover end, and it can no longer be activated', async () => {
    const { tenant, policyId } = await buy();
    const nextDay = await buy();
    await createActivator({ registry, clock: () => T0 }).activate(tenant.policies, {
      policyId,
      via: 'PARTNER',
    });
    // Activated a day later: its cover ends a day later too.
    const dayLater = createActivator({ registry, clock: () => at(T0, DAY_MS) });
    await dayLater.activate(nextDay.tenant.policies, { policyId: nextDay.policyId, via: 'PARTNER' });
    const activator = createActivator({ registry, clock: () => T0 });
    const policies = db.repositories.acrossOrganizations().policies;

    expect(await expirePolicies(policies, at(T0, 90 * DAY_MS - 1))).toBe(0);
    expect(await expirePolicies(policies, at(T0, 90 * DAY_MS))).toBe(1);
    expect(await stored(tenant, policyId)).toMatchObject({
      status: 'EXPIRED',
      expiredAt: at(T0, 90 * DAY_MS),
    });
    expect((await stored(nextDay.tenant, nextDay.policyId))?.status).toBe('ACTIVE');
    expect(await expirePolicies(policies, at(T0, 91 * DAY_MS))).toBe(1);
    expect((await stored(nextDay.tenant, nextDay.policyId))?.status).toBe('EXPIRED');
    expect(await outcome(activator.activate(tenant.policies, { policyId, via: 'PARTNER' }))).toMatchObject({
      code: 'INVALID_INPUT',
      message: 'The policy is EXPIRED; only a PENDING policy can be activated',
    });
  });
});
