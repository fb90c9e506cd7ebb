import { DAY_MS } from '../../src/clock';
import { purchasePolicy } from '../../src/policies/purchase';
import {
  recordCapacity,
  recordLicence,
  releaseCapacity,
  reserveCapacity,
  underwritingOf,
} from '../../src/underwriting/domain';
import { at, cropBody, type DomainDb, domainDb, KE_VERIFIED, outcome, sellable, T0 } from './fixtures';

describe('underwriting (domain)', () => {
  let db: DomainDb;
  beforeAll(async () => {
    db = await domainDb('underwriting');
  });
  afterAll(async () => {
    await db.close();
  });

  const until = at(T0, 365 * DAY_MS);

  it('keeps one licence per market: a new one replaces it, no expiry is kept as null', async () => {
    const tenant = db.organization();
    expect(
      await recordLicence(tenant, { market: 'KE', licenceNumber: 'IRA/1', expiresAt: until }),
    ).toMatchObject({
      market: 'KE',
      licenceNumber: 'IRA/1',
      expiresAt: until.toISOString(),
    });
    await recordLicence(tenant, { market: 'KE', licenceNumber: 'IRA/2' });
    await recordLicence(tenant, { market: 'GH', licenceNumber: 'NIC-9', expiresAt: null });
    expect((await underwritingOf(tenant)).licences).toEqual([
      { market: 'GH', licenceNumber: 'NIC-9', expiresAt: null, updatedAt: expect.any(String) },
      { market: 'KE', licenceNumber: 'IRA/2', expiresAt: null, updatedAt: expect.any(String) },
    ]);
    expect(await underwritingOf(db.organization())).toEqual({ licences: [], capacity: null });
  });

  it('records capacity as exact int64 minor units and shows it as decimal strings', async () => {
    const tenant = db.organization();
    const view = await recordCapacity(tenant, {
      amount: 1_000_000.1,
      currency: 'KES',
      solvencyAttestedUntil: until,
    });
    expect(view).toEqual({
      currency: 'KES',
      amount: '1000000.10',
      reserved: '0.00',
      remaining: '1000000.10',
      solvencyAttestedUntil: until.toISOString(),
      sandbox: false,
      updatedAt: expect.any(String),
    });
    const stored = await db.connection
      .collection('underwriting_capacity')
      .findOne({ _id: tenant.organizationId as never }, { useBigInt64: true });
    expect([stored?.amountMinor, stored?.reservedMinor]).toEqual([100_000_010n, 0n]);
    // The largest capacity ops may record stays exact.
    expect(
      (
        await recordCapacity(tenant, {
          amount: 999_999_999_999.99,
          currency: 'KES',
          solvencyAttestedUntil: until,
        })
      ).amount,
    ).toBe('999999999999.99');
  });

  it('keeps the currency while policies reserve capacity', async () => {
    const org = await sellable(db);
    await purchasePolicy(org.tenant, KE_VERIFIED, cropBody(org), T0);
    expect(
      await outcome(
        recordCapacity(org.tenant, { amount: 10, currency: 'GHS', solvencyAttestedUntil: until }),
      ),
    ).toMatchObject({
      code: 'INVALID_INPUT',
      details: [{ field: 'currency', message: 'must stay KES while policies reserve capacity' }],
    });
    // Raising the amount in the same currency keeps the reservations.
    expect(
      await recordCapacity(org.tenant, { amount: 2_000_000, currency: 'KES', solvencyAttestedUntil: until }),
    ).toMatchObject({
      reserved: '50000.00',
      remaining: '1950000.00',
    });
  });

  it('reserves exactly up to the capacity, never past it, and releases what it reserved', async () => {
    const tenant = db.organization();
    await recordCapacity(tenant, { amount: 100, currency: 'KES', solvencyAttestedUntil: until });
    const results = await Promise.all(Array.from({ length: 12 }, () => reserveCapacity(tenant, 1_000n)));
    expect(results.filter(Boolean)).toHaveLength(10);
    expect(await reserveCapacity(tenant, 1n)).toBe(false);
    await releaseCapacity(tenant, 1_000n);
    expect(await reserveCapacity(tenant, 1_001n)).toBe(false);
    expect(await reserveCapacity(tenant, 1_000n)).toBe(true);
    expect((await tenant.capacity.get())?.reservedMinor).toBe(10_000n);
    // Without recorded capacity nothing can be reserved.
    expect(await reserveCapacity(db.organization(), 1n)).toBe(false);
  });
});
