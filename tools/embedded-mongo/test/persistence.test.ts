import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import {
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { crc32 } from 'node:zlib';
import { EJSON } from 'bson';
import {
  Binary,
  Decimal128,
  type Document,
  Double,
  Int32,
  Long,
  MongoClient,
  MongoServerError,
  ObjectId,
  UUID,
} from 'mongodb';
import { DataDirError, EMBEDDED_MONGOD_BIN, EmbeddedMongoServer, startLocalMongo } from '../src';

/**
 * Persistence through the real CLI process and the real driver: what a client was told is
 * written must be there after a kill -9, a SIGTERM, or a journal cut short.
 */

interface Running {
  child: ChildProcess;
  url: string;
  lines: string[];
}

interface Exited {
  code: number | null;
  lines: string[];
}

const JOURNAL = 'journal.bson';
const dirs: string[] = [];
const children = new Set<ChildProcess>();

function tempDir(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'embedded-persist-'));
  dirs.push(dir);
  return dir;
}

/** Starts the CLI; resolves once it listens, or with its exit when it refuses to start. */
function launch(dbpath: string, extra: string[] = ['--persist']): Promise<Running | Exited> {
  const child = spawn(
    process.execPath,
    [EMBEDDED_MONGOD_BIN, '--port', '0', '--bind_ip', '127.0.0.1', '--dbpath', dbpath, ...extra],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  children.add(child);
  child.once('exit', () => children.delete(child));
  const lines: string[] = [];
  // Read to the end, always: a full pipe would stall the server's log writes.
  child.stderr?.resume();
  return new Promise((resolve) => {
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (line) => {
      lines.push(line);
      const entry = JSON.parse(line) as { msg: string; attr: { port?: number } };
      if (entry.msg === 'Waiting for connections')
        resolve({ child, url: `mongodb://127.0.0.1:${entry.attr.port}/`, lines });
    });
    child.once('exit', (code) => resolve({ code, lines }));
  });
}

async function start(dbpath: string, extra?: string[]): Promise<Running> {
  const result = await launch(dbpath, extra);
  if (!('child' in result))
    throw new Error(`server did not start (exit ${result.code}): ${result.lines.join('\n')}`);
  return result;
}

async function stop(server: Running, signal: NodeJS.Signals): Promise<number | null> {
  if (server.child.exitCode !== null || server.child.signalCode !== null) return server.child.exitCode;
  const exited = once(server.child, 'exit');
  server.child.kill(signal);
  const [code] = await exited;
  return code as number | null;
}

async function withClient<T>(url: string, run: (client: MongoClient) => Promise<T>): Promise<T> {
  // No promotion: int32, double and int64 come back as their own classes, so the dump tells them apart.
  const client = await MongoClient.connect(url, { promoteValues: false, promoteLongs: false });
  try {
    return await run(client);
  } finally {
    await client.close();
  }
}

const TYPED = {
  oid: new ObjectId('65a1b2c3d4e5f60718293a4b'),
  uuid: new UUID('0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9'),
  bin: new Binary(Buffer.from([0, 1, 2, 255]), 0),
  dec: Decimal128.fromString('1234567890.123456789012345678901234'),
  longSmall: Long.fromNumber(42),
  longBig: Long.fromString('9007199254740993'),
  int: new Int32(7),
  dbl: new Double(2.5),
  date: new Date('2026-01-02T03:04:05.678Z'),
  nothing: null,
  nested: { a: [1, 'two', { three: new Double(3.25) }, [Long.fromNumber(4)]], b: { c: { d: true } } },
};

