import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { MongoClient } from 'mongodb';
import { EMBEDDED_MONGOD_BIN, EMBEDDED_MONGOD_VERSION, startLocalMongo } from '../src';

/** The CLI must pass for `mongod` in the ways mongodb-memory-server relies on. */
describe('embedded-mongod CLI', () => {
  it('--version prints the "db version v7.x" line mongodb-memory-server parses', () => {
    const out = spawnSync(process.execPath, [EMBEDDED_MONGOD_BIN, '--version'], { encoding: 'utf8' });
    expect(out.status).toBe(0);
    expect(out.stdout.split('\n')[0]).toBe(`db version v${EMBEDDED_MONGOD_VERSION}`);
    expect(out.stdout).toMatch(/^\s*db\s+version\s+v?(\d+\.\d+\.\d+)/im);
  });

  it('rejects an unknown option with exit code 2, as mongod does', () => {
    const out = spawnSync(process.execPath, [EMBEDDED_MONGOD_BIN, '--frobnicate'], { encoding: 'utf8' });
    expect(out.status).toBe(2);
    expect(out.stderr).toContain("unrecognised option '--frobnicate'");
  });

  it('refuses --replSet instead of pretending to be a replica set', () => {
    const out = spawnSync(process.execPath, [EMBEDDED_MONGOD_BIN, '--replSet', 'rs0'], { encoding: 'utf8' });
    expect(out.status).toBe(1);
    expect(out.stderr).toContain('not supported');
  });

  it('exits with code 100 when --dbpath does not exist, like mongod', () => {
    const missing = path.join(os.tmpdir(), `no-such-dir-${process.pid}-${Date.now()}`);
    const out = spawnSync(process.execPath, [EMBEDDED_MONGOD_BIN, '--port', '0', '--dbpath', missing], {
      encoding: 'utf8',
    });
    expect(out.status).toBe(100);
    expect(out.stdout).toContain('NonExistentPath');
  });

  it('logs "Waiting for connections" as a JSON line, serves clients, and exits 0 on SIGTERM', async () => {
    const dbpath = mkdtempSync(path.join(os.tmpdir(), 'embedded-mongod-'));
    const child = spawn(process.execPath, [
      EMBEDDED_MONGOD_BIN,
      '--port',
      '0',
      '--bind_ip',
      '127.0.0.1',
      '--dbpath',
      dbpath,
      '--noauth',
    ]);
    try {
      let port = 0;
      for await (const line of createInterface({ input: child.stdout })) {
        const entry = JSON.parse(line) as { msg: string; attr: { port?: number } };
        if (entry.msg === 'Waiting for connections') {
          port = entry.attr.port ?? 0;
          break;
        }
      }
      expect(port).toBeGreaterThan(0);
      const client = await MongoClient.connect(`mongodb://127.0.0.1:${port}/`);
      await client.db('cli').collection('c').insertOne({ ok: true });
      expect(await client.db('cli').collection('c').countDocuments()).toBe(1);
      await client.close();
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      const [code] = await exited;
      expect(code).toBe(0);
    } finally {
      child.kill('SIGKILL');
      rmSync(dbpath, { recursive: true, force: true });
    }
  });
});

describe('startLocalMongo', () => {
  it('uses MONGO_URL when it is set and starts nothing', async () => {
    const mongo = await startLocalMongo({ MONGO_URL: 'mongodb://user:pw@db.internal:27017/' });
    expect(mongo.kind).toBe('external');
    expect(mongo.url).toBe('mongodb://user:pw@db.internal:27017/');
    // Credentials never reach the log line.
    expect(mongo.description).not.toContain('pw');
    await mongo.stop();
  });
});
