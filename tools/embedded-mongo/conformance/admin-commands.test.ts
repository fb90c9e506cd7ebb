// Database-level and administrative commands on a MongoDB 7.0 standalone.
import { connectDriver, type DriverHandle } from '@parametric/test-harness';
import { type Document, UUID } from 'mongodb';
import { type Doc, serverError } from './support';

describe('conformance: admin commands', () => {
  let handle: DriverHandle;

  beforeAll(async () => {
    handle = await connectDriver('admin_cmds');
  });

  afterAll(async () => {
    await handle.close();
  });

  const admin = () => handle.client.db('admin');

  async function databaseNames(): Promise<string[]> {
    const reply = await admin().command({ listDatabases: 1, nameOnly: true });
    return (reply.databases as Document[]).map((d) => d.name as string);
  }

  it('listDatabases lists a database once a document was written into it, with sizeOnDisk, empty:false and totalSize', async () => {
    const name = `${handle.db.databaseName}_ld`;
    const other = handle.client.db(name);
    try {
      expect(await databaseNames()).not.toContain(name);
      await other.collection('c').insertOne({ a: 1 });
      const reply = await admin().command({ listDatabases: 1 });
      expect(reply.ok).toBe(1);
      const entry = (reply.databases as Document[]).find((d) => d.name === name);
      expect(entry).toBeDefined();
      expect(typeof entry?.sizeOnDisk).toBe('number');
      expect(entry?.empty).toBe(false);
      expect(typeof reply.totalSize).toBe('number');
    } finally {
      await other.dropDatabase();
    }
  });

  it('listDatabases with nameOnly:true returns entries holding only a name', async () => {
    await handle.db.collection<Doc>('ld_nameonly').insertOne({ a: 1 });
    const reply = await admin().command({ listDatabases: 1, nameOnly: true });
    const entry = (reply.databases as Document[]).find((d) => d.name === handle.db.databaseName);
    expect(entry).toEqual({ name: handle.db.databaseName });
  });

  it('listDatabases with a name filter returns only the matching database', async () => {
    await handle.db.collection<Doc>('ld_filter').insertOne({ a: 1 });
    const reply = await admin().command({
      listDatabases: 1,
      nameOnly: true,
      filter: { name: handle.db.databaseName },
    });
    expect(reply.databases).toEqual([{ name: handle.db.databaseName }]);
  });

  it('dropDatabase answers ok:1 with dropped:<name> and the database leaves listDatabases with its collections', async () => {
    const name = `${handle.db.databaseName}_dd`;
    const doomed = handle.client.db(name);
    await doomed.collection('a').insertOne({ x: 1 });
    await doomed.collection('b').insertOne({ y: 1 });
    expect(await databaseNames()).toContain(name);

    const reply = await doomed.command({ dropDatabase: 1 });
    expect(reply.ok).toBe(1);
    expect(reply.dropped).toBe(name);
    expect(await databaseNames()).not.toContain(name);
    expect(await doomed.listCollections().toArray()).toEqual([]);
    expect(await doomed.collection('a').countDocuments()).toBe(0);
  });

  it('dropDatabase on a database that does not exist still answers ok:1', async () => {
    const reply = await handle.client.db(`${handle.db.databaseName}_none`).command({ dropDatabase: 1 });
    expect(reply.ok).toBe(1);
  });

  it('endSessions with a client-made session id answers ok:1', async () => {
    const reply = await admin().command({ endSessions: [{ id: new UUID() }] });
    expect(reply.ok).toBe(1);
  });

  it('an explicit driver session (no transaction) works on a standalone and ends cleanly', async () => {
    const session = handle.client.startSession();
    try {
      const coll = handle.db.collection<Doc>('session_plain');
      await coll.insertOne({ _id: 1, v: 'a' } as Document, { session });
      expect(await coll.findOne({ _id: 1 } as Document, { session })).toEqual({ _id: 1, v: 'a' });
    } finally {
      await session.endSession();
    }
  });

  it('connectionStatus without auth answers empty authenticatedUsers and authenticatedUserRoles', async () => {
    const reply = await admin().command({ connectionStatus: 1 });
    expect(reply.ok).toBe(1);
    expect(reply.authInfo.authenticatedUsers).toEqual([]);
    expect(reply.authInfo.authenticatedUserRoles).toEqual([]);
  });

  it('dbStats counts the collections, objects and indexes of the database', async () => {
    const name = `${handle.db.databaseName}_st`;
    const db = handle.client.db(name);
    try {
      await db.collection('s').insertMany([{ a: 1 }, { a: 2 }, { a: 3 }]);
      const stats = await db.command({ dbStats: 1 });
      expect(stats.ok).toBe(1);
      expect(stats.db).toBe(name);
      expect(stats.collections).toBe(1);
      expect(stats.objects).toBe(3);
      expect(stats.indexes).toBe(1);
    } finally {
      await db.dropDatabase();
    }
  });

  it('serverStatus answers ok:1 with the same version as buildInfo and a numeric uptime', async () => {
    const status = await admin().command({ serverStatus: 1 });
    const info = await admin().command({ buildInfo: 1 });
    expect(status.ok).toBe(1);
    expect(status.version).toBe(info.version);
    expect(typeof status.uptime).toBe('number');
  });

  it('serverStatus counts every command by name in metrics.commands, a refused one as failed too', async () => {
    const counts = async () => (await admin().command({ serverStatus: 1 })).metrics.commands as Document;
    const before = await counts();
    const coll = handle.db.collection<Doc>('ss_metrics');
    await coll.insertOne({ a: 1 });
    await coll.find({ a: 1 }).toArray();
    await coll.find({ a: 2 }).toArray();
    await expect(handle.db.command({ find: 'ss_metrics', filter: 1 })).rejects.toThrow();
    const after = await counts();
    const grew = (name: string, field: 'total' | 'failed') =>
      Number(after[name]?.[field] ?? 0) - Number(before[name]?.[field] ?? 0);
    expect(grew('find', 'total')).toBeGreaterThanOrEqual(3);
    expect(grew('find', 'failed')).toBeGreaterThanOrEqual(1);
    expect(grew('insert', 'total')).toBeGreaterThanOrEqual(1);
  });

  it('top counts the operations on each namespace by kind, with readLock and writeLock summing them', async () => {
    const coll = handle.db.collection<Doc>('top_counts');
    const namespace = `${handle.db.databaseName}.top_counts`;
    await coll.insertOne({ a: 1 });
    await coll.insertMany([{ a: 2 }, { a: 3 }]);
    await coll.find({}).toArray();
    await coll.countDocuments({});
    await coll.updateOne({ a: 1 }, { $set: { b: 1 } });
    await coll.findOneAndUpdate({ a: 2 }, { $set: { b: 2 } });
    await coll.deleteOne({ a: 3 });
    const reply = await admin().command({ top: 1 });
    expect(reply.ok).toBe(1);
    const usage = reply.totals[namespace] as Record<string, { count: number; time: number }>;
    expect(usage.insert?.count).toBe(2);
    expect(usage.queries?.count).toBe(2);
    expect(usage.update?.count).toBe(2);
    expect(usage.remove?.count).toBe(1);
    expect(usage.readLock?.count).toBe(2);
    expect(usage.writeLock?.count).toBe(5);
    expect(usage.total?.count).toBe(7);
    expect(usage.total?.time).toBeGreaterThanOrEqual(0);
  });

  it('top run on a non-admin database fails with code 13 Unauthorized', async () => {
    const err = await serverError(handle.db.command({ top: 1 }));
    expect(err.code).toBe(13);
  });

  it('listCommands answers a commands document that includes find, insert and hello', async () => {
    const reply = await admin().command({ listCommands: 1 });
    expect(reply.ok).toBe(1);
    expect(reply.commands).toHaveProperty('find');
    expect(reply.commands).toHaveProperty('insert');
    expect(reply.commands).toHaveProperty('hello');
  });

  it('an admin-only command (listDatabases) run on a non-admin database fails with code 13 Unauthorized', async () => {
    const error = await serverError(handle.db.command({ listDatabases: 1 }));
    expect(error.code).toBe(13);
    expect(error.codeName).toBe('Unauthorized');
    expect(error.message).toBe('listDatabases may only be run against the admin database.');
  });
});