/** Every kind of change the journal records, through the driver. */
async function writeEverything(client: MongoClient): Promise<void> {
  const db = client.db('persist');
  await db.createCollection('validated', {
    validator: { $jsonSchema: { bsonType: 'object', required: ['name'] } },
    validationLevel: 'moderate',
  });
  await db.collection('validated').insertOne({ name: 'kept with its options' });

  const policies = db.collection('policies');
  await policies.createIndex({ ref: 1 }, { unique: true });
  await policies.createIndex({ holder: 1 }, { unique: true, partialFilterExpression: { active: true } });
  await policies.createIndex({ expiresAt: 1 }, { expireAfterSeconds: 3600 });
  await policies.createIndex({ region: 1, createdAt: -1 }, { name: 'region_recent' });
  await db.command({
    collMod: 'policies',
    index: { keyPattern: { expiresAt: 1 }, expireAfterSeconds: 7200 },
  });
  await policies.createIndex({ scratch: 1 });
  await policies.dropIndex('scratch_1');

  await policies.insertMany([
    { _id: 'typed', ref: 'P-1', holder: 'h1', active: true, ...TYPED } as Document,
    { ref: 'P-2', holder: 'h1', active: false, region: 'north', createdAt: new Date(0) },
    { ref: 'P-3', holder: 'h2', active: true, expiresAt: new Date('2026-06-01T00:00:00Z') },
    { ref: 'P-4', holder: 'h3', active: true, premium: Long.fromNumber(100) },
    { ref: 'P-5', holder: 'h4', active: true },
  ]);
  await policies.updateOne({ ref: 'P-2' }, {
    $set: { region: 'south' },
    $push: { tags: 'moved' },
  } as Document);
  await policies.updateOne({ ref: 'P-4' }, { $inc: { premium: Long.fromNumber(5) } });
  await policies.replaceOne({ ref: 'P-5' }, { ref: 'P-5', holder: 'h4', active: false, replaced: true });
  await policies.updateOne({ ref: 'P-6' }, { $set: { holder: 'h6' } }, { upsert: true });
  await policies.findOneAndUpdate({ ref: 'P-6' }, { $set: { active: true } });
  await policies.deleteOne({ ref: 'P-3' });

  await db.collection('scratch').insertMany([{ n: 1 }, { n: 2 }]);
  await db.collection('scratch').deleteMany({});
  await db.collection('dropped').insertOne({ gone: true });
  await db.collection('dropped').drop();
  await db.collection('before_rename').createIndex({ k: 1 }, { unique: true });
  await db.collection('before_rename').insertOne({ k: 1 });
  await client.db('admin').command({ renameCollection: 'persist.before_rename', to: 'persist.after_rename' });
  await client.db('other').collection('c').insertOne({ x: 1 });
  await client.db('other').dropDatabase();
  await db
    .collection('policies')
    .aggregate([{ $match: { active: true } }, { $project: { ref: 1 } }, { $out: 'active_refs' }])
    .toArray();

  // A standalone refuses transactions; whatever a refused or aborted one tried must not appear.
  const session = client.startSession();
  try {
    await session
      .withTransaction(async () => {
        await policies.insertOne({ ref: 'TXN-COMMIT' }, { session });
      })
      .catch(() => undefined);
    session.startTransaction();
    await policies.insertOne({ ref: 'TXN-ABORT' }, { session }).catch(() => undefined);
    await session.abortTransaction().catch(() => undefined);
  } finally {
    await session.endSession();
  }
}

/** Everything a client can see, in canonical Extended JSON (which keeps every BSON type). */
async function dump(client: MongoClient): Promise<string> {
  const out: Document = {};
  const { databases } = await client.db('admin').admin().listDatabases();
  for (const { name } of databases.sort((a, b) => a.name.localeCompare(b.name))) {
    const db = client.db(name);
    for (const info of (await db.listCollections().toArray()).sort((a, b) => a.name.localeCompare(b.name))) {
      const coll = db.collection(info.name);
      out[`${name}.${info.name}`] = {
        info,
        indexes: await coll.listIndexes().toArray(),
        docs: await coll.find().toArray(),
      };
    }
  }
  return EJSON.stringify(out, { relaxed: false });
}

