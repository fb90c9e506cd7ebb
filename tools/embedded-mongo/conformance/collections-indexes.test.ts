// Collection and index management commands as a MongoDB 7.0 standalone answers them.
import { connectDriver, type DriverHandle } from '@parametric/test-harness';
import { type Document, UUID } from 'mongodb';
import { type Doc, serverError } from './support';

describe('conformance: collections and indexes', () => {
  let handle: DriverHandle;

  beforeAll(async () => {
    handle = await connectDriver('coll_idx');
  });

  afterAll(async () => {
    await handle.close();
  });

  const coll = (name: string) => handle.db.collection<Doc>(name);
  const ns = (name: string) => `${handle.db.databaseName}.${name}`;

  async function listIndexes(name: string): Promise<Document[]> {
    const reply = await handle.db.command({ listIndexes: name });
    return reply.cursor.firstBatch as Document[];
  }

  async function collectionNames(): Promise<string[]> {
    return (await handle.db.listCollections({}, { nameOnly: true }).toArray()).map((c) => c.name);
  }

  describe('collections', () => {
    it('createCollection makes an empty collection listed with type collection, options {}, info.readOnly false and the _id_ idIndex', async () => {
      await handle.db.createCollection('cc_basic');
      const reply = await handle.db.command({ listCollections: 1, filter: { name: 'cc_basic' } });
      expect(reply.ok).toBe(1);
      const entries = reply.cursor.firstBatch as Document[];
      expect(entries).toHaveLength(1);
      const entry = entries[0] as Document;
      expect(entry.name).toBe('cc_basic');
      expect(entry.type).toBe('collection');
      expect(entry.options).toEqual({});
      expect(entry.info.readOnly).toBe(false);
      expect(entry.info.uuid).toBeInstanceOf(UUID);
      expect(entry.idIndex).toEqual({ v: 2, key: { _id: 1 }, name: '_id_' });
      expect(await coll('cc_basic').countDocuments()).toBe(0);
    });

    it('createCollection again with identical options succeeds (7.0 create is idempotent) and leaves one collection', async () => {
      await handle.db.createCollection('cc_twice');
      await coll('cc_twice').insertOne({ keep: true });
      const reply = await handle.db.command({ create: 'cc_twice' });
      expect(reply.ok).toBe(1);
      expect((await collectionNames()).filter((n) => n === 'cc_twice')).toHaveLength(1);
      expect(await coll('cc_twice').countDocuments()).toBe(1);
    });

    it('createCollection again with different options fails with code 48 NamespaceExists', async () => {
      await handle.db.createCollection('cc_conflict');
      const error = await serverError(handle.db.command({ create: 'cc_conflict', capped: true, size: 4096 }));
      expect(error.code).toBe(48);
      expect(error.codeName).toBe('NamespaceExists');
      expect(error.message).toContain(ns('cc_conflict'));
    });

    it('listCollections with a name filter returns only that collection; nameOnly entries carry name and type', async () => {
      await coll('lc_one').insertOne({ a: 1 });
      await coll('lc_two').insertOne({ a: 1 });
      const filtered = await handle.db.listCollections({ name: 'lc_two' }).toArray();
      expect(filtered.map((c) => c.name)).toEqual(['lc_two']);
      const nameOnly = await handle.db.command({
        listCollections: 1,
        nameOnly: true,
        filter: { name: 'lc_one' },
      });
      expect(nameOnly.cursor.firstBatch).toEqual([{ name: 'lc_one', type: 'collection' }]);
    });

    it('listCollections with a regex name filter', async () => {
      await coll('rx_alpha').insertOne({});
      await coll('rx_beta').insertOne({});
      await coll('other_rx').insertOne({});
      const names = (await handle.db.listCollections({ name: /^rx_/ }).toArray()).map((c) => c.name).sort();
      expect(names).toEqual(['rx_alpha', 'rx_beta']);
    });

    it('drop removes the collection and its documents; the raw reply carries nIndexesWas and ns', async () => {
      await coll('dr_me').insertMany([{ a: 1 }, { a: 2 }]);
      await coll('dr_me').createIndex({ a: 1 });
      const reply = await handle.db.command({ drop: 'dr_me' });
      expect(reply.ok).toBe(1);
      expect(reply.nIndexesWas).toBe(2);
      expect(reply.ns).toBe(ns('dr_me'));
      expect(await collectionNames()).not.toContain('dr_me');
      expect(await coll('dr_me').countDocuments()).toBe(0);
    });

    it('Collection.drop() resolves true for an existing collection', async () => {
      await coll('dr_driver').insertOne({ a: 1 });
      expect(await coll('dr_driver').drop()).toBe(true);
      expect(await collectionNames()).not.toContain('dr_driver');
    });

    it('renameCollection moves documents and indexes to the new name', async () => {
      await coll('rn_src').insertMany([{ _id: 1 }, { _id: 2 }]);
      await coll('rn_src').createIndex({ x: 1 });
      const reply = await handle.client
        .db('admin')
        .command({ renameCollection: ns('rn_src'), to: ns('rn_dst') });
      expect(reply.ok).toBe(1);
      const names = await collectionNames();
      expect(names).toContain('rn_dst');
      expect(names).not.toContain('rn_src');
      expect(await coll('rn_dst').countDocuments()).toBe(2);
      expect((await listIndexes('rn_dst')).map((i) => i.name).sort()).toEqual(['_id_', 'x_1']);
    });

    it('renameCollection onto an existing collection without dropTarget fails with code 48 NamespaceExists', async () => {
      await coll('rn_a').insertOne({ from: 'a' });
      await coll('rn_b').insertOne({ from: 'b' });
      const error = await serverError(
        handle.client.db('admin').command({ renameCollection: ns('rn_a'), to: ns('rn_b') }),
      );
      expect(error.code).toBe(48);
      expect(error.codeName).toBe('NamespaceExists');
      expect(
        await coll('rn_b')
          .find({}, { projection: { _id: 0 } })
          .toArray(),
      ).toEqual([{ from: 'b' }]);
    });
  });

  describe('indexes', () => {
    it('createIndex answers default names: email_1 for a single key and a_1_b_-1 for a compound key', async () => {
      expect(await coll('ix_names').createIndex({ email: 1 })).toBe('email_1');
      expect(await coll('ix_names').createIndex({ a: 1, b: -1 })).toBe('a_1_b_-1');
      expect(await coll('ix_names').createIndex({ 'nested.key': -1 })).toBe('nested.key_-1');
    });

    it('the raw createIndexes reply reports numIndexesBefore/After and createdCollectionAutomatically', async () => {
      const reply = await handle.db.command({
        createIndexes: 'ix_raw',
        indexes: [{ key: { k: 1 }, name: 'k_1' }],
      });
      expect(reply.ok).toBe(1);
      expect(reply.numIndexesBefore).toBe(1);
      expect(reply.numIndexesAfter).toBe(2);
      expect(reply.createdCollectionAutomatically).toBe(true);
    });

    it('creating an index that already exists is a no-op answering note "all indexes already exist"', async () => {
      await coll('ix_again').createIndex({ k: 1 });
      const reply = await handle.db.command({
        createIndexes: 'ix_again',
        indexes: [{ key: { k: 1 }, name: 'k_1' }],
      });
      expect(reply.ok).toBe(1);
      expect(reply.numIndexesBefore).toBe(2);
      expect(reply.numIndexesAfter).toBe(2);
      expect(reply.note).toBe('all indexes already exist');
    });

    it('listIndexes shows _id_ plus each created index with its options (unique, sparse, partialFilterExpression, expireAfterSeconds)', async () => {
      const c = coll('ix_list');
      await c.insertOne({ x: 1 });
      await c.createIndex({ email: 1 }, { unique: true });
      await c.createIndex({ a: 1, b: -1 });
      await c.createIndex({ nick: 1 }, { sparse: true });
      await c.createIndex({ code: 1 }, { unique: true, partialFilterExpression: { status: 'active' } });
      await c.createIndex({ createdAt: 1 }, { expireAfterSeconds: 3600 });
      await c.createIndex({ label: 1 }, { name: 'custom_label' });
      const byName = new Map((await listIndexes('ix_list')).map((i) => [i.name as string, i]));
      expect([...byName.keys()].sort()).toEqual(
        ['_id_', 'a_1_b_-1', 'code_1', 'createdAt_1', 'custom_label', 'email_1', 'nick_1'].sort(),
      );
      expect(byName.get('_id_')).toEqual({ v: 2, key: { _id: 1 }, name: '_id_' });
      expect(byName.get('email_1')).toEqual({ v: 2, key: { email: 1 }, name: 'email_1', unique: true });
      expect(byName.get('a_1_b_-1')).toEqual({ v: 2, key: { a: 1, b: -1 }, name: 'a_1_b_-1' });
      expect(byName.get('nick_1')).toEqual({ v: 2, key: { nick: 1 }, name: 'nick_1', sparse: true });
      expect(byName.get('code_1')).toEqual({
        v: 2,
        key: { code: 1 },
        name: 'code_1',
        unique: true,
        partialFilterExpression: { status: 'active' },
      });
      expect(byName.get('createdAt_1')).toEqual({
        v: 2,
        key: { createdAt: 1 },
        name: 'createdAt_1',
        expireAfterSeconds: 3600,
      });
      expect(byName.get('custom_label')).toEqual({ v: 2, key: { label: 1 }, name: 'custom_label' });
    });

    it('listIndexes lists _id_ first', async () => {
      await coll('ix_order').createIndex({ z: 1 });
      const names = (await listIndexes('ix_order')).map((i) => i.name);
      expect(names[0]).toBe('_id_');
      expect(names).toEqual(['_id_', 'z_1']);
    });

    it('dropIndex by name removes it and answers nIndexesWas; by key pattern works too', async () => {
      const c = coll('ix_drop');
      await c.createIndex({ a: 1 });
      await c.createIndex({ b: 1 });
      const reply = await handle.db.command({ dropIndexes: 'ix_drop', index: 'a_1' });
      expect(reply.ok).toBe(1);
      expect(reply.nIndexesWas).toBe(3);
      await handle.db.command({ dropIndexes: 'ix_drop', index: { b: 1 } });
      expect((await listIndexes('ix_drop')).map((i) => i.name)).toEqual(['_id_']);
    });

    it("dropIndexes '*' drops every index except _id_", async () => {
      const c = coll('ix_drop_all');
      await c.createIndex({ a: 1 });
      await c.createIndex({ b: 1 }, { unique: true });
      const reply = await handle.db.command({ dropIndexes: 'ix_drop_all', index: '*' });
      expect(reply.ok).toBe(1);
      expect(reply.nIndexesWas).toBe(3);
      expect((await listIndexes('ix_drop_all')).map((i) => i.name)).toEqual(['_id_']);
    });

    it('dropping the _id_ index fails with code 72 InvalidOptions "cannot drop _id index"', async () => {
      await coll('ix_drop_id').insertOne({ a: 1 });
      const error = await serverError(handle.db.command({ dropIndexes: 'ix_drop_id', index: '_id_' }));
      expect(error.code).toBe(72);
      expect(error.codeName).toBe('InvalidOptions');
      expect(error.message).toBe('cannot drop _id index');
      expect((await listIndexes('ix_drop_id')).map((i) => i.name)).toEqual(['_id_']);
    });

    it('dropping an index that does not exist fails with code 27 IndexNotFound', async () => {
      await coll('ix_drop_missing').insertOne({ a: 1 });
      const error = await serverError(handle.db.command({ dropIndexes: 'ix_drop_missing', index: 'nope_1' }));
      expect(error.code).toBe(27);
      expect(error.codeName).toBe('IndexNotFound');
      expect(error.message).toBe('index not found with name [nope_1]');
    });

    it('listIndexes on a missing collection fails with code 26 NamespaceNotFound "ns does not exist: <db>.<coll>"', async () => {
      const error = await serverError(handle.db.command({ listIndexes: 'ix_nowhere' }));
      expect(error.code).toBe(26);
      expect(error.codeName).toBe('NamespaceNotFound');
      expect(error.message).toBe(`ns does not exist: ${ns('ix_nowhere')}`);
    });

    it('a second index on the same key pattern under another name fails with code 85 IndexOptionsConflict', async () => {
      await coll('ix_conflict_name').createIndex({ a: 1 });
      const error = await serverError(
        coll('ix_conflict_name').createIndex({ a: 1 }, { name: 'another_name' }),
      );
      expect(error.code).toBe(85);
      expect(error.codeName).toBe('IndexOptionsConflict');
    });

    it('an existing index name reused for a different key pattern fails with code 86 IndexKeySpecsConflict', async () => {
      await coll('ix_conflict_key').createIndex({ a: 1 }, { name: 'shared' });
      const error = await serverError(coll('ix_conflict_key').createIndex({ b: 1 }, { name: 'shared' }));
      expect(error.code).toBe(86);
      expect(error.codeName).toBe('IndexKeySpecsConflict');
    });

    it('a unique index cannot be built over existing duplicates: code 11000, and the index is not created', async () => {
      const c = coll('ix_unique_over_dups');
      await c.insertMany([{ email: 'dup@x.io' }, { email: 'dup@x.io' }, { email: 'other@x.io' }]);
      const error = await serverError(c.createIndex({ email: 1 }, { unique: true }));
      expect(error.code).toBe(11000);
      expect(error.message).toContain('E11000 duplicate key error');
      expect((await listIndexes('ix_unique_over_dups')).map((i) => i.name)).toEqual(['_id_']);
      expect(await c.countDocuments()).toBe(3);
    });
  });
});
