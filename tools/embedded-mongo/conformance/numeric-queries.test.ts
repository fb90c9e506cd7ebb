// int32, int64 (beyond 2^53 too), double and Decimal128 compared, sorted and looked up as one
// numeric type, as a MongoDB 7.0 standalone does.
import { connectDriver, type DriverHandle } from '@parametric/test-harness';
import { Decimal128, type Filter, Long } from 'mongodb';
import { type Doc, serverError } from './support';

const L = (text: string) => Long.fromString(text);
const D = (text: string) => Decimal128.fromString(text);
const TWO_53 = 9007199254740992;

// Ascending numeric order: 5, 10, 6, 3, 1, 9, 8, 4, 2; the string sorts after every number.
const VALUES: Doc[] = [
  { _id: 1, v: 5 },
  { _id: 2, v: L('9007199254740993') },
  { _id: 3, v: 2.5 },
  { _id: 4, v: D('9007199254740992.5') },
  { _id: 5, v: L('-9007199254740993') },
  { _id: 6, v: D('0.1') },
  { _id: 7, v: 'text' },
  { _id: 8, v: L('9007199254740992') },
  { _id: 9, v: D('10') },
  { _id: 10, v: D('-1E+2') },
];

describe('conformance: int64 and Decimal128 in queries, sorts and indexes', () => {
  let handle: DriverHandle;

  beforeAll(async () => {
    handle = await connectDriver('numeric_queries');
    await handle.db.collection<Doc>('values').insertMany(VALUES.map((d) => ({ ...d })));
  });

  afterAll(async () => {
    await handle.close();
  });

  const values = () => handle.db.collection<Doc>('values');
  const ids = async (filter: Filter<Doc>) =>
    (await values().find(filter).sort({ _id: 1 }).toArray()).map((d) => d._id);

  describe('range operators compare every numeric type by value', () => {
    it.each([
      ['$gt int64 2^53', { $gt: L('9007199254740992') }, [2, 4]],
      ['$gt double 2^53', { $gt: TWO_53 }, [2, 4]],
      ['$gte Decimal128 2^53 + 0.5', { $gte: D('9007199254740992.5') }, [2, 4]],
      ['$gte int32 10', { $gte: 10 }, [2, 4, 8, 9]],
      ['$lt int32 0', { $lt: 0 }, [5, 10]],
      ['$lte Decimal128 0.1', { $lte: D('0.1') }, [5, 6, 10]],
      ['$gt double 2.5 and $lt int64 10', { $gt: 2.5, $lt: L('10') }, [1]],
      ['$lt int64 -2^53', { $lt: L('-9007199254740992') }, [5]],
    ])('%s', async (_label, condition, expected) => {
      expect(await ids({ v: condition })).toEqual(expected);
    });

    it('Decimal128 0.1 is below the double 0.1, whose exact value is 0.1000000000000000055…', async () => {
      expect(await ids({ v: { $lt: 0.1 } })).toEqual([5, 6, 10]);
      expect(await ids({ v: 0.1 })).toEqual([]);
    });

    it('a number bound never matches a string (type bracketing)', async () => {
      expect(await ids({ v: { $gt: L('-9223372036854775808') } })).not.toContain(7);
    });
  });

  describe('equality, $ne, $in and $nin compare numbers by value across types', () => {
    it.each([
      ['int64 5 finds int32 5', L('5'), [1]],
      ['Decimal128 5.00 finds int32 5', D('5.00'), [1]],
      ['int32 10 finds Decimal128 10', 10, [9]],
      ['Decimal128 1E+1 finds Decimal128 10', D('1E+1'), [9]],
      ['double 2^53 finds int64 2^53 and not 2^53 + 1', TWO_53, [8]],
      ['int64 2^53 + 1 finds only itself', L('9007199254740993'), [2]],
      ['Decimal128 -100 finds Decimal128 -1E+2', D('-100'), [10]],
    ])('%s', async (_label, value, expected) => {
      expect(await ids({ v: value })).toEqual(expected);
      expect(await ids({ v: { $eq: value } })).toEqual(expected);
    });

    it('$ne excludes the numerically equal value of another type', async () => {
      expect(await ids({ v: { $ne: D('2.50') } })).toEqual([1, 2, 4, 5, 6, 7, 8, 9, 10]);
    });

    it('$in and $nin match by value whatever the numeric type of list and field', async () => {
      const list = [D('5'), L('9007199254740993'), 2.5, L('-100')];
      expect(await ids({ v: { $in: list } })).toEqual([1, 2, 3, 10]);
      expect(await ids({ v: { $nin: list } })).toEqual([4, 5, 6, 7, 8, 9]);
    });

    it('$all matches an array holding every listed number, whatever their types', async () => {
      const c = handle.db.collection<Doc>('all_numbers');
      await c.insertMany([
        { _id: 1, v: [L('9007199254740993'), 5] },
        { _id: 2, v: [L('9007199254740992'), D('5.0')] },
      ]);
      const found = await c.find({ v: { $all: [D('5'), L('9007199254740993')] } }).toArray();
      expect(found.map((d) => d._id)).toEqual([1]);
      expect(await c.countDocuments({ v: { $all: [5] } })).toBe(2);
    });

    it('equality inside $or, $and and $elemMatch uses the same numeric comparison', async () => {
      expect(await ids({ $or: [{ v: L('5') }, { v: { $eq: D('10.0') } }] })).toEqual([1, 9]);
      const c = handle.db.collection<Doc>('elem');
      await c.insertMany([
        { _id: 1, amounts: [L('9007199254740993'), 3] },
        { _id: 2, amounts: [D('9007199254740993.5')] },
      ]);
      const found = await c
        .find({ amounts: { $elemMatch: { $gt: TWO_53, $lt: D('9007199254740993.1') } } })
        .toArray();
      expect(found.map((d) => d._id)).toEqual([1]);
    });
  });

  it('$type tells int, long, double and decimal apart and "number" matches them all', async () => {
    expect(await ids({ v: { $type: 'int' } })).toEqual([1]);
    expect(await ids({ v: { $type: 'long' } })).toEqual([2, 5, 8]);
    expect(await ids({ v: { $type: 'double' } })).toEqual([3]);
    expect(await ids({ v: { $type: 'decimal' } })).toEqual([4, 6, 9, 10]);
    expect(await ids({ v: { $type: 'number' } })).toEqual([1, 2, 3, 4, 5, 6, 8, 9, 10]);
    expect(await ids({ v: { $type: ['long', 'string'] } })).toEqual([2, 5, 7, 8]);
  });

  describe('sort', () => {
    it('find sorts numbers of every type by value, then strings', async () => {
      const asc = await values().find().sort({ v: 1 }).toArray();
      expect(asc.map((d) => d._id)).toEqual([5, 10, 6, 3, 1, 9, 8, 4, 2, 7]);
      const desc = await values().find().sort({ v: -1 }).toArray();
      expect(desc.map((d) => d._id)).toEqual([7, 2, 4, 8, 9, 1, 3, 6, 10, 5]);
    });

    it('$sort in a pipeline uses the same order', async () => {
      const out = await values()
        .aggregate([{ $match: { v: { $type: 'number' } } }, { $sort: { v: -1 } }])
        .toArray();
      expect(out.map((d) => d._id)).toEqual([2, 4, 8, 9, 1, 3, 6, 10, 5]);
    });

    it('an array field sorts by its smallest element ascending and its largest descending', async () => {
      const c = handle.db.collection<Doc>('sort_arrays');
      await c.insertMany([
        { _id: 'a', v: [L('9007199254740993'), D('1')] },
        { _id: 'b', v: D('2') },
        { _id: 'c', v: [L('9007199254740992'), 3] },
      ]);
      expect((await c.find().sort({ v: 1 }).toArray()).map((d) => d._id)).toEqual(['a', 'b', 'c']);
      expect((await c.find().sort({ v: -1 }).toArray()).map((d) => d._id)).toEqual(['a', 'c', 'b']);
    });

    it('reads back an int64 beyond 2^53 as an exact Long and a Decimal128 as Decimal128', async () => {
      const doc = await values().findOne({ _id: 2 });
      expect(doc?.v).toBeInstanceOf(Long);
      expect(doc?.v.toString()).toBe('9007199254740993');
      const decimal = await values().findOne({ _id: 4 });
      expect(decimal?.v).toBeInstanceOf(Decimal128);
      expect(decimal?.v.toString()).toBe('9007199254740992.5');
    });
  });

  describe('indexes', () => {
    it('an equality lookup on an indexed field finds stored int64 and Decimal128 by numeric value', async () => {
      const c = handle.db.collection<Doc>('indexed');
      await c.createIndex({ n: 1 });
      await c.insertMany([
        { _id: 'long5', n: L('5') },
        { _id: 'beyond', n: L('9007199254740993') },
        { _id: 'decimal', n: D('7.50') },
      ]);
      const find = async (filter: Filter<Doc>) => (await c.find(filter).toArray()).map((d) => d._id);
      expect(await find({ n: 5 })).toEqual(['long5']);
      expect(await find({ n: D('5.0') })).toEqual(['long5']);
      expect(await find({ n: { $in: [L('9007199254740993'), 7.5] } })).toEqual(['beyond', 'decimal']);
      expect(await find({ n: TWO_53 })).toEqual([]);
      expect(await find({ n: L('9007199254740993'), _id: 'beyond' })).toEqual(['beyond']);
    });

    it('a unique index treats int32 5, int64 5 and Decimal128 5.0 as the same key', async () => {
      const c = handle.db.collection<Doc>('unique_numbers');
      await c.createIndex({ n: 1 }, { unique: true });
      await c.insertOne({ _id: 1, n: L('5') });
      expect((await serverError(c.insertOne({ _id: 2, n: 5 }))).code).toBe(11000);
      expect((await serverError(c.insertOne({ _id: 3, n: D('5.0') }))).code).toBe(11000);
      await c.insertOne({ _id: 4, n: L('9007199254740993') });
      await c.insertOne({ _id: 5, n: TWO_53 });
      expect(await c.countDocuments()).toBe(3);
    });

    it('_id values of different numeric types are the same _id when equal', async () => {
      const c = handle.db.collection<Doc>('numeric_ids');
      await c.insertOne({ _id: L('42') });
      expect((await serverError(c.insertOne({ _id: 42 }))).code).toBe(11000);
      expect(await c.findOne({ _id: D('42') })).not.toBeNull();
    });
  });
});
