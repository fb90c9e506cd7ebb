// update, upsert and replace as a MongoDB 7.0 standalone performs them.
// Update failures come back as write errors ({ index, code, errmsg }), which carry no codeName.
import { connectDriver, type DriverHandle } from '@parametric/test-harness';
import { type Document, ObjectId } from 'mongodb';
import { type Doc, serverError } from './support';

describe('conformance: update', () => {
  let handle: DriverHandle;

  beforeAll(async () => {
    handle = await connectDriver('update');
  });

  afterAll(async () => {
    await handle.close();
  });

  const coll = (name: string) => handle.db.collection<Doc>(name);

  describe('counts', () => {
    it('updateOne on a match answers { matchedCount: 1, modifiedCount: 1, upsertedCount: 0, upsertedId: null }', async () => {
      const c = coll('upd_counts');
      await c.insertMany([
        { _id: 1, v: 1 },
        { _id: 2, v: 1 },
      ]);
      const result = await c.updateOne({ v: 1 }, { $set: { v: 2 } });
      expect(result).toEqual({
        acknowledged: true,
        matchedCount: 1,
        modifiedCount: 1,
        upsertedCount: 0,
        upsertedId: null,
      });
      expect(await c.countDocuments({ v: 2 })).toBe(1);
    });

    it('updateOne with no match answers matchedCount 0 and modifiedCount 0 and inserts nothing', async () => {
      const c = coll('upd_nomatch');
      await c.insertOne({ _id: 1 });
      const result = await c.updateOne({ _id: 2 }, { $set: { v: 1 } });
      expect(result.matchedCount).toBe(0);
      expect(result.modifiedCount).toBe(0);
      expect(result.upsertedId).toBeNull();
      expect(await c.countDocuments()).toBe(1);
    });

    it('setting a field to the value it already has matches but does not modify: modifiedCount 0', async () => {
      const c = coll('upd_noop');
      await c.insertOne({ _id: 1, v: 'same' });
      const result = await c.updateOne({ _id: 1 }, { $set: { v: 'same' } });
      expect(result.matchedCount).toBe(1);
      expect(result.modifiedCount).toBe(0);
    });

    it('updateMany counts every match but modifies only the documents that change', async () => {
      const c = coll('upd_many');
      await c.insertMany([
        { _id: 1, g: 'x', s: 'old' },
        { _id: 2, g: 'x', s: 'new' },
        { _id: 3, g: 'x', s: 'old' },
        { _id: 4, g: 'y', s: 'old' },
      ]);
      const result = await c.updateMany({ g: 'x' }, { $set: { s: 'new' } });
      expect(result.matchedCount).toBe(3);
      expect(result.modifiedCount).toBe(2);
      expect(await c.findOne({ _id: 4 })).toEqual({ _id: 4, g: 'y', s: 'old' });
    });

    it('a raw update command answers { n, nModified, ok: 1 }', async () => {
      const c = coll('upd_raw');
      await c.insertMany([
        { _id: 1, a: 1 },
        { _id: 2, a: 1 },
      ]);
      const reply = await handle.db.command({
        update: 'upd_raw',
        updates: [{ q: { a: 1 }, u: { $set: { a: 2 } }, multi: true }],
      });
      expect(reply).toEqual({ n: 2, nModified: 2, ok: 1 });
    });

    it('an empty $set operand is accepted as a no-op (matched 1, modified 0)', async () => {
      const c = coll('upd_empty_set');
      await c.insertOne({ _id: 1, a: 1 });
      const result = await c.updateOne({ _id: 1 }, { $set: {} });
      expect(result.matchedCount).toBe(1);
      expect(result.modifiedCount).toBe(0);
      expect(await c.findOne({ _id: 1 })).toEqual({ _id: 1, a: 1 });
    });
  });

  describe('upsert', () => {
    it('upsert with no match inserts the query equality fields (dotted ones as subdocuments) plus $set and $setOnInsert, not range fields', async () => {
      const c = coll('ups_insert');
      const result = await c.updateOne(
        { sku: 'abc', 'dims.w': 5, qty: { $gt: 10 } },
        { $set: { price: 9 }, $setOnInsert: { createdBy: 'upsert' } },
        { upsert: true },
      );
      expect(result.matchedCount).toBe(0);
      expect(result.modifiedCount).toBe(0);
      expect(result.upsertedCount).toBe(1);
      expect(result.upsertedId).toBeInstanceOf(ObjectId);
      const doc = await c.findOne({ sku: 'abc' });
      expect(doc).toEqual({
        _id: result.upsertedId,
        sku: 'abc',
        dims: { w: 5 },
        price: 9,
        createdBy: 'upsert',
      });
      expect(Object.keys(doc as Document)[0]).toBe('_id');
    });

    it('upsert that matches an existing document updates it and ignores $setOnInsert; upsertedId is null', async () => {
      const c = coll('ups_match');
      await c.insertOne({ _id: 1, sku: 'abc', price: 1 });
      const result = await c.updateOne(
        { sku: 'abc' },
        { $set: { price: 2 }, $setOnInsert: { createdBy: 'upsert' } },
        { upsert: true },
      );
      expect(result.matchedCount).toBe(1);
      expect(result.modifiedCount).toBe(1);
      expect(result.upsertedCount).toBe(0);
      expect(result.upsertedId).toBeNull();
      expect(await c.findOne({ _id: 1 })).toEqual({ _id: 1, sku: 'abc', price: 2 });
    });

    it('upsert with _id in the query uses that _id for the new document and returns it as upsertedId', async () => {
      const c = coll('ups_id');
      const result = await c.updateOne({ _id: 'chosen' }, { $inc: { hits: 1 } }, { upsert: true });
      expect(result.upsertedId).toBe('chosen');
      expect(await c.findOne({ _id: 'chosen' })).toEqual({ _id: 'chosen', hits: 1 });
    });

    it('upsert copies equality fields out of a top-level $and', async () => {
      const c = coll('ups_and');
      await c.updateOne({ $and: [{ a: 1 }, { b: 'two' }] }, { $set: { c: true } }, { upsert: true });
      const doc = await c.findOne({}, { projection: { _id: 0 } });
      expect(doc).toEqual({ a: 1, b: 'two', c: true });
    });

    it('a raw upsert answers { n: 1, nModified: 0, upserted: [{ index: 0, _id }], ok: 1 }', async () => {
      const reply = await handle.db.command({
        update: 'ups_raw',
        updates: [{ q: { _id: 'new' }, u: { $set: { a: 1 } }, upsert: true }],
      });
      expect(reply).toEqual({ n: 1, nModified: 0, upserted: [{ index: 0, _id: 'new' }], ok: 1 });
    });

    it('replaceOne with upsert inserts the replacement with the query _id', async () => {
      const c = coll('ups_replace');
      const result = await c.replaceOne({ _id: 5 }, { name: 'five' }, { upsert: true });
      expect(result.upsertedId).toBe(5);
      expect(result.upsertedCount).toBe(1);
      expect(await c.findOne({ _id: 5 })).toEqual({ _id: 5, name: 'five' });
    });
  });

  describe('operators', () => {
    it('$inc creates a missing field, adds to an existing one and accepts negatives', async () => {
      const c = coll('op_inc');
      await c.insertOne({ _id: 1, a: 5 });
      await c.updateOne({ _id: 1 }, { $inc: { a: -2, b: 3, 'n.deep': 1 } });
      expect(await c.findOne({ _id: 1 })).toEqual({ _id: 1, a: 3, b: 3, n: { deep: 1 } });
    });

    it('$inc on a string field fails with code 14 TypeMismatch and leaves the document unchanged', async () => {
      const c = coll('op_inc_bad');
      await c.insertOne({ _id: 1, a: 'text' });
      const error = await serverError(c.updateOne({ _id: 1 }, { $inc: { a: 1 } }));
      expect(error.code).toBe(14);
      expect(await c.findOne({ _id: 1 })).toEqual({ _id: 1, a: 'text' });
    });

    it('$mul, $min and $max apply numerically', async () => {
      const c = coll('op_mul_min_max');
      await c.insertOne({ _id: 1, price: 10, low: 5, high: 5 });
      await c.updateOne({ _id: 1 }, { $mul: { price: 3 }, $min: { low: 2 }, $max: { high: 9 } });
      expect(await c.findOne({ _id: 1 })).toEqual({ _id: 1, price: 30, low: 2, high: 9 });
      const unchanged = await c.updateOne({ _id: 1 }, { $min: { low: 4 }, $max: { high: 1 } });
      expect(unchanged.modifiedCount).toBe(0);
    });

    it('$currentDate sets a BSON date', async () => {
      const c = coll('op_current_date');
      await c.insertOne({ _id: 1 });
      await c.updateOne({ _id: 1 }, { $currentDate: { touched: true } });
      const doc = (await c.findOne({ _id: 1 })) as Document;
      expect(doc.touched).toBeInstanceOf(Date);
    });

    it('$push appends one value; $push with $each, $sort and $slice keeps the sorted head', async () => {
      const c = coll('op_push');
      await c.insertOne({ _id: 1, tags: ['a'], scores: [5, 1] });
      await c.updateOne({ _id: 1 }, { $push: { tags: 'b' } } as Document);
      await c.updateOne({ _id: 1 }, {
        $push: { scores: { $each: [9, 3], $sort: -1, $slice: 3 } },
      } as Document);
      expect(await c.findOne({ _id: 1 })).toEqual({ _id: 1, tags: ['a', 'b'], scores: [9, 5, 3] });
    });

    it('$push onto a missing field creates the array', async () => {
      const c = coll('op_push_new');
      await c.insertOne({ _id: 1 });
      await c.updateOne({ _id: 1 }, { $push: { list: { x: 1 } } } as Document);
      expect(await c.findOne({ _id: 1 })).toEqual({ _id: 1, list: [{ x: 1 }] });
    });

    it('$push onto a non-array field fails with code 2 BadValue', async () => {
      const c = coll('op_push_bad');
      await c.insertOne({ _id: 1, tags: 'not-an-array' });
      const error = await serverError(c.updateOne({ _id: 1 }, { $push: { tags: 'x' } } as Document));
      expect(error.code).toBe(2);
      expect(await c.findOne({ _id: 1 })).toEqual({ _id: 1, tags: 'not-an-array' });
    });

    it('$pull removes every equal value, and every element matching a condition', async () => {
      const c = coll('op_pull');
      await c.insertOne({ _id: 1, tags: ['a', 'b', 'a', 'c'], scores: [1, 6, 3, 8, 9] });
      await c.updateOne({ _id: 1 }, { $pull: { tags: 'a', scores: { $gte: 6 } } } as Document);
      expect(await c.findOne({ _id: 1 })).toEqual({ _id: 1, tags: ['b', 'c'], scores: [1, 3] });
    });

    it('$pull with a document condition removes the matching subdocuments', async () => {
      const c = coll('op_pull_docs');
      await c.insertOne({
        _id: 1,
        items: [
          { sku: 'a', qty: 1 },
          { sku: 'b', qty: 0 },
          { sku: 'c', qty: 0 },
        ],
      });
      await c.updateOne({ _id: 1 }, { $pull: { items: { qty: 0 } } } as Document);
      expect(await c.findOne({ _id: 1 })).toEqual({ _id: 1, items: [{ sku: 'a', qty: 1 }] });
    });

    it('$addToSet of a value already present does not modify (modifiedCount 0); with $each it adds only the new values', async () => {
      const c = coll('op_add_to_set');
      await c.insertOne({ _id: 1, tags: ['a', 'b'] });
      const same = await c.updateOne({ _id: 1 }, { $addToSet: { tags: 'a' } });
      expect(same.matchedCount).toBe(1);
      expect(same.modifiedCount).toBe(0);
      const more = await c.updateOne({ _id: 1 }, { $addToSet: { tags: { $each: ['b', 'c', 'c', 'd'] } } });
      expect(more.modifiedCount).toBe(1);
      expect(await c.findOne({ _id: 1 })).toEqual({ _id: 1, tags: ['a', 'b', 'c', 'd'] });
    });

    it('$pop removes the last (1) or first (-1) element', async () => {
      const c = coll('op_pop');
      await c.insertOne({ _id: 1, a: [1, 2, 3], b: [1, 2, 3] });
      await c.updateOne({ _id: 1 }, { $pop: { a: 1, b: -1 } } as Document);
      expect(await c.findOne({ _id: 1 })).toEqual({ _id: 1, a: [1, 2], b: [2, 3] });
    });

    it('$unset removes the field; unsetting an absent field is a no-op (modifiedCount 0)', async () => {
      const c = coll('op_unset');
      await c.insertOne({ _id: 1, a: 1, b: { c: 2, d: 3 } });
      const first = await c.updateOne({ _id: 1 }, { $unset: { a: '', 'b.c': '' } });
      expect(first.modifiedCount).toBe(1);
      expect(await c.findOne({ _id: 1 })).toEqual({ _id: 1, b: { d: 3 } });
      const again = await c.updateOne({ _id: 1 }, { $unset: { a: '' } });
      expect(again.matchedCount).toBe(1);
      expect(again.modifiedCount).toBe(0);
    });

    it('$rename moves a value to the new name (including into a subdocument)', async () => {
      const c = coll('op_rename');
      await c.insertOne({ _id: 1, old: 'v', keep: 1 });
      await c.updateOne({ _id: 1 }, { $rename: { old: 'nested.fresh' } });
      expect(await c.findOne({ _id: 1 })).toEqual({ _id: 1, keep: 1, nested: { fresh: 'v' } });
    });

    it('$set on a dotted path creates the missing subdocuments', async () => {
      const c = coll('op_set_dotted');
      await c.insertOne({ _id: 1 });
      await c.updateOne({ _id: 1 }, { $set: { 'a.b.c': 1 } });
      expect(await c.findOne({ _id: 1 })).toEqual({ _id: 1, a: { b: { c: 1 } } });
    });

    it('$set through a scalar (a.b when a is 5) fails with code 28 PathNotViable', async () => {
      const c = coll('op_set_through_scalar');
      await c.insertOne({ _id: 1, a: 5 });
      const error = await serverError(c.updateOne({ _id: 1 }, { $set: { 'a.b': 1 } }));
      expect(error.code).toBe(28);
    });

    it('$set on an array index path (arr.1) replaces that element', async () => {
      const c = coll('op_set_index');
      await c.insertOne({ _id: 1, arr: ['a', 'b', 'c'] });
      await c.updateOne({ _id: 1 }, { $set: { 'arr.1': 'B' } });
      expect(await c.findOne({ _id: 1 })).toEqual({ _id: 1, arr: ['a', 'B', 'c'] });
    });
  });

  describe("whole fields replaced beside others changed (the outbox relay's move)", () => {
    it('$set of an array field to [] with $push and $max on others: the new values, the old array gone, a later read unchanged', async () => {
      const c = coll('upd_whole');
      const at = new Date('2026-11-28T12:00:00Z');
      await c.insertOne({
        _id: 1,
        outbox: [{ id: 'a', data: { n: 1 } }],
        pending: true,
        kept: [{ id: 'z' }],
      });
      const result = await c.updateOne({ _id: 1, outbox: { $size: 1 }, 'outbox.id': { $all: ['a'] } }, {
        $set: { outbox: [], pending: false },
        $push: { kept: { $each: [{ id: 'a', at, entry: { id: 'a', data: { n: 1 } } }] } },
        $max: { keptAt: at },
      } as Document);
      expect(result).toMatchObject({ matchedCount: 1, modifiedCount: 1 });
      expect(await c.findOne({ _id: 1 })).toEqual({
        _id: 1,
        outbox: [],
        pending: false,
        kept: [{ id: 'z' }, { id: 'a', at, entry: { id: 'a', data: { n: 1 } } }],
        keptAt: at,
      });
      // The array the stored version held is not the new one: a second $push starts from [].
      await c.updateOne({ _id: 1 }, { $push: { outbox: { id: 'b' } } } as Document);
      expect((await c.findOne({ _id: 1 }))?.outbox).toEqual([{ id: 'b' }]);
    });

    it('$set of a field to the value it holds is no modification', async () => {
      const c = coll('upd_whole_same');
      await c.insertOne({ _id: 1, list: [1, 2], flag: false });
      const result = await c.updateOne({ _id: 1 }, { $set: { list: [1, 2], flag: false } });
      expect(result).toMatchObject({ matchedCount: 1, modifiedCount: 0 });
    });
  });

  describe('array positional updates', () => {
    it('positional $ updates the first array element matched by the query', async () => {
      const c = coll('pos_dollar');
      await c.insertOne({ _id: 1, grades: [80, 85, 90, 85] });
      await c.updateOne({ _id: 1, grades: 85 }, { $set: { 'grades.$': 86 } });
      expect(await c.findOne({ _id: 1 })).toEqual({ _id: 1, grades: [80, 86, 90, 85] });
    });

    it('positional $ resolves against a query that also evaluates an expression ($expr)', async () => {
      const c = coll('pos_dollar_expr');
      await c.insertMany([
        { _id: 1, base: 1, grades: [80, 85] },
        { _id: 2, base: 2, grades: [80, 85] },
      ]);
      await c.updateOne(
        { $expr: { $eq: [{ $add: ['$base', 1] }, 3] }, grades: 85 },
        { $set: { 'grades.$': 86 } },
      );
      expect(await c.find().sort({ _id: 1 }).toArray()).toEqual([
        { _id: 1, base: 1, grades: [80, 85] },
        { _id: 2, base: 2, grades: [80, 86] },
      ]);
    });

    it('positional $ works on a field of the matched subdocument', async () => {
      const c = coll('pos_dollar_docs');
      await c.insertOne({
        _id: 1,
        items: [
          { sku: 'a', qty: 1 },
          { sku: 'b', qty: 1 },
        ],
      });
      await c.updateOne({ _id: 1, 'items.sku': 'b' }, { $inc: { 'items.$.qty': 5 } });
      expect(await c.findOne({ _id: 1 })).toEqual({
        _id: 1,
        items: [
          { sku: 'a', qty: 1 },
          { sku: 'b', qty: 6 },
        ],
      });
    });

    it('arrayFilters with $[elem] updates every element the filter matches', async () => {
      const c = coll('pos_array_filters');
      await c.insertOne({ _id: 1, grades: [95, 80, 102, 85] });
      const result = await c.updateOne(
        { _id: 1 },
        { $set: { 'grades.$[g]': 100 } },
        { arrayFilters: [{ g: { $gte: 90 } }] },
      );
      expect(result.modifiedCount).toBe(1);
      expect(await c.findOne({ _id: 1 })).toEqual({ _id: 1, grades: [100, 80, 100, 85] });
    });

    it('arrayFilters on subdocument fields ($[item].qty with item.sku)', async () => {
      const c = coll('pos_array_filters_docs');
      await c.insertOne({
        _id: 1,
        items: [
          { sku: 'a', qty: 1 },
          { sku: 'b', qty: 1 },
          { sku: 'a', qty: 2 },
        ],
      });
      await c.updateOne(
        { _id: 1 },
        { $inc: { 'items.$[item].qty': 10 } },
        { arrayFilters: [{ 'item.sku': 'a' }] },
      );
      expect(await c.findOne({ _id: 1 })).toEqual({
        _id: 1,
        items: [
          { sku: 'a', qty: 11 },
          { sku: 'b', qty: 1 },
          { sku: 'a', qty: 12 },
        ],
      });
    });

    it('$[] updates every element of the array', async () => {
      const c = coll('pos_all');
      await c.insertOne({ _id: 1, scores: [1, 2, 3] });
      await c.updateOne({ _id: 1 }, { $inc: { 'scores.$[]': 10 } });
      expect(await c.findOne({ _id: 1 })).toEqual({ _id: 1, scores: [11, 12, 13] });
    });
  });

  describe('replace', () => {
    it('replaceOne swaps the whole document but keeps _id (first)', async () => {
      const c = coll('rep_one');
      await c.insertOne({ _id: 1, a: 1, b: 2 });
      const result = await c.replaceOne({ _id: 1 }, { c: 3 });
      expect(result.matchedCount).toBe(1);
      expect(result.modifiedCount).toBe(1);
      const doc = await c.findOne({ _id: 1 });
      expect(doc).toEqual({ _id: 1, c: 3 });
      expect(Object.keys(doc as Document)).toEqual(['_id', 'c']);
    });

    it('replaceOne with a different _id fails with code 66 ImmutableField and leaves the document unchanged', async () => {
      const c = coll('rep_change_id');
      await c.insertOne({ _id: 1, a: 1 });
      const error = await serverError(c.replaceOne({ _id: 1 }, { _id: 2, a: 2 }));
      expect(error.code).toBe(66);
      expect(await c.find().toArray()).toEqual([{ _id: 1, a: 1 }]);
    });
  });

  describe('errors', () => {
    it("$set of a different _id fails with code 66 ImmutableField: \"Performing an update on the path '_id' would modify the immutable field '_id'\"", async () => {
      const c = coll('err_set_id');
      await c.insertOne({ _id: 1, a: 1 });
      const error = await serverError(c.updateOne({ _id: 1 }, { $set: { _id: 2 } }));
      expect(error.code).toBe(66);
      expect(error.message).toBe(
        "Performing an update on the path '_id' would modify the immutable field '_id'",
      );
      expect(await c.find().toArray()).toEqual([{ _id: 1, a: 1 }]);
    });

    it('$set of _id to its current value is allowed (no-op)', async () => {
      const c = coll('err_set_same_id');
      await c.insertOne({ _id: 1, a: 1 });
      const result = await c.updateOne({ _id: 1 }, { $set: { _id: 1, a: 2 } });
      expect(result.modifiedCount).toBe(1);
      expect(await c.findOne({ _id: 1 })).toEqual({ _id: 1, a: 2 });
    });

    it('an unknown update modifier fails with code 9 FailedToParse "Unknown modifier: $foo..."', async () => {
      const c = coll('err_unknown_mod');
      await c.insertOne({ _id: 1, a: 1 });
      const error = await serverError(c.updateOne({ _id: 1 }, { $foo: { a: 2 } } as Document));
      expect(error.code).toBe(9);
      expect(error.message.startsWith('Unknown modifier: $foo')).toBe(true);
      expect(await c.findOne({ _id: 1 })).toEqual({ _id: 1, a: 1 });
    });

    it("two operators on the same path fail with code 40 ConflictingUpdateOperators \"Updating the path 'a' would create a conflict at 'a'\"", async () => {
      const c = coll('err_conflict');
      await c.insertOne({ _id: 1, a: 1 });
      const error = await serverError(c.updateOne({ _id: 1 }, { $set: { a: 5 }, $inc: { a: 1 } }));
      expect(error.code).toBe(40);
      expect(error.message).toBe("Updating the path 'a' would create a conflict at 'a'");
    });
  });

  describe('pipeline-style updates', () => {
    it('an update given as a pipeline ([{ $set }, { $unset }]) computes from the current document', async () => {
      const c = coll('pipe_update');
      await c.insertMany([
        { _id: 1, a: 2, b: 3, tmp: 'x' },
        { _id: 2, a: 10, b: 20, tmp: 'y' },
      ]);
      const result = await c.updateMany({}, [{ $set: { total: { $add: ['$a', '$b'] } } }, { $unset: 'tmp' }]);
      expect(result.matchedCount).toBe(2);
      expect(result.modifiedCount).toBe(2);
      expect(await c.find().sort({ _id: 1 }).toArray()).toEqual([
        { _id: 1, a: 2, b: 3, total: 5 },
        { _id: 2, a: 10, b: 20, total: 30 },
      ]);
    });

    it('a pipeline update can use $cond on the existing values', async () => {
      const c = coll('pipe_update_cond');
      await c.insertMany([
        { _id: 1, score: 40 },
        { _id: 2, score: 75 },
      ]);
      await c.updateMany({}, [{ $set: { pass: { $cond: [{ $gte: ['$score', 50] }, true, false] } } }]);
      expect(await c.find().sort({ _id: 1 }).toArray()).toEqual([
        { _id: 1, score: 40, pass: false },
        { _id: 2, score: 75, pass: true },
      ]);
    });
  });
});
