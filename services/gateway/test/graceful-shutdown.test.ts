import { spawn } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { freePort } from '@parametric/local-process';
import { eventually, rawPost, testMongoUrl, uniqueDatabaseName } from '@parametric/test-harness';
import mongoose from 'mongoose';
import { gatewayProcessEnv } from './support';

/**
 * Issue 14: SIGTERM while partner requests are in flight. The gateway is its own process, as in
 * production; every request it had accepted gets an answer, and what it answered is what it
 * wrote (no registration answered 201 and lost, none written and never answered).
 */
const root = path.resolve(__dirname, '..', '..', '..');
// Enough to keep libuv's four threads busy for several rounds of scrypt when SIGTERM arrives; 40
// took longer than the 8 s stop deadline to drain on a 2-core CI machine running other suites.
const IN_FLIGHT = 16;

describe('the gateway process stopping under load', () => {
  it('answers every accepted request before it exits, and its answers match what it wrote', async () => {
    const port = await freePort();
    const dbName = uniqueDatabaseName('gateway_shutdown');
    const child = spawn(process.execPath, ['--import', 'tsx', 'services/gateway/src/main.ts'], {
      cwd: root,
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { ...process.env, ...(await gatewayProcessEnv(port, dbName)), LOG_LEVEL: 'warn' },
    });
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
    });
    const exited = once(child, 'exit');
    const db = await mongoose.createConnection(testMongoUrl(), { dbName }).asPromise();
    try {
      await eventually(
        async () => expect((await fetch(`http://127.0.0.1:${port}/readyz`)).status).toBe(200),
        {
          timeout: 30_000,
          interval: 100,
          message: 'the gateway ready',
        },
      );

      // Every registration hashes its admin's password (scrypt, in libuv's pool of 4 threads)
      // and writes to MongoDB: all of them are read by the gateway at once, then take a while to get
      // through the pool. SIGTERM arrives once the first is written, with the rest in flight.
      // Raw sockets, so the test knows every request was connected and written before SIGTERM.
      const requests = Array.from({ length: IN_FLIGHT }, (_, i) =>
        rawPost(port, '/api/auth/register-organization', {
          name: `Shutdown Co-op ${i}`,
          type: 'COOPERATIVE',
          countryCode: 'KE',
          adminEmail: `admin${i}@shutdown.example`,
          adminPassword: 'maize-harvest-2026-long',
        }),
      );
      await Promise.all(requests.map((r) => r.written));
      const answers = requests.map((r) => r.answer);
      await eventually(
        async () => expect(await db.collection('organizations').countDocuments()).toBeGreaterThan(0),
        {
          timeout: 10_000,
          interval: 5,
          message: 'the first registration written',
        },
      );
      child.kill('SIGTERM');
      const settled = await Promise.all(answers);
      const [code] = await exited;

      expect(code).toBe(0);
      // No request dropped without an answer: each is a 201, or a definite refusal.
      const unanswered = settled.filter((a) => a.status === 0);
      expect(unanswered).toEqual([]);
      expect(settled.filter((a) => a.status !== 201 && a.status !== 503)).toEqual([]);
      // What was answered 201 is exactly what was written.
      const answeredIds = settled
        .map((a) => a.body?.data?.organization.id)
        .filter((id): id is string => typeof id === 'string')
        .sort();
      const written = (
        await db
          .collection('organizations')
          .find({}, { projection: { _id: 1 } })
          .toArray()
      )
        .map((o) => String(o._id))
        .sort();
      expect(written).toEqual(answeredIds);
      expect(stderr).not.toMatch(/unhandled|did not stop/i);
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await db.dropDatabase().catch(() => undefined);
      await db.close();
    }
  });
});
