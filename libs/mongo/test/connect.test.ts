import { createLogger } from '@parametric/logger';
import { connectMongo, pingMongo } from '@parametric/mongo';
import { testMongoUrl, uniqueDatabaseName } from '@parametric/test-harness';

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

  it('logs a warning with the database name when the connection goes down', async () => {
    const lines: Record<string, unknown>[] = [];
    const logger = createLogger({
      name: 'mongo-test',
      destination: { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) },
    });
    const dbName = uniqueDatabaseName('mongo_logged');
    const connection = await connectMongo({ url: testMongoUrl(), dbName, logger });
    await connection.close();
    expect(lines).toContainEqual(expect.objectContaining({ level: 40, dbName, msg: 'MongoDB disconnected' }));
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
});
