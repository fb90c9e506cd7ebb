import {
  bulkImportFarmers,
  farmerHerds,
  farmerPlots,
  listFarmers,
  readFarmer,
  registerFarmer,
  setFarmerKyc,
} from '../../src/farmers/domain';
import { registerHerd } from '../../src/herds/domain';
import { registerPlot } from '../../src/plots/domain';
import type { TenantPolicyData } from '../../src/repositories';
import { type DomainDb, domainDb, farmerInput, herdInput, outcome, plotInput } from './fixtures';

describe('farmers (domain)', () => {
  let db: DomainDb;
  beforeAll(async () => {
    db = await domainDb('farmers');
  });
  afterAll(async () => {
    await db.close();
  });

  const across = () => db.repositories.acrossOrganizations().farmers;

  describe('registerFarmer', () => {
    it('registers a farmer, KYC PENDING, with ISO dates and a null location when none is given', async () => {
      const tenant = db.organization();
      const input = farmerInput();
      const farmer = await registerFarmer(tenant, input);
      expect(farmer).toEqual({
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        ...input,
        location: null,
        kycStatus: 'PENDING',
        createdAt: expect.stringMatching(/Z$/),
        updatedAt: expect.stringMatching(/Z$/),
      });
    });

    it.each([
      ['phone number', ['phoneNumber']],
      ['national ID', ['nationalId']],
      ['phone number and national ID', ['phoneNumber', 'nationalId']],
    ])('answers 409 naming the %s already registered in the organization', async (_what, fields) => {
      const tenant = db.organization();
      const first = farmerInput();
      await registerFarmer(tenant, first);
      const clash = farmerInput(Object.fromEntries(fields.map((f) => [f, first[f as keyof typeof first]])));
      expect(await outcome(registerFarmer(tenant, clash))).toEqual({
        code: 'CONFLICT',
        message: 'A farmer with this phone number or national ID is already registered',
        details: fields.map((field) => ({
          field,
          message: 'already registered to another farmer of this organization',
        })),
      });
      expect(await tenant.farmers.countDocuments()).toBe(1);
    });

    it('lets the unique index decide a race: one farmer, the others 409 naming the field', async () => {
      const tenant = db.organization();
      const input = farmerInput();
      const results = await Promise.all(
        Array.from({ length: 5 }, () => outcome(registerFarmer(tenant, input))),
      );
      expect(results.filter((r) => 'ok' in r)).toHaveLength(1);
      for (const r of results.filter((r) => !('ok' in r))) {
        expect(r).toMatchObject({
          code: 'CONFLICT',
          details: expect.arrayContaining([
            expect.objectContaining({ field: expect.stringMatching(/^(phoneNumber|nationalId)$/) }),
          ]),
        });
      }
      expect(await tenant.farmers.countDocuments()).toBe(1);
    });

    it('keeps organizations apart: the same person may be registered by two', async () => {
      const input = farmerInput();
      await registerFarmer(db.organization(), input);
      expect(await outcome(registerFarmer(db.organization(), input))).toHaveProperty('ok');
    });
  });

  describe('bulkImportFarmers', () => {
    it('reports each row; re-sending the same file creates nothing', async () => {
      const tenant = db.organization();
      const plot = { name: 'A1', latitude: 0.1, longitude: 35.1, areaHectares: 2, cropType: 'BEANS' };
      const a = { ...farmerInput(), plots: [plot] };
      const b = farmerInput();
      const invalid = { ...farmerInput(), phoneNumber: '12', extra: true };
      const clashing = { ...farmerInput(), nationalId: b.nationalId };
      const file = [a, b, invalid, clashing, b];

      const first = await bulkImportFarmers(tenant, file);
      expect(first.summary).toEqual({ created: 2, duplicate: 1, conflict: 1, invalid: 1 });
      const [ra, rb, ri, rc, rb2] = first.results;
      expect(ra).toMatchObject({ index: 0, status: 'created', plotIds: [expect.any(String)] });
      expect(rb).toMatchObject({ index: 1, status: 'created', plotIds: [] });
      expect(ri).toEqual({
        index: 2,
        status: 'invalid',
        errors: [
          { field: 'phoneNumber', message: expect.any(String) },
          { field: 'extra', message: 'Unknown field' },
        ],
      });
      expect(rc).toEqual({
        index: 3,
        status: 'conflict',
        errors: [
          { field: 'nationalId', message: 'already registered to another farmer of this organization' },
        ],
      });
      // The same person twice in one file: the second is a duplicate of the first.
      expect(rb2).toEqual({
        index: 4,
        status: 'duplicate',
        farmerId: rb?.status === 'created' ? rb.farmerId : '',
      });

      const counts = async () => [await tenant.farmers.countDocuments(), await tenant.plots.countDocuments()];
      const before = await counts();
      expect(before).toEqual([2, 1]);
      const again = await bulkImportFarmers(tenant, file);
      expect(again.summary).toEqual({ created: 0, duplicate: 3, conflict: 1, invalid: 1 });
      expect(await counts()).toEqual(before);
    });

    it('reports a row that is not an object as invalid, and goes on with the others', async () => {
      const tenant = db.organization();
      const result = await bulkImportFarmers(tenant, ['not a farmer', farmerInput()]);
      expect(result.results[0]).toEqual({
        index: 0,
        status: 'invalid',
        errors: [{ field: '(row)', message: expect.any(String) }],
      });
      expect(result.summary.created).toBe(1);
    });
  });

  describe('reads', () => {
    it('lists newest first, page by page, filtered by KYC status', async () => {
      const tenant = db.organization();
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) ids.push((await registerFarmer(tenant, farmerInput())).id);
      await setFarmerKyc(across(), ids[0] as string, 'APPROVED');

      const second = await listFarmers(tenant, { page: 2, limit: 2 });
      expect(second.at).toEqual({ page: 2, limit: 2, total: 5 });
      expect(second.items.map((f) => f.id)).toEqual([ids[2], ids[1]]);
      const approved = await listFarmers(tenant, { page: 1, limit: 100, kycStatus: 'APPROVED' });
      expect([approved.at.total, approved.items[0]?.id]).toEqual([1, ids[0]]);
      expect((await listFarmers(tenant, { page: 1, limit: 100, kycStatus: 'PENDING' })).at.total).toBe(4);
      expect((await listFarmers(db.organization(), { page: 1, limit: 100 })).at.total).toBe(0);
    });

    it("answers 404 for another organization's farmer, its plots and its herds, as for an unknown one", async () => {
      const owner = db.organization();
      const other = db.organization();
      const farmer = await registerFarmer(owner, farmerInput());
      const plot = await registerPlot(owner, plotInput(farmer.id));
      const herd = await registerHerd(owner, herdInput(farmer.id, 10_000));
      expect(await readFarmer(owner, farmer.id)).toEqual(farmer);
      const first = { page: 1, limit: 20 };
      expect(await farmerPlots(owner, farmer.id, first)).toEqual({ items: [plot], total: 1 });
      expect(await farmerHerds(owner, farmer.id, first)).toEqual({ items: [herd], total: 1 });
      const unknown = await outcome(readFarmer(other, '3f2504e0-4f89-41d3-9a0c-0305e82c3301'));
      expect(unknown).toMatchObject({ code: 'NOT_FOUND', message: 'Farmer not found' });
      const reads: Array<(t: TenantPolicyData, id: string) => Promise<unknown>> = [
        readFarmer,
        (t, id) => farmerPlots(t, id, first),
        (t, id) => farmerHerds(t, id, first),
      ];
      for (const read of reads) {
        expect(await outcome(read(other, farmer.id))).toEqual(unknown);
      }
    });
  });

  describe('setFarmerKyc (ops, across organizations)', () => {
    it('sets the status by farmer id alone and names the organization; an unknown farmer is 404', async () => {
      const tenant = db.organization();
      const farmer = await registerFarmer(tenant, farmerInput());
      expect(await setFarmerKyc(across(), farmer.id, 'APPROVED')).toMatchObject({
        id: farmer.id,
        kycStatus: 'APPROVED',
        organizationId: tenant.organizationId,
      });
      expect((await readFarmer(tenant, farmer.id)).kycStatus).toBe('APPROVED');
      expect(
        await outcome(setFarmerKyc(across(), '9b2f6c8e-1d4a-4c3b-8e7f-0a1b2c3d4e5f', 'REJECTED')),
      ).toMatchObject({
        code: 'NOT_FOUND',
      });
    });
  });
});