async function expectIndexesEnforced(client: MongoClient): Promise<void> {
  const policies = client.db('persist').collection('policies');
  const duplicate = await policies.insertOne({ ref: 'P-1' }).catch((err: unknown) => err);
  expect(duplicate).toBeInstanceOf(MongoServerError);
  expect(Number((duplicate as MongoServerError).code)).toBe(11000);
  // The partial unique index: a second active policy for h1 is refused, an inactive one is not.
  const activeTwice = await policies
    .insertOne({ ref: 'P-7', holder: 'h1', active: true })
    .catch((e: unknown) => e);
  expect(Number((activeTwice as MongoServerError).code)).toBe(11000);
  await policies.insertOne({ ref: 'P-8', holder: 'h1', active: false });
  const renamed = await client
    .db('persist')
    .collection('after_rename')
    .insertOne({ k: 1 })
    .catch((e: unknown) => e);
  expect(Number((renamed as MongoServerError).code)).toBe(11000);
}

afterEach(async () => {
  for (const child of children) child.kill('SIGKILL');
  await Promise.all([...children].map((child) => once(child, 'exit')));
});

afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('embedded-mongod --persist', () => {
  it('keeps every acknowledged write, type and index across a kill -9', async () => {
    const dir = tempDir();
    const first = await start(dir, ['--persist', '--setParameter', 'ttlMonitorSleepSecs=1']);
    const before = await withClient(first.url, async (client) => {
      await writeEverything(client);
      // An expired document, deleted by the TTL monitor: that delete is journalled too.
      const ttl = client.db('persist').collection('policies');
      await ttl.insertOne({ ref: 'EXPIRED', expiresAt: new Date(Date.now() - 7200_000) });
      const deadline = Date.now() + 10_000;
      while (Number(await ttl.countDocuments({ ref: 'EXPIRED' })) > 0 && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 200));
      expect(Number(await ttl.countDocuments({ ref: 'EXPIRED' }))).toBe(0);
      return dump(client);
    });
    expect(statSync(path.join(dir, JOURNAL)).size).toBeGreaterThan(16);
    expect(await stop(first, 'SIGKILL')).toBeNull();

    const second = await start(dir);
    await withClient(second.url, async (client) => {
      expect(await dump(client)).toBe(before);
      const typed = await client
        .db('persist')
        .collection('policies')
        .findOne({ _id: 'typed' } as Document);
      expect(EJSON.stringify(typed, { relaxed: false })).toBe(
        EJSON.stringify(
          { _id: 'typed', ref: 'P-1', holder: 'h1', active: true, ...TYPED },
          { relaxed: false },
        ),
      );
      const refs = await client.db('persist').collection('policies').distinct('ref');
      expect(refs).not.toContain('TXN-COMMIT');
      expect(refs).not.toContain('TXN-ABORT');
      expect(Number(await client.db('persist').collection('active_refs').countDocuments())).toBe(3);
      await expectIndexesEnforced(client);
    });
    expect(await stop(second, 'SIGTERM')).toBe(0);
  });

  it('compacts on SIGTERM and comes back with the same data', async () => {
    const dir = tempDir();
    const first = await start(dir);
    const before = await withClient(first.url, async (client) => {
      await writeEverything(client);
      return dump(client);
    });
    expect(await stop(first, 'SIGTERM')).toBe(0);
    // Compacted: everything is in the snapshot, the journal holds only its header.
    expect(statSync(path.join(dir, JOURNAL)).size).toBe(16);
    expect(readdirSync(dir).sort()).toEqual(['journal.bson', 'snapshot.bson']);

    const second = await start(dir);
    await withClient(second.url, async (client) => {
      expect(await dump(client)).toBe(before);
      await expectIndexesEnforced(client);
    });
    expect(await stop(second, 'SIGINT')).toBe(0);
  });

  it('drops only a torn last journal record, and refuses a journal damaged before its end', async () => {
    const dir = tempDir();
    const first = await start(dir);
    await withClient(first.url, async (client) => {
      const coll = client.db('persist').collection('torn');
      await coll.insertOne({ _id: 'a' } as Document);
      await coll.insertMany([{ _id: 'b' }, { _id: 'c' }] as Document[]);
    });
    await stop(first, 'SIGKILL');
    const journal = path.join(dir, JOURNAL);
    truncateSync(journal, statSync(journal).size - 3);

    const second = await start(dir);
    await withClient(second.url, async (client) => {
      const ids = await client.db('persist').collection('torn').distinct('_id');
      // The insertMany was one command, one frame: it goes as a whole.
      expect(ids).toEqual(['a']);
      await client
        .db('persist')
        .collection('torn')
        .insertOne({ _id: 'd' } as Document);
      await client
        .db('persist')
        .collection('torn')
        .insertOne({ _id: 'e' } as Document);
    });
    expect(second.lines.some((line) => line.includes('"tornTailBytesDropped"'))).toBe(true);
    await stop(second, 'SIGKILL');

    // One flipped byte inside the first frame after the header: not a torn tail.
    const bytes = readFileSync(journal);
    bytes[16 + 12 + 10] = (bytes[16 + 12 + 10] as number) ^ 0xff;
    writeFileSync(journal, bytes);
    const refused = await launch(dir, ['--persist']);
    expect('code' in refused && refused.code).toBe(100);
    const line = refused.lines.find((l) => l.includes('DBException in initAndListen'));
    expect(line).toContain('CorruptData');
  });

  it('refuses a second server on a directory a live server holds, and takes over a dead one', async () => {
    const dir = tempDir();
    const first = await start(dir);
    const refused = await launch(dir, ['--persist']);
    expect('code' in refused && refused.code).toBe(100);
    expect(refused.lines.find((l) => l.includes('DBException in initAndListen'))).toContain('DBPathInUse');
    // The first one is untouched and still serves.
    await withClient(first.url, (client) => client.db('persist').collection('c').insertOne({ alive: true }));
    // Stopped, not dead: the lock still holds.
    first.child.kill('SIGSTOP');
    try {
      const whileStopped = await launch(dir, ['--persist']);
      expect('code' in whileStopped && whileStopped.code).toBe(100);
    } finally {
      first.child.kill('SIGCONT');
    }
    await stop(first, 'SIGKILL');
    const second = await start(dir);
    await withClient(second.url, async (client) => {
      expect(Number(await client.db('persist').collection('c').countDocuments({ alive: true }))).toBe(1);
    });
    await stop(second, 'SIGTERM');
  });

  it('writes nothing to --dbpath without --persist', async () => {
    const dir = tempDir();
    const server = await start(dir, []);
    await withClient(server.url, (client) => client.db('persist').collection('c').insertOne({ x: 1 }));
    expect(await stop(server, 'SIGTERM')).toBe(0);
    expect(readdirSync(dir)).toEqual([]);
  });
});

