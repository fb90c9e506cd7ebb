import { initialKycStatus } from '../../src/farmers/domain';
import { recordCapacity, underwritingOf } from '../../src/underwriting/domain';
import { ensureSandboxUnderwriting } from '../../src/underwriting/sandbox';
import { type DomainDb, domainDb, T0 } from './fixtures';

describe('sandbox set-up (domain)', () => {
  let db: DomainDb;
  beforeAll(async () => {
    db = await domainDb('sandbox');
  });
  afterAll(async () => {
    await db.close();
  });

  it('writes a labelled licence and capacity once, however many purchases race to it', async () => {
    const tenant = db.organization();
    await Promise.all(Array.from({ length: 5 }, () => ensureSandboxUnderwriting(tenant, 'KE', T0)));
    const { licences, capacity } = await underwritingOf(tenant);
    expect(licences).toEqual([
      {
        market: 'KE',
        licenceNumber: 'SANDBOX-KE-NOT-A-LICENCE',
        expiresAt: expect.stringMatching(/^2036-/),
        updatedAt: expect.any(String),
      },
    ]);
    expect(capacity).toMatchObject({
      currency: 'KES',
      amount: '1000000000.00',
      reserved: '0.00',
      sandbox: true,
      solvencyAttestedUntil: expect.stringMatching(/^2036-/),
    });
    // Another market: its own licence and its own currency.
    const ghana = db.organization();
    await ensureSandboxUnderwriting(ghana, 'GH', T0);
    expect(await underwritingOf(ghana)).toMatchObject({
      licences: [{ market: 'GH', licenceNumber: 'SANDBOX-GH-NOT-A-LICENCE' }],
      capacity: { currency: 'GHS', amount: '1000000000.00', sandbox: true },
    });
  });

  it('fills only what is missing: capacity ops recorded stays, and is labelled', async () => {
    const tenant = db.organization();
    await recordCapacity(tenant, {
      amount: 5_000,
      currency: 'KES',
      solvencyAttestedUntil: new Date('2099-01-01'),
    });
    await ensureSandboxUnderwriting(tenant, 'KE', T0);
    const { licences, capacity } = await underwritingOf(tenant);
    expect(licences).toHaveLength(1);
    expect(capacity).toMatchObject({ amount: '5000.00', sandbox: true });
  });

  it('gives a sandbox farmer APPROVED, REJECTED or PENDING by national ID; a live one PENDING', () => {
    expect(initialKycStatus('sandbox', 'KE12345678')).toBe('APPROVED');
    expect(initialKycStatus('sandbox', 'REJECT-1')).toBe('REJECTED');
    expect(initialKycStatus('sandbox', 'rejected-2')).toBe('REJECTED');
    expect(initialKycStatus('sandbox', 'PENDING-1')).toBe('PENDING');
    expect(initialKycStatus('sandbox', 'KE-REJECT-1')).toBe('APPROVED');
    for (const id of ['KE12345678', 'REJECT-1', 'PENDING-1']) {
      expect(initialKycStatus('live', id)).toBe('PENDING');
      expect(initialKycStatus(undefined, id)).toBe('PENDING');
    }
  });
});
