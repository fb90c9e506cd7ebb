import { ChainError, termsHashOf } from '@parametric/chain';
import { onOutboxWritten } from '@parametric/events';
import { DAY_MS } from '../../src/clock';
import { createActivator, policyTerms } from '../../src/policies/activation';
import type { PolicyDoc } from '../../src/policies/model';
import { purchasePolicy } from '../../src/policies/purchase';
import { at, cropBody, type DomainDb, domainDb, KE_VERIFIED, outcome, sellable, T0 } from './fixtures';

/** A registry that records what it was asked to register and answers as the chain would. */
function fakeRegistry(fail: (call: number) => ChainError | undefined = () => undefined) {
  const calls: Array<{ policyId: string; terms: unknown }> = [];
  return {
    calls,
    async registerPolicy(policyId: string, terms: unknown) {
      calls.push({ policyId, terms });
      const error = fail(calls.length);
      if (error) throw error;
      return { onChainPolicyId: '42', txHash: `0x${'cd'.repeat(32)}` };
    },
  };
}

describe('activation (domain, chain faked)', () => {
  let db: DomainDb;
  beforeAll(async () => {
    db = await domainDb('activation');
  });
  afterAll(async () => {
    await db.close();
  });

  const buy = async (
    tier: 'DETERMINATION' | 'DETERMINATION_AND_SETTLEMENT' = 'DETERMINATION',
    sumInsured = 123_456.78,
  ) => {
    const org = await sellable(db);
    const { policy } = await purchasePolicy(
      org.tenant,
      { ...KE_VERIFIED, serviceTier: tier },
      cropBody(org, { sumInsured, durationDays: 90 }),
      T0,
    );
    return { ...org, policyId: policy.id };
  };
  const stored = (tenant: Awaited<ReturnType<typeof buy>>['tenant'], id: string) =>
    tenant.policies.findById(id).lean<PolicyDoc>();

  it('activates: cover from the clock after registration, the terms hashed, policy.activated in the outbox', async () => {
    const { tenant, policyId, farmerId } = await buy();
    const registry = fakeRegistry();
    // The outbox write itself wakes this process's relay (libs/events signal.ts): once here.
    let recorded = 0;
    const stopListening = onOutboxWritten(
      db.repositories.acrossOrganizations().policies.collection,
      'outboxPending',
      () => recorded++,
    );
    const activatedAt = at(T0, 3 * DAY_MS);
    const activator = createActivator({ registry, clock: () => activatedAt });

    const { policy, activatedNow } = await activator.activate(tenant.policies, {
      policyId,
      via: 'PARTNER',
      premiumReference: 'MPESA-1',
    });
    expect(activatedNow).toBe(true);
    expect(policy).toMatchObject({
      status: 'ACTIVE',
      premiumPaid: true,
      onChainPolicyId: '42',
      coverStartsAt: activatedAt,
      coverEndsAt: at(activatedAt, 90 * DAY_MS),
      activatedVia: 'PARTNER',
      premiumReference: 'MPESA-1',
      sumInsuredMinor: 12_345_678n,
    });
    expect(policy.termsHash).toBe(termsHashOf(registry.calls[0]?.terms));
    expect(policy.outbox).toHaveLength(1);
    expect(policy.outbox[0]).toMatchObject({
      event: 'policy.activated',
      organizationId: tenant.organizationId,
      data: {
        policyId,
        farmerId,
        onChainPolicyId: '42',
        policyNumber: policy.policyNumber,
        sumInsured: 123_456.78,
      },
    });
    expect(recorded).toBe(1);

    // Again: the same policy, no second registration, no second event.
    const again = await activator.activate(tenant.policies, {
      policyId,
      via: 'PARTNER',
      premiumReference: 'other',
    });
    expect(again.activatedNow).toBe(false);
    expect(again.policy).toMatchObject({ premiumReference: 'MPESA-1', coverStartsAt: activatedAt });
    expect(registry.calls).toHaveLength(1);
    expect(recorded).toBe(1);
    stopListening();
  });

  it('hashes the same terms on a retry, as JSON numbers of minor units (the format registered before int64)', async () => {
    const { tenant, policyId } = await buy();
    const registry = fakeRegistry((call) =>
      call === 1 ? new ChainError('CHAIN_TIMEOUT', 'chain call timed out') : undefined,
    );
    const activator = createActivator({ registry, clock: () => T0 });

    const failed = await outcome(activator.activate(tenant.policies, { policyId, via: 'PARTNER' }));
    expect(failed).toMatchObject({
      code: 'BLOCKCHAIN_ERROR',
      message:
        'The policy could not be registered on chain (chain call timed out); it stays PENDING, try again',
    });
    expect(await stored(tenant, policyId)).toMatchObject({
      status: 'PENDING',
      onChainPolicyId: null,
      termsHash: null,
      outbox: [],
    });

    const { policy } = await activator.activate(tenant.policies, { policyId, via: 'PARTNER' });
    const [first, retry] = registry.calls;
    expect(retry?.terms).toEqual(first?.terms);
    expect(first?.terms).toMatchObject({ sumInsuredMinor: 12_345_678, premiumMinor: expect.any(Number) });
    expect(policy.termsHash).toBe(termsHashOf(first?.terms));

    // The stored document, read as a hydrated document, a lean one or a raw driver one, gives the same terms.
    const hydrated = (
      await db.repositories.acrossOrganizations().policies.findById(policyId)
    )?.toObject() as PolicyDoc;
    const raw = (await db.connection
      .collection('policies')
      .findOne({ _id: policyId as never })) as unknown as PolicyDoc;
    expect(typeof raw.sumInsuredMinor).toBe('number');
    for (const doc of [hydrated, raw, policy]) expect(termsHashOf(policyTerms(doc))).toBe(policy.termsHash);
  });

  it('refuses the wrong channel with 403 and an unknown or foreign policy with 404, registering nothing', async () => {
    const tier2 = await buy('DETERMINATION_AND_SETTLEMENT');
    const tier1 = await buy();
    const registry = fakeRegistry();
    const activator = createActivator({ registry, clock: () => T0 });
    expect(
      await outcome(activator.activate(tier2.tenant.policies, { policyId: tier2.policyId, via: 'PARTNER' })),
    ).toMatchObject({
      code: 'FORBIDDEN',
      message: expect.stringMatching(/mobile money/),
    });
    expect(
      await outcome(activator.activate(tier1.tenant.policies, { policyId: tier1.policyId, via: 'PAYMENT' })),
    ).toMatchObject({
      code: 'FORBIDDEN',
      message: expect.stringMatching(/PUT \/policies\/\{id\}\/activate/),
    });
    expect(
      await outcome(activator.activate(tier2.tenant.policies, { policyId: tier1.policyId, via: 'PARTNER' })),
    ).toMatchObject({
      code: 'NOT_FOUND',
    });
    expect(registry.calls).toHaveLength(0);
  });
});
