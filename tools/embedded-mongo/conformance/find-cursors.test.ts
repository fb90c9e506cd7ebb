// find: filters, sort, skip, limit, projection and the cursor protocol (int64 ids, getMore, killCursors)
// as a MongoDB 7.0 standalone answers them.
import { connectDriver, type DriverHandle } from '@parametric/test-harness';
import { type Document, Long } from 'mongodb';
import { type Doc, serverError } from './support';

// promoteLongs:false keeps every int64 as a bson Long, so the wire type of cursor ids is visible.
const RAW = { promoteLongs: false } as const;

describe('conformance: find and cursors', () => {
  let handle: DriverHandle;

  beforeAll(async () => {
    handle = await connectDriver('find');
    await handle.db.collection<Doc>('people').insertMany([
      { _id: 1, name: 'ann', age: 31, city: 'Oslo', tags: ['a', 'b'], addr: { zip: '0150', country: 'NO' } },
      { _id: 2, name: 'bob', age: 25, city: 'Bergen', tags: ['b'], addr: { zip: '5003', country: 'NO' } },
      { _id: 3, name: 'Cleo', age: 42, city: 'Oslo', tags: [], addr: { zip: '10115', country: 'DE' } },
      { _id: 4, name: 'dan', age: 25, city: 'Trondheim', tags: ['c', 'a'] },
      { _id: 5, name: 'eve', city: 'Oslo', nick: null, tags: ['a'] },
      {
        _id: 6,
        name: 'fay',
        age: 58,
        city: 'Bergen',
        scores: [
          { k: 'm', v: 90 },
          { k: 'e', v: 60 },
        ],
      },
    ]);
  });

  afterAll(async () => {
    await handle.close();
  });

  const people = () => handle.db.collection<Doc>('people');
  const ids = async (filter: Document, sort: Document = { _id: 1 }) =>
    (await people().find(filter).sort(sort).toArray()).map((d) => d._id as number);

  describe('filters', () => {
    it('equality and $gt/$gte/$lt/$ne filters (missing fields never match $gt; $ne matches documents missing the field)', async () => {
      expect(await ids({ city: 'Oslo' })).toEqual([1, 3, 5]);
      expect(await ids({ age: { $gt: 30 } })).toEqual([1, 3, 6]);
      expect(await ids({ age: { $gte: 25, $lt: 32 } })).toEqual([1, 2, 4]);
      expect(await ids({ age: { $ne: 25 } })).toEqual([1, 3, 5, 6]);
    });

    it('$in and $nin ($nin also matches documents missing the field)', async () => {
      expect(await ids({ city: { $in: ['Bergen', 'Trondheim'] } })).toEqual([2, 4, 6]);
      expect(await ids({ age: { $nin: [25, 31] } })).toEqual([3, 5, 6]);
    });

    it('$regex with and without the i option, and a BSON regex literal', async () => {
      expect(await ids({ name: { $regex: '^c' } })).toEqual([]);
      expect(await ids({ name: { $regex: '^c', $options: 'i' } })).toEqual([3]);
      expect(await ids({ name: /e$/ })).toEqual([5]);
    });

    it('$exists true/false, and { field: null } matching both null and missing', async () => {
      expect(await ids({ age: { $exists: false } })).toEqual([5]);
      expect(await ids({ addr: { $exists: true } })).toEqual([1, 2, 3]);
      expect(await ids({ nick: null })).toEqual([1, 2, 3, 4, 5, 6]);
      expect(await ids({ nick: { $exists: true } })).toEqual([5]);
    });

    it('dotted paths reach into subdocuments', async () => {
      expect(await ids({ 'addr.country': 'NO' })).toEqual([1, 2]);
      expect(await ids({ 'addr.zip': { $gt: '2' } })).toEqual([2]);
      expect(await ids({ 'addr.zip': { $gt: '1' } })).toEqual([2, 3]);
    });

    it('a scalar equality on an array field matches when the array contains the value; $all and $size', async () => {
      expect(await ids({ tags: 'a' })).toEqual([1, 4, 5]);
      expect(await ids({ tags: { $all: ['a', 'b'] } })).toEqual([1]);
      expect(await ids({ tags: { $size: 0 } })).toEqual([3]);
      expect(await ids({ tags: ['b'] })).toEqual([2]);
    });

    it('$elemMatch requires one array element to satisfy every condition', async () => {
      expect(await ids({ scores: { $elemMatch: { k: 'e', v: { $gte: 60 } } } })).toEqual([6]);
      expect(await ids({ scores: { $elemMatch: { k: 'e', v: { $gte: 70 } } } })).toEqual([]);
      // Without $elemMatch the conditions may be met by different elements.
      expect(await ids({ 'scores.k': 'e', 'scores.v': { $gte: 70 } })).toEqual([6]);
    });

    it('$or, $and, $nor and $not', async () => {
      expect(await ids({ $or: [{ age: 25 }, { name: 'eve' }] })).toEqual([2, 4, 5]);
      expect(await ids({ $and: [{ city: 'Oslo' }, { age: { $exists: true } }] })).toEqual([1, 3]);
      expect(await ids({ $nor: [{ city: 'Oslo' }, { city: 'Bergen' }] })).toEqual([4]);
      expect(await ids({ age: { $not: { $gt: 30 } } })).toEqual([2, 4, 5]);
    });

    it('$type and $mod', async () => {
      expect(await ids({ nick: { $type: 'null' } })).toEqual([5]);
      expect(await ids({ age: { $type: 'number' } })).toEqual([1, 2, 3, 4, 6]);
      expect(await ids({ age: { $mod: [5, 0] } })).toEqual([2, 4]);
    });

    it('$expr compares two fields of the same document', async () => {
      const c = handle.db.collection<Doc>('find_expr');
      await c.insertMany([
        { _id: 1, spent: 10, budget: 20 },
        { _id: 2, spent: 30, budget: 20 },
      ]);
      expect((await c.find({ $expr: { $gt: ['$spent', '$budget'] } }).toArray()).map((d) => d._id)).toEqual([
        2,
      ]);
    });
  });

  describe('sort, skip, limit', () => {
    it('sorts ascending and descending; a missing field sorts before any number ascending', async () => {
      expect(await ids({}, { age: 1, _id: 1 })).toEqual([5, 2, 4, 1, 3, 6]);
      expect(await ids({}, { age: -1, _id: 1 })).toEqual([6, 3, 1, 2, 4, 5]);
    });

    it('compound sort orders by the first key then the second', async () => {
      expect(await ids({}, { city: 1, age: -1 })).toEqual([6, 2, 3, 1, 5, 4]);
    });

    it('string sort is binary (uppercase before lowercase) without a collation', async () => {
      const names = (await people().find().sort({ name: 1 }).toArray()).map((d) => d.name);
      expect(names).toEqual(['Cleo', 'ann', 'bob', 'dan', 'eve', 'fay']);
    });

    it('skip and limit apply after the sort', async () => {
      const page = await people().find().sort({ _id: -1 }).skip(1).limit(2).toArray();
      expect(page.map((d) => d._id)).toEqual([5, 4]);
    });

    it('skip past the end returns no documents', async () => {
      expect(await people().find().skip(100).toArray()).toEqual([]);
    });
  });

  describe('projection', () => {
    it('an inclusion projection returns the listed fields plus _id', async () => {
      const doc = await people().findOne({ _id: 1 }, { projection: { name: 1, 'addr.zip': 1 } });
      expect(doc).toEqual({ _id: 1, name: 'ann', addr: { zip: '0150' } });
    });

    it('an inclusion projection with _id:0 leaves _id out', async () => {
      const doc = await people().findOne({ _id: 2 }, { projection: { _id: 0, name: 1, age: 1 } });
      expect(doc).toEqual({ name: 'bob', age: 25 });
    });

    it('an exclusion projection returns everything else', async () => {
      const doc = await people().findOne({ _id: 2 }, { projection: { tags: 0, addr: 0, city: 0 } });
      expect(doc).toEqual({ _id: 2, name: 'bob', age: 25 });
    });

    it('$slice and $elemMatch projections on arrays', async () => {
      const sliced = await people().findOne({ _id: 4 }, { projection: { tags: { $slice: 1 } } });
      expect(sliced).toEqual({ _id: 4, name: 'dan', age: 25, city: 'Trondheim', tags: ['c'] });
      const matched = await people().findOne(
        { _id: 6 },
        { projection: { _id: 0, scores: { $elemMatch: { k: 'e' } } } },
      );
      expect(matched).toEqual({ scores: [{ k: 'e', v: 60 }] });
    });

    it('mixing inclusion and exclusion fails with code 31254 "Cannot do exclusion on field age in inclusion projection"', async () => {
      const error = await serverError(
        people()
          .find({}, { projection: { name: 1, age: 0 } })
          .toArray(),
      );
      expect(error.code).toBe(31254);
      expect(error.message).toBe('Cannot do exclusion on field age in inclusion projection');
    });
  });

  describe('cursors', () => {
    beforeAll(async () => {
      const docs = Array.from({ length: 250 }, (_, i) => ({ _id: i, n: i, pad: 'x'.repeat(20) }));
      await handle.db.collection<Doc>('many').insertMany(docs);
    });

    it('a driver cursor with batchSize 20 returns all 250 documents once, in sort order', async () => {
      const docs = await handle.db.collection<Doc>('many').find().sort({ n: 1 }).batchSize(20).toArray();
      expect(docs).toHaveLength(250);
      expect(docs.map((d) => d.n)).toEqual(Array.from({ length: 250 }, (_, i) => i));
    });

    it('raw find batchSize 20 + getMore loop: full batches of 20 with a non-zero Long id, then a last batch of 10 with id 0', async () => {
      const first = await handle.db.command({ find: 'many', sort: { n: 1 }, batchSize: 20 }, RAW);
      const ns = `${handle.db.databaseName}.many`;
      expect(first.ok).toBe(1);
      expect(first.cursor.ns).toBe(ns);
      expect(first.cursor.firstBatch).toHaveLength(20);
      let id = first.cursor.id as Long;
      expect(id).toBeInstanceOf(Long);
      expect(id.isZero()).toBe(false);

      const seen: number[] = (first.cursor.firstBatch as Document[]).map((d) => d.n as number);
      const batchSizes: number[] = [];
      let rounds = 0;
      while (!id.isZero()) {
        rounds += 1;
        if (rounds > 50) throw new Error('cursor never exhausted');
        const more = await handle.db.command({ getMore: id, collection: 'many', batchSize: 20 }, RAW);
        expect(more.ok).toBe(1);
        expect(more.cursor.ns).toBe(ns);
        const batch = more.cursor.nextBatch as Document[];
        batchSizes.push(batch.length);
        seen.push(...batch.map((d) => d.n as number));
        expect(more.cursor.id).toBeInstanceOf(Long);
        const nextId = more.cursor.id as Long;
        if (!nextId.isZero()) expect(nextId.equals(id)).toBe(true);
        id = nextId;
      }
      expect(batchSizes).toEqual([...Array.from({ length: 11 }, () => 20), 10]);
      expect(seen).toEqual(Array.from({ length: 250 }, (_, i) => i));
    });

    it('a find that fits in its first batch answers cursor id 0 (an int64 zero)', async () => {
      const reply = await handle.db.command({ find: 'many', filter: { n: { $lt: 5 } } }, RAW);
      expect(reply.cursor.firstBatch).toHaveLength(5);
      expect(reply.cursor.id).toBeInstanceOf(Long);
      expect((reply.cursor.id as Long).isZero()).toBe(true);
    });

    it('batchSize 0 answers an empty firstBatch and an open cursor', async () => {
      const reply = await handle.db.command({ find: 'many', batchSize: 0 }, RAW);
      expect(reply.cursor.firstBatch).toEqual([]);
      const id = reply.cursor.id as Long;
      expect(id.isZero()).toBe(false);
      await handle.db.command({ killCursors: 'many', cursors: [id] }, RAW);
    });

    it('limit 5 with batchSize 2 returns 2, 2, then 1 with the cursor closed', async () => {
      const first = await handle.db.command({ find: 'many', sort: { n: 1 }, limit: 5, batchSize: 2 }, RAW);
      expect(first.cursor.firstBatch).toHaveLength(2);
      const id = first.cursor.id as Long;
      const second = await handle.db.command({ getMore: id, collection: 'many', batchSize: 2 }, RAW);
      expect(second.cursor.nextBatch).toHaveLength(2);
      const third = await handle.db.command({ getMore: id, collection: 'many', batchSize: 2 }, RAW);
      expect((third.cursor.nextBatch as Document[]).map((d) => d.n)).toEqual([4]);
      expect((third.cursor.id as Long).isZero()).toBe(true);
    });

    it('singleBatch:true closes the cursor after the first batch (id 0)', async () => {
      const reply = await handle.db.command({ find: 'many', batchSize: 3, singleBatch: true }, RAW);
      expect(reply.cursor.firstBatch).toHaveLength(3);
      expect((reply.cursor.id as Long).isZero()).toBe(true);
    });

    it('killCursors answers cursorsKilled:[id] and empty cursorsNotFound/cursorsAlive/cursorsUnknown', async () => {
      const first = await handle.db.command({ find: 'many', batchSize: 2 }, RAW);
      const id = first.cursor.id as Long;
      expect(id).toBeInstanceOf(Long);
      expect(id.isZero()).toBe(false);
      const reply = await handle.db.command({ killCursors: 'many', cursors: [id] }, RAW);
      expect(reply.ok).toBe(1);
      expect((reply.cursorsKilled as Long[]).map((k) => k.toString())).toEqual([id.toString()]);
      expect(reply.cursorsNotFound).toEqual([]);
      expect(reply.cursorsAlive).toEqual([]);
      expect(reply.cursorsUnknown).toEqual([]);
    });

    it('killCursors of an unknown id lists it in cursorsNotFound', async () => {
      const bogus = Long.fromString('123456789012345');
      const reply = await handle.db.command({ killCursors: 'many', cursors: [bogus] }, RAW);
      expect(reply.ok).toBe(1);
      expect(reply.cursorsKilled).toEqual([]);
      expect((reply.cursorsNotFound as Long[]).map((k) => k.toString())).toEqual([bogus.toString()]);
    });

    it('getMore on a killed cursor fails with code 43 CursorNotFound "cursor id <id> not found"', async () => {
      const first = await handle.db.command({ find: 'many', batchSize: 2 }, RAW);
      const id = first.cursor.id as Long;
      await handle.db.command({ killCursors: 'many', cursors: [id] }, RAW);
      const error = await serverError(handle.db.command({ getMore: id, collection: 'many' }, RAW));
      expect(error.code).toBe(43);
      expect(error.codeName).toBe('CursorNotFound');
      expect(error.message).toContain(`cursor id ${id.toString()} not found`);
    });

    it('getMore on an exhausted cursor fails with code 43 CursorNotFound', async () => {
      const first = await handle.db.command({ find: 'many', sort: { n: 1 }, batchSize: 240 }, RAW);
      const id = first.cursor.id as Long;
      const rest = await handle.db.command({ getMore: id, collection: 'many' }, RAW);
      expect(rest.cursor.nextBatch).toHaveLength(10);
      expect((rest.cursor.id as Long).isZero()).toBe(true);
      const error = await serverError(handle.db.command({ getMore: id, collection: 'many' }, RAW));
      expect(error.code).toBe(43);
    });

    it('an aggregate cursor honours cursor.batchSize and continues with getMore', async () => {
      const first = await handle.db.command(
        {
          aggregate: 'many',
          pipeline: [{ $match: { n: { $lt: 7 } } }, { $sort: { n: 1 } }],
          cursor: { batchSize: 3 },
        },
        RAW,
      );
      expect((first.cursor.firstBatch as Document[]).map((d) => d.n)).toEqual([0, 1, 2]);
      const id = first.cursor.id as Long;
      expect(id).toBeInstanceOf(Long);
      expect(id.isZero()).toBe(false);
      const rest = await handle.db.command({ getMore: id, collection: 'many' }, RAW);
      expect((rest.cursor.nextBatch as Document[]).map((d) => d.n)).toEqual([3, 4, 5, 6]);
      expect((rest.cursor.id as Long).isZero()).toBe(true);
    });

    it('find on a collection that does not exist answers an empty firstBatch with id 0 (no error)', async () => {
      const reply = await handle.db.command({ find: 'does_not_exist' }, RAW);
      expect(reply.ok).toBe(1);
      expect(reply.cursor.firstBatch).toEqual([]);
      expect((reply.cursor.id as Long).isZero()).toBe(true);
    });
  });
});
