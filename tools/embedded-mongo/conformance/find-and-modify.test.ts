// findOneAndUpdate / findOneAndReplace / findOneAndDelete and the raw findAndModify reply shape
// as a MongoDB 7.0 standalone answers them.
import { connectDriver, type DriverHandle } from '@parametric/test-harness';
import { type Document, ObjectId } from 'mongodb';
import { type Doc, serverError } from './support';

describe('conformance: findAndModify', () => {
  let handle: DriverHandle;

  beforeAll(async () => {
    handle = await connectDriver('fam');
  });

  afterAll(async () => {
    await handle.close();
  });

  const coll = (name: string) => handle.db.collection<Doc>(name);

  describe('findOneAndUpdate', () => {
    it('returns the document as it was before the update by default', async () => {
      const c = coll('fou_before');
      await c.insertOne({ _id: 1, v: 1 });
      const before = await c.findOneAndUpdate({ _id: 1 }, { $inc: { v: 1 } });
      expect(before).toEqual({ _id: 1, v: 1 });
      expect(await c.findOne({ _id: 1 })).toEqual({ _id: 1, v: 2 });
    });

    it("returnDocument:'after' returns the updated document", async () => {
      const c = coll('fou_after');
      await c.insertOne({ _id: 1, v: 1 });
      const after = await c.findOneAndUpdate({ _id: 1 }, { $inc: { v: 1 } }, { returnDocument: 'after' });
      expect(after).toEqual({ _id: 1, v: 2 });
    });

    it('with no match returns null and inserts nothing', async () => {
      const c = coll('fou_nomatch');
      await c.insertOne({ _id: 1 });
      expect(await c.findOneAndUpdate({ _id: 2 }, { $set: { v: 1 } })).toBeNull();
      expect(await c.countDocuments()).toBe(1);
    });

    it("upsert with returnDocument:'after' inserts and returns the new document (query equality fields included)", async () => {
      const c = coll('fou_upsert_after');
      const doc = await c.findOneAndUpdate(
        { key: 'k1' },
        { $set: { v: 1 }, $setOnInsert: { created: true } },
        { upsert: true, returnDocument: 'after' },
      );
      expect(doc).not.toBeNull();
      expect((doc as Document)._id).toBeInstanceOf(ObjectId);
      expect(doc).toEqual({ _id: (doc as Document)._id, key: 'k1', v: 1, created: true });
      expect(await c.countDocuments()).toBe(1);
    });

    it("upsert with returnDocument:'before' returns null yet inserts the document", async () => {
      const c = coll('fou_upsert_before');
      const doc = await c.findOneAndUpdate({ _id: 'x' }, { $set: { v: 1 } }, { upsert: true });
      expect(doc).toBeNull();
      expect(await c.findOne({ _id: 'x' })).toEqual({ _id: 'x', v: 1 });
    });

    it('sort decides which of several matching documents is modified', async () => {
      const c = coll('fou_sort');
      await c.insertMany([
        { _id: 1, status: 'queued', priority: 2 },
        { _id: 2, status: 'queued', priority: 9 },
        { _id: 3, status: 'queued', priority: 5 },
      ]);
      const high = await c.findOneAndUpdate(
        { status: 'queued' },
        { $set: { status: 'running' } },
        { sort: { priority: -1 }, returnDocument: 'after' },
      );
      expect(high).toEqual({ _id: 2, status: 'running', priority: 9 });
      const low = await c.findOneAndUpdate(
        { status: 'queued' },
        { $set: { status: 'running' } },
        { sort: { priority: 1 }, returnDocument: 'after' },
      );
      expect(low).toEqual({ _id: 1, status: 'running', priority: 2 });
      expect(await c.countDocuments({ status: 'queued' })).toBe(1);
    });

    it('projection limits the fields of the returned document', async () => {
      const c = coll('fou_projection');
      await c.insertOne({ _id: 1, a: 1, b: 2, c: 3 });
      const doc = await c.findOneAndUpdate(
        { _id: 1 },
        { $set: { a: 10 } },
        { projection: { a: 1, _id: 0 }, returnDocument: 'after' },
      );
      expect(doc).toEqual({ a: 10 });
    });

    it('arrayFilters apply as in updateOne', async () => {
      const c = coll('fou_array_filters');
      await c.insertOne({ _id: 1, xs: [1, 5, 10] });
      const doc = await c.findOneAndUpdate(
        { _id: 1 },
        { $set: { 'xs.$[x]': 0 } },
        { arrayFilters: [{ x: { $gt: 3 } }], returnDocument: 'after' },
      );
      expect(doc).toEqual({ _id: 1, xs: [1, 0, 0] });
    });

    it('includeResultMetadata:true exposes { value, ok: 1, lastErrorObject: { n: 1, updatedExisting: true } }', async () => {
      const c = coll('fou_metadata');
      await c.insertOne({ _id: 1, v: 1 });
      const result = await c.findOneAndUpdate(
        { _id: 1 },
        { $set: { v: 2 } },
        { includeResultMetadata: true, returnDocument: 'after' },
      );
      expect(result.ok).toBe(1);
      expect(result.value).toEqual({ _id: 1, v: 2 });
      expect(result.lastErrorObject).toEqual({ n: 1, updatedExisting: true });
    });

    it('changing _id fails with code 66 ImmutableField and the document stays as it was', async () => {
      const c = coll('fou_immutable');
      await c.insertOne({ _id: 1, v: 1 });
      const error = await serverError(c.findOneAndUpdate({ _id: 1 }, { $set: { _id: 2 } }));
      expect(error.code).toBe(66);
      expect(error.codeName).toBe('ImmutableField');
      expect(await c.find().toArray()).toEqual([{ _id: 1, v: 1 }]);
    });
  });

  describe('findOneAndReplace', () => {
    it('replaces the document keeping _id; returns the old one by default and the new one with returnDocument:after', async () => {
      const c = coll('for_basic');
      await c.insertOne({ _id: 1, a: 1, b: 1 });
      const before = await c.findOneAndReplace({ _id: 1 }, { z: 26 });
      expect(before).toEqual({ _id: 1, a: 1, b: 1 });
      const after = await c.findOneAndReplace({ _id: 1 }, { y: 25 }, { returnDocument: 'after' });
      expect(after).toEqual({ _id: 1, y: 25 });
      expect(Object.keys(after as Document)).toEqual(['_id', 'y']);
    });

    it('upsert inserts the replacement when nothing matches', async () => {
      const c = coll('for_upsert');
      const doc = await c.findOneAndReplace(
        { _id: 9 },
        { name: 'nine' },
        { upsert: true, returnDocument: 'after' },
      );
      expect(doc).toEqual({ _id: 9, name: 'nine' });
    });

    it('sort picks which matching document is replaced', async () => {
      const c = coll('for_sort');
      await c.insertMany([
        { _id: 1, g: 'a', n: 1 },
        { _id: 2, g: 'a', n: 2 },
      ]);
      const replaced = await c.findOneAndReplace({ g: 'a' }, { g: 'b' }, { sort: { n: -1 } });
      expect(replaced).toEqual({ _id: 2, g: 'a', n: 2 });
      expect(await c.findOne({ _id: 2 })).toEqual({ _id: 2, g: 'b' });
    });
  });

  describe('findOneAndDelete', () => {
    it('deletes and returns the document chosen by sort', async () => {
      const c = coll('fod_sort');
      await c.insertMany([
        { _id: 1, at: 3 },
        { _id: 2, at: 1 },
        { _id: 3, at: 2 },
      ]);
      const oldest = await c.findOneAndDelete({}, { sort: { at: 1 } });
      expect(oldest).toEqual({ _id: 2, at: 1 });
      expect((await c.find().sort({ _id: 1 }).toArray()).map((d) => d._id)).toEqual([1, 3]);
    });

    it('returns null when nothing matches', async () => {
      const c = coll('fod_none');
      await c.insertOne({ _id: 1 });
      expect(await c.findOneAndDelete({ _id: 2 })).toBeNull();
      expect(await c.countDocuments()).toBe(1);
    });

    it('projection limits the returned fields of the deleted document', async () => {
      const c = coll('fod_projection');
      await c.insertOne({ _id: 1, a: 1, secret: 'x' });
      expect(await c.findOneAndDelete({ _id: 1 }, { projection: { secret: 0 } })).toEqual({ _id: 1, a: 1 });
    });
  });

  describe('raw findAndModify reply', () => {
    it('an update of an existing document answers { lastErrorObject: { n: 1, updatedExisting: true }, value, ok: 1 }', async () => {
      await coll('raw_fam_update').insertOne({ _id: 1, v: 1 });
      const reply = await handle.db.command({
        findAndModify: 'raw_fam_update',
        query: { _id: 1 },
        update: { $set: { v: 2 } },
        new: true,
      });
      expect(reply).toEqual({
        lastErrorObject: { n: 1, updatedExisting: true },
        value: { _id: 1, v: 2 },
        ok: 1,
      });
    });

    it('without new:true the value is the pre-image', async () => {
      await coll('raw_fam_pre').insertOne({ _id: 1, v: 1 });
      const reply = await handle.db.command({
        findAndModify: 'raw_fam_pre',
        query: { _id: 1 },
        update: { $set: { v: 2 } },
      });
      expect(reply.value).toEqual({ _id: 1, v: 1 });
    });

    it('an upsert answers lastErrorObject { n: 1, updatedExisting: false, upserted: <_id> } and value null without new', async () => {
      const reply = await handle.db.command({
        findAndModify: 'raw_fam_upsert',
        query: { _id: 'u1' },
        update: { $set: { v: 1 } },
        upsert: true,
      });
      expect(reply).toEqual({
        lastErrorObject: { n: 1, updatedExisting: false, upserted: 'u1' },
        value: null,
        ok: 1,
      });
    });

    it('an upsert with new:true returns the inserted document as value', async () => {
      const reply = await handle.db.command({
        findAndModify: 'raw_fam_upsert_new',
        query: { _id: 'u2' },
        update: { $set: { v: 1 } },
        upsert: true,
        new: true,
      });
      expect(reply.lastErrorObject).toEqual({ n: 1, updatedExisting: false, upserted: 'u2' });
      expect(reply.value).toEqual({ _id: 'u2', v: 1 });
    });

    it('an update with no match answers { lastErrorObject: { n: 0, updatedExisting: false }, value: null, ok: 1 }', async () => {
      await coll('raw_fam_nomatch').insertOne({ _id: 1 });
      const reply = await handle.db.command({
        findAndModify: 'raw_fam_nomatch',
        query: { _id: 2 },
        update: { $set: { v: 1 } },
      });
      expect(reply).toEqual({ lastErrorObject: { n: 0, updatedExisting: false }, value: null, ok: 1 });
    });

    it('remove:true answers { lastErrorObject: { n: 1 }, value: <removed doc>, ok: 1 }', async () => {
      await coll('raw_fam_remove').insertOne({ _id: 1, v: 'gone' });
      const reply = await handle.db.command({
        findAndModify: 'raw_fam_remove',
        query: { _id: 1 },
        remove: true,
      });
      expect(reply).toEqual({ lastErrorObject: { n: 1 }, value: { _id: 1, v: 'gone' }, ok: 1 });
      expect(await coll('raw_fam_remove').countDocuments()).toBe(0);
    });

    it('remove:true with no match answers { lastErrorObject: { n: 0 }, value: null, ok: 1 }', async () => {
      await coll('raw_fam_remove_none').insertOne({ _id: 1 });
      const reply = await handle.db.command({
        findAndModify: 'raw_fam_remove_none',
        query: { _id: 2 },
        remove: true,
      });
      expect(reply).toEqual({ lastErrorObject: { n: 0 }, value: null, ok: 1 });
    });
  });
});