describe('EmbeddedMongoServer({ dataDir })', () => {
  it('compacts once the journal passes compactAtBytes', async () => {
    const dir = tempDir();
    let server = await EmbeddedMongoServer.start({ dataDir: dir, compactAtBytes: 64 * 1024 });
    try {
      const client = await MongoClient.connect(server.uri);
      try {
        const coll = client.db('persist').collection('bulk');
        for (let i = 0; i < 40; i++) {
          await coll.insertMany(Array.from({ length: 50 }, (_, j) => ({ i, j, pad: 'x'.repeat(40) })));
        }
      } finally {
        await client.close();
      }
      await new Promise((r) => setImmediate(r));
      expect(statSync(path.join(dir, JOURNAL)).size).toBeLessThan(64 * 1024);
    } finally {
      await server.stop();
    }
    server = await EmbeddedMongoServer.start({ dataDir: dir });
    try {
      const client = await MongoClient.connect(server.uri);
      try {
        expect(await client.db('persist').collection('bulk').countDocuments()).toBe(2000);
      } finally {
        await client.close();
      }
    } finally {
      await server.stop();
    }
  });
});

describe('recovery edge cases (in process)', () => {
  async function countIn(dir: string): Promise<number> {
    const server = await EmbeddedMongoServer.start({ dataDir: dir });
    try {
      const client = await MongoClient.connect(server.uri);
      try {
        return await client.db('persist').collection('c').countDocuments();
      } finally {
        await client.close();
      }
    } finally {
      await server.stop();
    }
  }

  it('ignores a journal older than the snapshot (a compaction stopped between its two renames)', async () => {
    const dir = tempDir();
    const server = await EmbeddedMongoServer.start({ dataDir: dir });
    let oldJournal: Buffer;
    try {
      const client = await MongoClient.connect(server.uri);
      await client
        .db('persist')
        .collection('c')
        .insertMany([{ a: 1 }, { a: 2 }]);
      await client.close();
      oldJournal = readFileSync(path.join(dir, JOURNAL));
    } finally {
      await server.stop();
    }
    // Its two inserts are in the newer snapshot already: replaying them would duplicate them.
    writeFileSync(path.join(dir, JOURNAL), oldJournal);
    expect(await countIn(dir)).toBe(2);
  });

  it('refuses a journal newer than the snapshot', async () => {
    const dir = tempDir();
    expect(await countIn(dir)).toBe(0);
    const journal = readFileSync(path.join(dir, JOURNAL));
    const generation = journal.readUInt32LE(8);
    const newer = Buffer.from(journal);
    newer.writeUInt32LE(generation + 5, 8);
    newer.writeUInt32LE(crc32(newer.subarray(0, 12)), 12);
    writeFileSync(path.join(dir, JOURNAL), newer);
    await expect(EmbeddedMongoServer.start({ dataDir: dir })).rejects.toThrow(DataDirError);
    // Refusing took nothing: the lock is not left behind.
    expect(existsSync(path.join(dir, 'embedded-mongod.lock'))).toBe(false);
  });

  it('takes over a lock whose pid now belongs to another process, not one its owner still runs', async () => {
    const dir = tempDir();
    const sleeper = spawn('sleep', ['30']);
    children.add(sleeper);
    sleeper.once('exit', () => children.delete(sleeper));
    const pid = sleeper.pid as number;
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const started = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
    const lock = path.join(dir, 'embedded-mongod.lock');
    writeFileSync(lock, `${pid} ${started}\n`);
    await expect(EmbeddedMongoServer.start({ dataDir: dir })).rejects.toThrow(/DBPathInUse/);
    writeFileSync(lock, `${pid} 1\n`);
    expect(await countIn(dir)).toBe(0);
  });
});

