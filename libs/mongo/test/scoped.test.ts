import { scopedTo, type TenantScope } from '@parametric/mongo';
import { connectMongoose, type MongooseHandle } from '@parametric/test-harness';
import { type Model, Schema, Types } from 'mongoose';

interface Policy {
  organizationId: string;
  name: string;
  premium: number;
}

const ORG_A = '11111111-1111-4111-8111-111111111111';
const ORG_B = '22222222-2222-4222-8222-222222222222';

const policySchema = new Schema<Policy>({
  organizationId: { type: String, required: true, index: true },
  name: { type: String, required: true },
  premium: { type: Number, required: true },
});

let handle: MongooseHandle;
let Policies: Model<Policy>;
let scopedA: TenantScope<Policy>;
let a1: Types.ObjectId;
let a2: Types.ObjectId;
let b1: Types.ObjectId;

/** orgB's document exactly as stored, to compare before and after. */
async function orgBDocument() {
  return Policies.findById(b1).lean();
}

const ORG_B_ORIGINAL = { organizationId: ORG_B, name: 'b-maize', premium: 300 };

beforeAll(async () => {
  handle = await connectMongoose('mongo_scoped');
  Policies = handle.connection.model<Policy>('Policy', policySchema);
  await Policies.init();
  scopedA = scopedTo(Policies, ORG_A);
});

beforeEach(async () => {
  await Policies.deleteMany({});
  const [docA1, docA2, docB1] = await Policies.create([
    { organizationId: ORG_A, name: 'a-maize', premium: 100 },
    { organizationId: ORG_A, name: 'a-wheat', premium: 200 },
    ORG_B_ORIGINAL,
  ]);
  if (!docA1 || !docA2 || !docB1) throw new Error('seed failed');
  a1 = docA1._id;
  a2 = docA2._id;
  b1 = docB1._id;
});

afterAll(async () => {
  await handle.close();
});

