import { claimKeyedReservation, fingerprintOf } from '../../src/policies/idempotency';
import { purchasePolicyOnce } from '../../src/policies/purchase';
import type { TenantPolicyData } from '../../src/repositories';
import { cropBody, type DomainDb, domainDb, KE_VERIFIED, outcome, sellable, T0 } from './fixtures';

describe('purchasePolicyOnce with an Idempotency-Key (domain)', () => {
  let db: DomainDb;
  beforeAll(async () => {
    db = await domainDb('purchase_idempotency');
  });
  afterAll(async () => {
    await db.close();
  });

  /** Everything a purchase can write for the organization: its policies (with their outbox) and capacity. */
  const stored = async (tenant: TenantPolicyData) => ({
    policies: await db.connection
      .collection('policies')
      .find({ organizationId: tenant.capacity.organizationId })
      .sort({ _id: 1 })
      .toArray(),
    capacity: await db.connection
      .collection('underwriting_capacity')
      .findOne({ _id: tenant.capacity.organizationId as never }),
  });
  const buy = (tenant: TenantPolicyData, body: ReturnType<typeof cropBody>, key?: string) =>
    purchasePolicyOnce(tenant, KE_VERIFIED, body, T0, key);

  it('a repeat with the same key and body answers the same policy and reserves, writes and emits nothing', async () => {
    const org = await sellable(db);
    const body = cropBody(org, { sumInsured: 70_000 });
    const first = await buy(org.tenant, body, 'order-1');
    expect(first.replayed).toBe(false);
    const after = await stored(org.tenant);
    expect(after.policies).toHaveLength(1);
    expect(after.policies[0]).toMatchObject({ idempotencyKey: 'order-1', outbox: [] });
    expect(after.capacity).toMatchObject({ keyedReservations: [] });
    expect((await org.tenant.capacity.get())?.reservedMinor).toBe(7_000_000n);

    // Key order in the body does not matter: the fingerprint is of the canonical parsed input.
    const reordered = Object.fromEntries(Object.entries(body).reverse()) as typeof body;
    for (const again of [body, reordered]) {
      const replay = await buy(org.tenant, again, 'order-1');
      expect(replay).toEqual({ purchase: first.purchase, replayed: true });
    }
    expect(await stored(org.tenant)).toEqual(after);
  });

  it('the same key with another body is 409 CONFLICT and writes nothing', async () => {
    const org = await sellable(db);
    await buy(org.tenant, cropBody(org, { sumInsured: 60_000 }), 'order-2');
    const before = await stored(org.tenant);
    const other = await outcome(buy(org.tenant, cropBody(org, { sumInsured: 61_000 }), 'order-2'));
    expect(other).toMatchObject({
      code: 'CONFLICT',
      message: expect.stringMatching(/Idempotency-Key was already used .* different body/),
      details: [{ field: 'Idempotency-Key', message: 'already used with a different request body' }],
    });
    expect(await stored(org.tenant)).toEqual(before);
  });

  it('concurrent requests with one key make one policy and reserve its capacity once', async () => {
    const org = await sellable(db);
    const body = cropBody(org, { sumInsured: 40_000 });
    const answers = await Promise.all(Array.from({ length: 8 }, () => buy(org.tenant, body, 'order-3')));
    const ids = new Set(answers.map((a) => a.purchase.policy.id));
    expect(ids.size).toBe(1);
    expect(answers.filter((a) => !a.replayed)).toHaveLength(1);
    const after = await stored(org.tenant);
    expect(after.policies).toHaveLength(1);
    expect((await org.tenant.capacity.get())?.reservedMinor).toBe(4_000_000n);
    expect(after.capacity?.keyedReservations).toEqual([]);
    // The unique index itself refuses a second policy with the key in the organization.
    const copy = { ...after.policies[0], _id: 'copy', policyNumber: 'KE-COPY' };
    await expect(db.connection.collection('policies').insertOne(copy as never)).rejects.toMatchObject({
      code: 11000,
    });
  });

  it('a reservation left by a request that stopped before writing its policy is used by the retry, not doubled', async () => {
    const org = await sellable(db);
    const body = cropBody(org, { sumInsured: 30_000 });
    // The first request claimed the key and reserved, then its process died.
    const keyed = { key: 'order-4', fingerprint: fingerprintOf(body) };
    expect(await claimKeyedReservation(org.tenant, keyed, 3_000_000n, T0)).toMatchObject({ mine: true });
    expect((await org.tenant.capacity.get())?.reservedMinor).toBe(3_000_000n);

    // Another body under that key is refused while the claim is open, too.
    expect(await outcome(buy(org.tenant, cropBody(org, { sumInsured: 31_000 }), 'order-4'))).toMatchObject({
      code: 'CONFLICT',
    });
    const retry = await buy(org.tenant, body, 'order-4');
    expect(retry.replayed).toBe(false);
    const after = await stored(org.tenant);
    expect(after.policies).toHaveLength(1);
    expect((await org.tenant.capacity.get())?.reservedMinor).toBe(3_000_000n);
    expect(after.capacity?.keyedReservations).toEqual([]);
  });

  it("another organization's key is independent, and purchases without a key are not deduplicated", async () => {
    const a = await sellable(db);
    const b = await sellable(db);
    const fromA = await buy(a.tenant, cropBody(a), 'shared-key');
    const fromB = await buy(b.tenant, cropBody(b), 'shared-key');
    expect(fromB.replayed).toBe(false);
    expect(fromB.purchase.policy.id).not.toBe(fromA.purchase.policy.id);
    expect((await b.tenant.capacity.get())?.reservedMinor).toBe(5_000_000n);

    const unkeyed = [await buy(a.tenant, cropBody(a)), await buy(a.tenant, cropBody(a))];
    expect(unkeyed.map((u) => u.replayed)).toEqual([false, false]);
    expect((await stored(a.tenant)).policies).toHaveLength(3);
    expect((await a.tenant.capacity.get())?.reservedMinor).toBe(15_000_000n);
  });

  it('a key whose capacity ran out is refused as before, and nothing is claimed', async () => {
    const org = await sellable(db, 100_000);
    const refused = await outcome(buy(org.tenant, cropBody(org, { sumInsured: 100_001 }), 'order-5'));
    expect(refused).toMatchObject({ code: 'INVALID_INPUT', details: [{ field: 'sumInsured' }] });
    const after = await stored(org.tenant);
    expect(after.policies).toEqual([]);
    expect(after.capacity?.keyedReservations).toEqual([]);
    // The key was not used up: the partner may buy a smaller sum with it.
    expect((await buy(org.tenant, cropBody(org, { sumInsured: 100_000 }), 'order-5')).replayed).toBe(false);
  });
});