describe('startLocalMongo(env, { dataDir })', () => {
  it('keeps the data in dataDir, reports the pid, and never deletes the directory', async () => {
    const dir = path.join(tempDir(), 'not-yet-there');
    const env = { PATH: process.env.PATH };
    const first = await startLocalMongo(env, { dataDir: dir });
    try {
      expect(first.kind).toBe('embedded');
      expect(first.pid).toEqual(expect.any(Number));
      const client = await MongoClient.connect(first.url);
      await client
        .db('persist')
        .collection('c')
        .insertOne({ _id: 'kept' } as Document);
      await client.close();
    } finally {
      await first.stop();
    }
    expect(existsSync(path.join(dir, 'snapshot.bson'))).toBe(true);

    const second = await startLocalMongo(env, { dataDir: dir });
    try {
      const client = await MongoClient.connect(second.url);
      expect(await client.db('persist').collection('c').findOne({})).toEqual({ _id: 'kept' });
      await client.close();
      // A kill -9 of the server process, then a start on the same directory.
      process.kill(second.pid as number, 'SIGKILL');
    } finally {
      await second.stop();
    }
    const third = await startLocalMongo(env, { dataDir: dir });
    try {
      const client = await MongoClient.connect(third.url);
      expect(await client.db('persist').collection('c').countDocuments()).toBe(1);
      await client.close();
    } finally {
      await third.stop();
    }
    expect(existsSync(dir)).toBe(true);
  });
});
