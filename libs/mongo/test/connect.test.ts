import { createLogger } from '@parametric/logger';
import { connectMongo, pingMongo } from '@parametric/mongo';
import { eventually, freezableProxy, testMongoUrl, uniqueDatabaseName } from '@parametric/test-harness';

describe('connectMongo', () => {
  it('connects to the named database, pingMongo answers true, then false once the connection is closed', async () => {
    const dbName = uniqueDatabaseName('mongo_connect');
    const connection = await connectMongo({ url: testMongoUrl(), dbName });
    try {
      expect(connection.readyState).toBe(1);
      expect(connection.name).toBe(dbName);
      expect(await pingMongo(connection)).toBe(true);

      await connection.collection('probes').insertOne({ probe: 1 });
      expect(await connection.collection('probes').countDocuments()).toBe(1);
      await connection.dropDatabase();
    } finally {
      await connection.close();
    }
    expect(await pingMongo(connection)).toBe(false);
  });

  it('uses its own connection, so closing one does not affect another', async () => {
    const first = await connectMongo({ url: testMongoUrl(), dbName: uniqueDatabaseName('mongo_first') });
    const second = await connectMongo({ url: testMongoUrl(), dbName: uniqueDatabaseName('mongo_second') });
    try {
      expect(first).not.toBe(second);
      await first.close();
      expect(await pingMongo(first)).toBe(false);
      expect(await pingMongo(second)).toBe(true);
    } finally {
      await first.close();
      await second.close();
    }
  });

  it('logs a warning with the database name when MongoDB goes away, and only info when the service closes it', async () => {
    const lines: Record<string, unknown>[] = [];
    const logger = createLogger({
      name: 'mongo-test',
      destination: { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) },
    });
    const target = new URL(testMongoUrl());
    const proxy = await freezableProxy({ host: target.hostname, port: Number(target.port) });
    const lost = await connectMongo({
      url: `mongodb://${proxy.address}/?directConnection=true`,
      dbName: uniqueDatabaseName('mongo_lost'),
      logger,
      serverSelectionTimeoutMS: 300,
    });
    const closed = await connectMongo({
      url: testMongoUrl(),
      dbName: uniqueDatabaseName('mongo_closed'),
      logger,
    });
    try {
      await proxy.stop();
      await expect(lost.collection('probes').findOne({})).rejects.toThrow();
      await eventually(() =>
        expect(lines).toContainEqual(
          expect.objectContaining({ level: 40, dbName: lost.name, msg: 'MongoDB disconnected' }),
        ),
      );
      await closed.close();
      expect(lines).toContainEqual(
        expect.objectContaining({ level: 30, dbName: closed.name, msg: 'MongoDB connection closed' }),
      );
      expect(lines).not.toContainEqual(expect.objectContaining({ level: 40, dbName: closed.name }));
    } finally {
      await lost.close();
      await closed.close();
    }
  });

  it('rejects when no server answers', async () => {
    await expect(
      connectMongo({
        url: 'mongodb://127.0.0.1:1/',
        dbName: uniqueDatabaseName('mongo_unreachable'),
        serverSelectionTimeoutMS: 300,
      }),
    ).rejects.toThrow();
  });

  it('fails an operation against a hung MongoDB instead of waiting for it, and recovers once it answers', async () => {
    const target = new URL(testMongoUrl());
    const proxy = await freezableProxy({ host: target.hostname, port: Number(target.port) });
    const connection = await connectMongo({
      url: `mongodb://${proxy.address}/?directConnection=true`,
      dbName: uniqueDatabaseName('mongo_hung'),
      socketTimeoutMS: 300,
      connectTimeoutMS: 300,
    });
    try {
      await connection.collection('probes').insertOne({ probe: 1 });
      proxy.freeze();
      // Without the socket timeout this waits until thaw (and the test times out).
      await expect(connection.collection('probes').findOne({ probe: 1 })).rejects.toThrow(/timed out/i);
      proxy.thaw();
      expect(await eventually(() => connection.collection('probes').findOne({ probe: 1 }))).toMatchObject({
        probe: 1,
      });
    } finally {
      proxy.thaw();
      await connection.dropDatabase().catch(() => undefined);
      await connection.close();
      await proxy.stop();
    }
  });
});
