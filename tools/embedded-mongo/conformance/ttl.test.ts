// TTL indexes: the TTL monitor deletes documents whose indexed date is older than expireAfterSeconds.
// ttlMonitorSleepSecs is a runtime-settable parameter on a real mongod; it is lowered to 1 s here and
// restored to its default of 60 s afterwards.
import { connectDriver, type DriverHandle, eventually } from '@parametric/test-harness';
import type { Collection } from 'mongodb';
import { type Doc, sleep } from './support';

const POLL_LIMIT_MS = 25_000;

describe('conformance: TTL indexes', () => {
  let handle: DriverHandle;

  beforeAll(async () => {
    handle = await connectDriver('ttl');
    const reply = await handle.client.db('admin').command({ setParameter: 1, ttlMonitorSleepSecs: 1 });
    expect(reply.ok).toBe(1);
  });

  afterAll(async () => {
    await handle.client.db('admin').command({ setParameter: 1, ttlMonitorSleepSecs: 60 });
    await handle.close();
  });

  /** Resolves once the TTL monitor has deleted the document (a real mongod may take a pass or two). */
  const deleted = (c: Collection<Doc>, _id: string) =>
    eventually(async () => expect(await c.countDocuments({ _id })).toBe(0), {
      timeout: POLL_LIMIT_MS,
      interval: 250,
      message: `TTL deleted ${_id}`,
    });

  it('setParameter answers the previous value as "was"', async () => {
    const admin = handle.client.db('admin');
    const first = await admin.command({ setParameter: 1, ttlMonitorSleepSecs: 1 });
    expect(first.ok).toBe(1);
    expect(first.was).toBe(1);
    const got = await admin.command({ getParameter: 1, ttlMonitorSleepSecs: 1 });
    expect(got.ttlMonitorSleepSecs).toBe(1);
  });

  it(
    'a document whose date is past expireAfterSeconds is deleted by the TTL monitor; future dates, non-dates and missing fields stay',
    async () => {
      const c = handle.db.collection<Doc>('ttl_basic');
      await c.createIndex({ createdAt: 1 }, { expireAfterSeconds: 1 });
      const hourAgo = new Date(Date.now() - 3_600_000);
      const inAnHour = new Date(Date.now() + 3_600_000);
      await c.insertMany([
        { _id: 'expired', createdAt: hourAgo },
        { _id: 'future', createdAt: inAnHour },
        { _id: 'string', createdAt: hourAgo.toISOString() },
        { _id: 'number', createdAt: hourAgo.getTime() },
        { _id: 'missing' },
        { _id: 'expired-array', createdAt: [inAnHour, hourAgo] },
      ]);

      await deleted(c, 'expired');
      await deleted(c, 'expired-array');

      // Proving what the monitor keeps it keeps for good: a fixed 2.5 s, a couple more passes at 1 s.
      await sleep(2_500);
      const left = (await c.find().toArray()).map((d) => d._id as string).sort();
      expect(left).toEqual(['future', 'missing', 'number', 'string']);
    },
    POLL_LIMIT_MS * 2 + 10_000,
  );

  it(
    'expireAfterSeconds counts from the stored date: a date 30 s old under a 3600 s TTL stays',
    async () => {
      const c = handle.db.collection<Doc>('ttl_window');
      await c.createIndex({ at: 1 }, { expireAfterSeconds: 3600 });
      await c.insertMany([
        { _id: 'recent', at: new Date(Date.now() - 30_000) },
        { _id: 'old', at: new Date(Date.now() - 7_200_000) },
      ]);
      await deleted(c, 'old');
      // Proving 'recent' is kept: a fixed 2.5 s, a couple more monitor passes at 1 s.
      await sleep(2_500);
      expect(await c.find().toArray()).toEqual([{ _id: 'recent', at: expect.any(Date) }]);
    },
    POLL_LIMIT_MS + 10_000,
  );

  it('collMod changes expireAfterSeconds and answers expireAfterSeconds_old / expireAfterSeconds_new', async () => {
    const c = handle.db.collection<Doc>('ttl_collmod');
    await c.createIndex({ at: 1 }, { expireAfterSeconds: 100 });
    const reply = await handle.db.command({
      collMod: 'ttl_collmod',
      index: { keyPattern: { at: 1 }, expireAfterSeconds: 200 },
    });
    expect(reply.ok).toBe(1);
    expect(reply.expireAfterSeconds_old).toBe(100);
    expect(reply.expireAfterSeconds_new).toBe(200);
    const indexes = await c.listIndexes().toArray();
    expect(indexes.find((i) => i.name === 'at_1')?.expireAfterSeconds).toBe(200);
  });
});
