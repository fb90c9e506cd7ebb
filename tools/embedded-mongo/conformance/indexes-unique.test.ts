// Unique index enforcement on every write path, with the exact E11000 error shape of MongoDB 7.0.
import { connectDriver, type DriverHandle } from '@parametric/test-harness';
import { type Document, Double } from 'mongodb';
import { type Doc, escapeRegExp, serverError, writeErrorsOf } from './support';

describe('conformance: unique indexes', () => {
  let handle: DriverHandle;

  beforeAll(async () => {
    handle = await connectDriver('unique');
  });

  afterAll(async () => {
    await handle.close();
  });

  const coll = (name: string) => handle.db.collection<Doc>(name);
  const ns = (name: string) => `${handle.db.databaseName}.${name}`;
  const dupMessage = (name: string, index: string, key: string) =>
    `E11000 duplicate key error collection: ${ns(name)} index: ${index} dup key: ${key}`;

  async function uniqueEmails(name: string): Promise<ReturnType<typeof coll>> {
    const c = coll(name);
    await c.createIndex({ email: 1 }, { unique: true });
    await c.insertOne({ _id: 1, email: 'a@x.io', n: 1 });
    await c.insertOne({ _id: 2, email: 'b@x.io', n: 2 });
    return c;
  }

  async function snapshot(name: string): Promise<Document[]> {
    return coll(name).find().sort({ _id: 1 }).toArray();
  }

  it('insert of a duplicate unique key fails with code 11000, the exact errmsg, keyPattern and keyValue, and writes nothing', async () => {
    const c = await uniqueEmails('u_insert');
    const before = await snapshot('u_insert');
    const error = await serverError(c.insertOne({ _id: 3, email: 'a@x.io' }));
    expect(error.code).toBe(11000);
    expect(error.message).toBe(dupMessage('u_insert', 'email_1', '{ email: "a@x.io" }'));
    expect(error.message).toMatch(
      new RegExp(
        `^E11000 duplicate key error collection: ${escapeRegExp(ns('u_insert'))} index: email_1 dup key: \\{ .* \\}$`,
      ),
    );
    expect(error.keyPattern).toEqual({ email: 1 });
    expect(error.keyValue).toEqual({ email: 'a@x.io' });
    expect(await snapshot('u_insert')).toEqual(before);
    expect(await c.countDocuments()).toBe(2);
  });

  it('a numeric unique key prints as a number in the dup key text', async () => {
    const c = coll('u_numeric');
    await c.createIndex({ n: 1 }, { unique: true });
    await c.insertOne({ n: 5 });
    const error = await serverError(c.insertOne({ n: 5 }));
    expect(error.message).toBe(dupMessage('u_numeric', 'n_1', '{ n: 5 }'));
    expect(error.keyValue).toEqual({ n: 5 });
  });

  it('int 1 and double 1.0 are the same index key (conflict), while the string "1" is not', async () => {
    const c = coll('u_numeric_types');
    await c.createIndex({ k: 1 }, { unique: true });
    await c.insertOne({ k: 1 });
    await c.insertOne({ k: '1' });
    const error = await serverError(c.insertOne({ k: new Double(1) }));
    expect(error.code).toBe(11000);
    expect(await c.countDocuments()).toBe(2);
  });

  it('updateOne that would duplicate a unique key fails with 11000 (keyPattern, keyValue) and leaves the document unchanged', async () => {
    const c = await uniqueEmails('u_update');
    const before = await snapshot('u_update');
    const error = await serverError(c.updateOne({ _id: 2 }, { $set: { email: 'a@x.io', n: 99 } }));
    expect(error.code).toBe(11000);
    expect(error.message).toBe(dupMessage('u_update', 'email_1', '{ email: "a@x.io" }'));
    expect(error.keyPattern).toEqual({ email: 1 });
    expect(error.keyValue).toEqual({ email: 'a@x.io' });
    expect(await snapshot('u_update')).toEqual(before);
  });

  it('$inc into an existing unique value fails with 11000', async () => {
    const c = coll('u_inc');
    await c.createIndex({ seq: 1 }, { unique: true });
    await c.insertMany([
      { _id: 1, seq: 1 },
      { _id: 2, seq: 2 },
    ]);
    const error = await serverError(c.updateOne({ _id: 1 }, { $inc: { seq: 1 } }));
    expect(error.code).toBe(11000);
    expect(error.keyValue).toEqual({ seq: 2 });
    expect(await c.findOne({ _id: 1 })).toEqual({ _id: 1, seq: 1 });
  });

  it('updateMany stops at the first conflicting document: 11000, and exactly one document got the new value', async () => {
    const c = coll('u_update_many');
    await c.createIndex({ v: 1 }, { unique: true });
    await c.insertMany([
      { _id: 1, v: 1 },
      { _id: 2, v: 2 },
      { _id: 3, v: 3 },
    ]);
    const error = await serverError(c.updateMany({}, { $set: { v: 42 } }));
    expect(error.code).toBe(11000);
    expect(await c.countDocuments({ v: 42 })).toBe(1);
    expect(await c.countDocuments()).toBe(3);
  });

  it('an upsert that inserts a duplicate unique key fails with 11000 and inserts nothing', async () => {
    const c = await uniqueEmails('u_upsert');
    const error = await serverError(
      c.updateOne({ _id: 10 }, { $set: { email: 'b@x.io' } }, { upsert: true }),
    );
    expect(error.code).toBe(11000);
    expect(error.keyValue).toEqual({ email: 'b@x.io' });
    expect(await c.countDocuments()).toBe(2);
    expect(await c.findOne({ _id: 10 })).toBeNull();
  });

  it('replaceOne into a duplicate unique key fails with 11000 and keeps the original document', async () => {
    const c = await uniqueEmails('u_replace');
    const before = await snapshot('u_replace');
    const error = await serverError(c.replaceOne({ _id: 1 }, { email: 'b@x.io' }));
    expect(error.code).toBe(11000);
    expect(await snapshot('u_replace')).toEqual(before);
  });

  it('findOneAndUpdate into a duplicate unique key fails with 11000, keyPattern and keyValue, and changes nothing', async () => {
    const c = await uniqueEmails('u_fam');
    const before = await snapshot('u_fam');
    const error = await serverError(
      c.findOneAndUpdate({ _id: 1 }, { $set: { email: 'b@x.io' } }, { returnDocument: 'after' }),
    );
    expect(error.code).toBe(11000);
    expect(error.codeName).toBe('DuplicateKey');
    expect(error.message).toBe(dupMessage('u_fam', 'email_1', '{ email: "b@x.io" }'));
    expect(error.keyPattern).toEqual({ email: 1 });
    expect(error.keyValue).toEqual({ email: 'b@x.io' });
    expect(await snapshot('u_fam')).toEqual(before);
  });

  it('findOneAndUpdate with upsert into a duplicate unique key fails with 11000 and inserts nothing', async () => {
    const c = await uniqueEmails('u_fam_upsert');
    const error = await serverError(
      c.findOneAndUpdate({ _id: 'new' }, { $set: { email: 'a@x.io' } }, { upsert: true }),
    );
    expect(error.code).toBe(11000);
    expect(await c.countDocuments()).toBe(2);
  });

  it('the raw findAndModify error reply is ok:0 with code 11000, codeName DuplicateKey, keyPattern and keyValue', async () => {
    await uniqueEmails('u_fam_raw');
    const error = await serverError(
      handle.db.command({
        findAndModify: 'u_fam_raw',
        query: { _id: 2 },
        update: { $set: { email: 'a@x.io' } },
      }),
    );
    const reply = error.errorResponse as Document;
    expect(reply.ok).toBe(0);
    expect(reply.code).toBe(11000);
    expect(reply.codeName).toBe('DuplicateKey');
    expect(reply.errmsg).toBe(dupMessage('u_fam_raw', 'email_1', '{ email: "a@x.io" }'));
    expect(reply.keyPattern).toEqual({ email: 1 });
    expect(reply.keyValue).toEqual({ email: 'a@x.io' });
  });

  it('a compound unique index rejects only the same combination; the dup key lists every field', async () => {
    const c = coll('u_compound');
    expect(await c.createIndex({ org: 1, handle: 1 }, { unique: true })).toBe('org_1_handle_1');
    await c.insertOne({ org: 'acme', handle: 'bob' });
    await c.insertOne({ org: 'acme', handle: 'ann' });
    await c.insertOne({ org: 'umbrella', handle: 'bob' });
    const error = await serverError(c.insertOne({ org: 'acme', handle: 'bob' }));
    expect(error.code).toBe(11000);
    expect(error.message).toBe(dupMessage('u_compound', 'org_1_handle_1', '{ org: "acme", handle: "bob" }'));
    expect(error.keyPattern).toEqual({ org: 1, handle: 1 });
    expect(error.keyValue).toEqual({ org: 'acme', handle: 'bob' });
    expect(await c.countDocuments()).toBe(3);
  });

  it('under a non-sparse unique index two documents without the field conflict on a null key', async () => {
    const c = coll('u_null');
    await c.createIndex({ email: 1 }, { unique: true });
    await c.insertOne({ name: 'first' });
    const error = await serverError(c.insertOne({ name: 'second' }));
    expect(error.code).toBe(11000);
    expect(error.message).toBe(dupMessage('u_null', 'email_1', '{ email: null }'));
    expect(error.keyValue).toEqual({ email: null });
    expect(await c.countDocuments()).toBe(1);
  });

  it('an explicit null and a missing field are the same key under a non-sparse unique index', async () => {
    const c = coll('u_null_vs_missing');
    await c.createIndex({ email: 1 }, { unique: true });
    await c.insertOne({ email: null });
    const error = await serverError(c.insertOne({ other: 1 }));
    expect(error.code).toBe(11000);
  });

  it('a sparse unique index allows many documents missing the field but still rejects equal values', async () => {
    const c = coll('u_sparse');
    await c.createIndex({ email: 1 }, { unique: true, sparse: true });
    await c.insertMany([{ name: 'a' }, { name: 'b' }, { name: 'c' }]);
    await c.insertOne({ email: 'x@x.io' });
    const error = await serverError(c.insertOne({ email: 'x@x.io' }));
    expect(error.code).toBe(11000);
    expect(await c.countDocuments()).toBe(4);
  });

  it('a sparse unique index still indexes explicit nulls: two { email: null } conflict', async () => {
    const c = coll('u_sparse_null');
    await c.createIndex({ email: 1 }, { unique: true, sparse: true });
    await c.insertOne({ email: null });
    const error = await serverError(c.insertOne({ email: null }));
    expect(error.code).toBe(11000);
  });

  it('a partial unique index only constrains documents matching partialFilterExpression', async () => {
    const c = coll('u_partial');
    await c.createIndex({ email: 1 }, { unique: true, partialFilterExpression: { status: 'active' } });
    await c.insertOne({ _id: 1, email: 'p@x.io', status: 'active' });
    await c.insertOne({ _id: 2, email: 'p@x.io', status: 'archived' });
    await c.insertOne({ _id: 3, email: 'p@x.io', status: 'archived' });
    await c.insertOne({ _id: 4, email: 'p@x.io' });
    const error = await serverError(c.insertOne({ _id: 5, email: 'p@x.io', status: 'active' }));
    expect(error.code).toBe(11000);
    expect(error.keyValue).toEqual({ email: 'p@x.io' });
    expect(await c.countDocuments()).toBe(4);
  });

  it('updating a document into the partial filter with a duplicate key fails with 11000 and changes nothing', async () => {
    const c = coll('u_partial_update');
    await c.createIndex({ email: 1 }, { unique: true, partialFilterExpression: { status: 'active' } });
    await c.insertOne({ _id: 1, email: 'q@x.io', status: 'active' });
    await c.insertOne({ _id: 2, email: 'q@x.io', status: 'archived' });
    const error = await serverError(c.updateOne({ _id: 2 }, { $set: { status: 'active' } }));
    expect(error.code).toBe(11000);
    expect(await c.findOne({ _id: 2 })).toEqual({ _id: 2, email: 'q@x.io', status: 'archived' });
  });

  it('a unique index on an array field rejects another document sharing any element, but allows repeats inside one document', async () => {
    const c = coll('u_multikey');
    await c.createIndex({ tags: 1 }, { unique: true });
    await c.insertOne({ _id: 1, tags: ['a', 'b'] });
    await c.insertOne({ _id: 2, tags: ['c', 'c'] });
    const error = await serverError(c.insertOne({ _id: 3, tags: ['b', 'z'] }));
    expect(error.code).toBe(11000);
    expect(error.keyValue).toEqual({ tags: 'b' });
    expect(await c.countDocuments()).toBe(2);
  });

  it('unordered insertMany reports each unique violation by index and inserts the rest', async () => {
    const c = coll('u_insert_many');
    await c.createIndex({ email: 1 }, { unique: true });
    const error = await serverError(
      c.insertMany(
        [
          { email: 'a@x.io' },
          { email: 'a@x.io' },
          { email: 'b@x.io' },
          { email: 'b@x.io' },
          { email: 'c@x.io' },
        ],
        { ordered: false },
      ),
    );
    expect(writeErrorsOf(error).map((w) => [w.index, w.code])).toEqual([
      [1, 11000],
      [3, 11000],
    ]);
    expect(writeErrorsOf(error)[0]?.errmsg).toBe(
      dupMessage('u_insert_many', 'email_1', '{ email: "a@x.io" }'),
    );
    expect(await c.countDocuments()).toBe(3);
  });

  it('after a unique violation the collection still accepts a non-conflicting write', async () => {
    const c = await uniqueEmails('u_recover');
    await serverError(c.insertOne({ email: 'a@x.io' }));
    await c.insertOne({ _id: 3, email: 'c@x.io' });
    expect((await snapshot('u_recover')).map((d) => d.email)).toEqual(['a@x.io', 'b@x.io', 'c@x.io']);
  });

  it('deleting the holder of a key frees it for a new document', async () => {
    const c = await uniqueEmails('u_free');
    await c.deleteOne({ _id: 1 });
    await c.insertOne({ _id: 3, email: 'a@x.io' });
    expect(await c.countDocuments({ email: 'a@x.io' })).toBe(1);
  });
});