describe('scopedTo(model, orgA)', () => {
  it('exposes the organization it is scoped to', () => {
    expect(scopedA.organizationId).toBe(ORG_A);
  });

  describe('create', () => {
    it('stamps orgA on the new document', async () => {
      const created = await scopedA.create({ name: 'a-rice', premium: 50 });
      expect(created.organizationId).toBe(ORG_A);
      expect(await Policies.findById(created._id).lean()).toMatchObject({
        organizationId: ORG_A,
        name: 'a-rice',
      });
    });

    it('stamps orgA even when the caller passes another organizationId', async () => {
      const input = { name: 'smuggled', premium: 1, organizationId: ORG_B };
      const created = await scopedA.create(input);
      expect(created.organizationId).toBe(ORG_A);
      expect(await Policies.findById(created._id).lean()).toMatchObject({ organizationId: ORG_A });
      expect(await Policies.countDocuments({ organizationId: ORG_B })).toBe(1);
    });
  });

  describe('find', () => {
    it('returns only orgA documents', async () => {
      const found = await scopedA.find().lean();
      expect(found.map((d) => d.name).sort()).toEqual(['a-maize', 'a-wheat']);
    });

    it("never returns orgB's documents when the filter names orgB's organizationId", async () => {
      const found = await scopedA.find({ organizationId: ORG_B }).lean();
      expect(found.every((d) => d.organizationId === ORG_A)).toBe(true);
      expect(found.map((d) => String(d._id))).not.toContain(String(b1));
    });

    it("never returns orgB's documents when the filter names orgB's _id", async () => {
      expect(await scopedA.find({ _id: b1 }).lean()).toEqual([]);
      expect(await scopedA.find({ _id: { $in: [a1, b1] } }).lean()).toEqual([
        expect.objectContaining({ name: 'a-maize' }),
      ]);
    });

    it("never returns orgB's documents through $or / $and", async () => {
      expect(await scopedA.find({ $or: [{ organizationId: ORG_B }, { _id: b1 }] }).lean()).toEqual([]);
      expect(await scopedA.find({ $and: [{ organizationId: ORG_B }] }).lean()).toEqual([]);
      expect(await scopedA.find({ name: 'b-maize' }).lean()).toEqual([]);
    });
  });

  describe('findOne', () => {
    it("returns null for orgB's document by _id or by a field only it has", async () => {
      expect(await scopedA.findOne({ _id: b1 })).toBeNull();
      expect(await scopedA.findOne({ name: 'b-maize' })).toBeNull();
    });

    it("never returns orgB's document when the filter names orgB's organizationId", async () => {
      const found = await scopedA.findOne({ organizationId: ORG_B, name: 'b-maize' });
      expect(found).toBeNull();
      const any = await scopedA.findOne({ organizationId: ORG_B });
      expect(any?.organizationId).not.toBe(ORG_B);
    });

    it('returns an orgA document', async () => {
      expect((await scopedA.findOne({ name: 'a-wheat' }))?._id).toEqual(a2);
    });
  });

  describe('findById', () => {
    it("returns null for orgB's document id, as an ObjectId or a string", async () => {
      expect(await scopedA.findById(b1)).toBeNull();
      expect(await scopedA.findById(String(b1))).toBeNull();
    });

    it('returns an orgA document by id', async () => {
      expect((await scopedA.findById(a1))?.name).toBe('a-maize');
      expect((await scopedA.findById(String(a1)))?.name).toBe('a-maize');
    });
  });

  describe('readById (the driver, no mongoose query)', () => {
    it("returns null for orgB's document id, as an ObjectId or a string", async () => {
      expect(await scopedA.readById(b1)).toBeNull();
      expect(await scopedA.readById(String(b1))).toBeNull();
    });

    it('returns an orgA document by id, as a lean read of it does', async () => {
      const lean = await Policies.findById(a1).lean();
      expect(await scopedA.readById(a1)).toEqual(lean);
      expect(await scopedA.readById(String(a1))).toEqual(lean);
    });

    it('returns null for an id nothing has', async () => {
      expect(await scopedA.readById(new Types.ObjectId())).toBeNull();
    });

    it('refuses an id that is not one, as a query would', async () => {
      await expect(scopedA.readById('not-an-object-id')).rejects.toThrow(/Cast to ObjectId failed/);
    });
  });

  describe('countDocuments', () => {
    it('counts only orgA documents', async () => {
      expect(await scopedA.countDocuments()).toBe(2);
      expect(await scopedA.countDocuments({ premium: { $gte: 0 } })).toBe(2);
    });

    it("does not count orgB's documents even when the filter names orgB's organizationId or _id", async () => {
      expect(await scopedA.countDocuments({ _id: b1 })).toBe(0);
      expect(await scopedA.countDocuments({ name: 'b-maize' })).toBe(0);
      expect(await scopedA.countDocuments({ organizationId: ORG_B, name: 'b-maize' })).toBe(0);
      expect(await scopedA.countDocuments({ organizationId: ORG_B })).toBe(2);
    });
  });

  describe('exists', () => {
    it("is null for orgB's document even when the filter names orgB's organizationId or _id", async () => {
      expect(await scopedA.exists({ _id: b1 })).toBeNull();
      expect(await scopedA.exists({ organizationId: ORG_B, _id: b1 })).toBeNull();
      expect(await scopedA.exists({ name: 'b-maize' })).toBeNull();
    });

    it('finds an orgA document', async () => {
      expect((await scopedA.exists({ _id: a1 }))?._id).toEqual(a1);
    });
  });

  describe('updateOne', () => {
    it("cannot modify orgB's document by _id", async () => {
      const result = await scopedA.updateOne({ _id: b1 }, { $set: { premium: 999, name: 'hacked' } });
      expect(result.matchedCount).toBe(0);
      expect(result.modifiedCount).toBe(0);
      expect(await orgBDocument()).toMatchObject(ORG_B_ORIGINAL);
    });

    it("cannot modify orgB's document when the filter names orgB's organizationId", async () => {
      await scopedA.updateOne({ organizationId: ORG_B, _id: b1 }, { $set: { premium: 999 } });
      await scopedA.updateOne({ organizationId: ORG_B }, { $set: { premium: 998 } });
      expect(await orgBDocument()).toMatchObject(ORG_B_ORIGINAL);
    });

    it('modifies an orgA document', async () => {
      const result = await scopedA.updateOne({ _id: a1 }, { $set: { premium: 150 } });
      expect(result.modifiedCount).toBe(1);
      expect(await Policies.findById(a1).lean()).toMatchObject({ organizationId: ORG_A, premium: 150 });
    });

    it('cannot move an orgA document into orgB', async () => {
      await scopedA.updateOne({ _id: a1 }, { $set: { organizationId: ORG_B } }).catch(() => undefined);
      expect(await Policies.findById(a1).lean()).toMatchObject({ organizationId: ORG_A });
      expect(await Policies.countDocuments({ organizationId: ORG_B })).toBe(1);
    });
  });

  describe('findOneAndUpdate', () => {
    it("cannot modify orgB's document by _id and returns null", async () => {
      const result = await scopedA.findOneAndUpdate({ _id: b1 }, { $set: { premium: 999 } });
      expect(result).toBeNull();
      expect(await orgBDocument()).toMatchObject(ORG_B_ORIGINAL);
    });

    it("cannot modify orgB's document when the filter names orgB's organizationId", async () => {
      const result = await scopedA.findOneAndUpdate(
        { organizationId: ORG_B, name: 'b-maize' },
        { premium: 999 },
      );
      expect(result).toBeNull();
      expect(await orgBDocument()).toMatchObject(ORG_B_ORIGINAL);
    });

    it('returns the updated orgA document by default', async () => {
      const result = await scopedA.findOneAndUpdate({ _id: a2 }, { $set: { premium: 250 } });
      expect(result).toMatchObject({ organizationId: ORG_A, name: 'a-wheat', premium: 250 });
    });

    it('upserts into orgA, not into the organization named in the filter', async () => {
      const result = await scopedA.findOneAndUpdate(
        { organizationId: ORG_B, name: 'b-new' },
        { $set: { premium: 7 } },
        { upsert: true },
      );
      expect(result).toMatchObject({ organizationId: ORG_A, name: 'b-new', premium: 7 });
      expect(await Policies.countDocuments({ organizationId: ORG_B })).toBe(1);
    });

    it('cannot move an orgA document into orgB', async () => {
      await scopedA.findOneAndUpdate({ _id: a2 }, { $set: { organizationId: ORG_B } }).catch(() => undefined);
      expect(await Policies.findById(a2).lean()).toMatchObject({ organizationId: ORG_A });
      expect(await Policies.countDocuments({ organizationId: ORG_B })).toBe(1);
    });
  });

  describe('deleteOne', () => {
    it("cannot delete orgB's document by _id", async () => {
      const result = await scopedA.deleteOne({ _id: b1 });
      expect(result.deletedCount).toBe(0);
      expect(await orgBDocument()).toMatchObject(ORG_B_ORIGINAL);
    });

    it("cannot delete orgB's document when the filter names orgB's organizationId", async () => {
      await scopedA.deleteOne({ organizationId: ORG_B, _id: b1 });
      await scopedA.deleteOne({ organizationId: ORG_B, name: 'b-maize' });
      expect(await orgBDocument()).toMatchObject(ORG_B_ORIGINAL);
      expect(await Policies.countDocuments({ organizationId: ORG_B })).toBe(1);
    });

    it('deletes an orgA document', async () => {
      const result = await scopedA.deleteOne({ _id: a1 });
      expect(result.deletedCount).toBe(1);
      expect(await Policies.findById(a1)).toBeNull();
    });
  });
});
