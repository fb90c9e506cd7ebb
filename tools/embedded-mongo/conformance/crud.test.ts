// insert and delete as a MongoDB 7.0 standalone performs them.
import { connectDriver, type DriverHandle } from '@parametric/test-harness';
import { Binary, Decimal128, type Document, Int32, Long, MongoBulkWriteError, ObjectId } from 'mongodb';
import { type Doc, escapeRegExp, serverError, writeErrorsOf } from './support';

describe('conformance: insert and delete', () => {
  let handle: DriverHandle;

  beforeAll(async () => {
    handle = await connectDriver('crud');
  });

  afterAll(async () => {
    await handle.close();
  });

  const coll = (name: string) => handle.db.collection<Doc>(name);
  const ns = (name: string) => `${handle.db.databaseName}.${name}`;

  describe('insert', () => {
    it('insertOne without _id returns an ObjectId insertedId and the document reads back with _id as its first field', async () => {
      const c = coll('ins_gen_id');
      const result = await c.insertOne({ name: 'a', n: 1 });
      expect(result.acknowledged).toBe(true);
      expect(result.insertedId).toBeInstanceOf(ObjectId);
      const docs = await c.find().toArray();
      expect(docs).toHaveLength(1);
      const doc = docs[0] as Document;
      expect(Object.keys(doc)).toEqual(['_id', 'name', 'n']);
      expect((doc._id as ObjectId).equals(result.insertedId as ObjectId)).toBe(true);
    });

    it('insertOne with a caller-chosen string _id keeps it and returns it as insertedId', async () => {
      const c = coll('ins_str_id');
      const result = await c.insertOne({ _id: 'user-1', v: true });
      expect(result.insertedId).toBe('user-1');
      expect(await c.findOne({ _id: 'user-1' })).toEqual({ _id: 'user-1', v: true });
    });

    it('a raw insert whose document has _id last stores _id as the first field; the reply is { n: 1, ok: 1 }', async () => {
      const reply = await handle.db.command({
        insert: 'ins_raw_order',
        documents: [{ a: 1, b: { c: 2 }, _id: 7 }],
      });
      expect(reply).toEqual({ n: 1, ok: 1 });
      const doc = await coll('ins_raw_order').findOne({ _id: 7 });
      expect(doc).not.toBeNull();
      expect(Object.keys(doc as Document)).toEqual(['_id', 'a', 'b']);
      expect(doc).toEqual({ _id: 7, a: 1, b: { c: 2 } });
    });

    it('a raw insert without _id gets a server-generated ObjectId placed first', async () => {
      const reply = await handle.db.command({ insert: 'ins_raw_noid', documents: [{ x: 1, y: 2 }] });
      expect(reply.n).toBe(1);
      const doc = await coll('ins_raw_noid').findOne({ x: 1 });
      expect(doc).not.toBeNull();
      expect(Object.keys(doc as Document)).toEqual(['_id', 'x', 'y']);
      expect((doc as Document)._id).toBeInstanceOf(ObjectId);
    });

    it('insertMany inserts every document and reports insertedCount and insertedIds by position', async () => {
      const c = coll('ins_many');
      const result = await c.insertMany([{ _id: 'a' }, { _id: 'b' }, { _id: 'c' }]);
      expect(result.insertedCount).toBe(3);
      expect(result.insertedIds).toEqual({ 0: 'a', 1: 'b', 2: 'c' });
      expect(await c.countDocuments()).toBe(3);
    });

    it('ordered insertMany stops at the first duplicate: insertedCount 2, one writeError at index 2 with code 11000, later docs not written', async () => {
      const c = coll('ins_ordered');
      const error = await serverError(
        c.insertMany([{ _id: 1 }, { _id: 2 }, { _id: 1 }, { _id: 3 }], { ordered: true }),
      );
      expect(error).toBeInstanceOf(MongoBulkWriteError);
      expect((error as MongoBulkWriteError).result.insertedCount).toBe(2);
      const writeErrors = writeErrorsOf(error);
      expect(writeErrors.map((w) => [w.index, w.code])).toEqual([[2, 11000]]);
      expect(await c.find().sort({ _id: 1 }).toArray()).toEqual([{ _id: 1 }, { _id: 2 }]);
    });

    it('unordered insertMany continues past duplicates: insertedCount 3, writeErrors at indexes 1 and 3, the rest written', async () => {
      const c = coll('ins_unordered');
      await c.insertOne({ _id: 'x' });
      const error = await serverError(
        c.insertMany([{ _id: 'a' }, { _id: 'x' }, { _id: 'b' }, { _id: 'a' }, { _id: 'c' }], {
          ordered: false,
        }),
      );
      expect(error).toBeInstanceOf(MongoBulkWriteError);
      expect((error as MongoBulkWriteError).result.insertedCount).toBe(3);
      const writeErrors = writeErrorsOf(error);
      expect(writeErrors.map((w) => [w.index, w.code])).toEqual([
        [1, 11000],
        [3, 11000],
      ]);
      const ids = (await c.find().toArray()).map((d) => d._id as string).sort();
      expect(ids).toEqual(['a', 'b', 'c', 'x']);
    });

    it('a raw ordered insert with a duplicate answers ok:1, n and writeErrors[{index, code 11000, errmsg, keyPattern, keyValue}]', async () => {
      const reply = await handle.db.command({
        insert: 'ins_raw_dup',
        documents: [{ _id: 1 }, { _id: 1 }, { _id: 2 }],
      });
      expect(reply.ok).toBe(1);
      expect(reply.n).toBe(1);
      expect(reply.writeErrors).toHaveLength(1);
      const writeError = (reply.writeErrors as Document[])[0] as Document;
      expect(writeError.index).toBe(1);
      expect(writeError.code).toBe(11000);
      expect(writeError.errmsg).toBe(
        `E11000 duplicate key error collection: ${ns('ins_raw_dup')} index: _id_ dup key: { _id: 1 }`,
      );
      expect(writeError.keyPattern).toEqual({ _id: 1 });
      expect(writeError.keyValue).toEqual({ _id: 1 });
      expect(await coll('ins_raw_dup').countDocuments()).toBe(1);
    });

    it('insertOne with an existing _id fails with code 11000 on index _id_ and leaves the stored document alone', async () => {
      const c = coll('ins_dup_one');
      await c.insertOne({ _id: 'k', v: 1 });
      const error = await serverError(c.insertOne({ _id: 'k', v: 2 }));
      expect(error.code).toBe(11000);
      expect(error.message).toBe(
        `E11000 duplicate key error collection: ${ns('ins_dup_one')} index: _id_ dup key: { _id: "k" }`,
      );
      expect(error.keyPattern).toEqual({ _id: 1 });
      expect(error.keyValue).toEqual({ _id: 'k' });
      expect(await c.find().toArray()).toEqual([{ _id: 'k', v: 1 }]);
    });

    it('an ObjectId duplicate names the ObjectId in the dup key text', async () => {
      const c = coll('ins_dup_oid');
      const id = new ObjectId();
      await c.insertOne({ _id: id });
      const error = await serverError(c.insertOne({ _id: id }));
      expect(error.code).toBe(11000);
      expect(error.message).toMatch(
        new RegExp(
          `^E11000 duplicate key error collection: ${escapeRegExp(ns('ins_dup_oid'))} index: _id_ dup key: \\{ _id: ObjectId\\('${id.toHexString()}'\\) \\}$`,
        ),
      );
    });

    it('BSON types round-trip: Date, Long beyond 2^53, Decimal128, Int32, Binary, null, nested arrays and documents', async () => {
      const c = coll('ins_types');
      const when = new Date('2024-02-29T12:34:56.789Z');
      const big = Long.fromString('9007199254740993');
      await c.insertOne({
        _id: 1,
        when,
        big,
        dec: Decimal128.fromString('1.10'),
        i32: new Int32(42),
        dbl: 2.5,
        bin: new Binary(Buffer.from([1, 2, 3])),
        nothing: null,
        nested: { arr: [1, [2, 3], { x: 'y' }] },
        flag: false,
      });
      const doc = (await c.findOne({ _id: 1 })) as Document;
      expect(doc.when).toEqual(when);
      expect(doc.big).toBeInstanceOf(Long);
      expect((doc.big as Long).toString()).toBe('9007199254740993');
      expect(doc.dec).toBeInstanceOf(Decimal128);
      expect((doc.dec as Decimal128).toString()).toBe('1.10');
      expect(doc.i32).toBe(42);
      expect(doc.dbl).toBe(2.5);
      expect(doc.bin).toBeInstanceOf(Binary);
      const bin = doc.bin as Binary;
      expect(Array.from(bin.buffer.subarray(0, bin.position))).toEqual([1, 2, 3]);
      expect(doc.nothing).toBeNull();
      expect(doc.nested).toEqual({ arr: [1, [2, 3], { x: 'y' }] });
      expect(doc.flag).toBe(false);
    });

    it('inserting into a missing collection creates it implicitly (it then appears in listCollections)', async () => {
      await coll('ins_implicit').insertOne({ a: 1 });
      const names = (await handle.db.listCollections({}, { nameOnly: true }).toArray()).map((c) => c.name);
      expect(names).toContain('ins_implicit');
    });
  });

  describe('delete', () => {
    it('deleteOne removes exactly one of several matching documents: deletedCount 1', async () => {
      const c = coll('del_one');
      await c.insertMany([{ k: 'x' }, { k: 'x' }, { k: 'y' }]);
      const result = await c.deleteOne({ k: 'x' });
      expect(result).toEqual({ acknowledged: true, deletedCount: 1 });
      expect(await c.countDocuments({ k: 'x' })).toBe(1);
      expect(await c.countDocuments()).toBe(2);
    });

    it('deleteMany removes every match and reports deletedCount', async () => {
      const c = coll('del_many');
      await c.insertMany([{ n: 1 }, { n: 2 }, { n: 3 }, { n: 4 }, { n: 5 }]);
      const result = await c.deleteMany({ n: { $gte: 3 } });
      expect(result.deletedCount).toBe(3);
      expect((await c.find().sort({ n: 1 }).toArray()).map((d) => d.n)).toEqual([1, 2]);
    });

    it('deleteMany({}) empties the collection and reports how many were removed', async () => {
      const c = coll('del_all');
      await c.insertMany([{ a: 1 }, { a: 2 }, { a: 3 }]);
      expect((await c.deleteMany({})).deletedCount).toBe(3);
      expect(await c.countDocuments()).toBe(0);
    });

    it('delete with no match reports deletedCount 0; on a missing collection too', async () => {
      const c = coll('del_none');
      await c.insertOne({ a: 1 });
      expect((await c.deleteOne({ a: 2 })).deletedCount).toBe(0);
      expect((await c.deleteMany({ a: 2 })).deletedCount).toBe(0);
      expect((await coll('del_missing_coll').deleteMany({})).deletedCount).toBe(0);
    });

    it('a raw delete command answers { n, ok: 1 } and honours limit:1 versus limit:0 per statement', async () => {
      const c = coll('del_raw');
      await c.insertMany([{ t: 'a' }, { t: 'a' }, { t: 'a' }, { t: 'b' }, { t: 'b' }]);
      const reply = await handle.db.command({
        delete: 'del_raw',
        deletes: [
          { q: { t: 'a' }, limit: 1 },
          { q: { t: 'b' }, limit: 0 },
        ],
      });
      expect(reply).toEqual({ n: 3, ok: 1 });
      expect(await c.countDocuments({ t: 'a' })).toBe(2);
      expect(await c.countDocuments({ t: 'b' })).toBe(0);
    });
  });
});
