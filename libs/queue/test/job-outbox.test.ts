import { randomUUID } from 'node:crypto';
import {
  connectMongoose,
  connectRedis,
  eventually,
  type MongooseHandle,
  testRedisUrl,
  uniqueRedisPrefix,
} from '@parametric/test-harness';
import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { type Model, Schema } from 'mongoose';
import {
  createProducer,
  type JobOutboxFields,
  jobOutboxInsert,
  outboxJob,
  type Producer,
  startJobOutboxRelay,
  withJobOutbox,
  withOutboxJobs,
} from '../src';

interface Payout extends JobOutboxFields {
  _id: string;
}

let mongo: MongooseHandle;
let redis: Redis;
let Payouts: Model<Payout>;
let prefix: string;
let attempts: Producer<'payout-attempts'>;
let queue: Queue;
const relays: { stop(): Promise<void> }[] = [];

/** Everything under the test's prefix deleted: to its relay, Redis lost its data. */
async function loseRedisData(): Promise<void> {
  const keys = await redis.keys(`${prefix}:*`);
  if (keys.length > 0) await redis.del(...keys);
}

beforeAll(async () => {
  mongo = await connectMongoose('queue_job_outbox');
  redis = connectRedis();
  Payouts = mongo.connection.model<Payout>('Payout', withJobOutbox(new Schema<Payout>({ _id: String })));
  await Payouts.init();
});

beforeEach(async () => {
  await Payouts.deleteMany({});
  prefix = uniqueRedisPrefix('job_outbox');
  attempts = createProducer('payout-attempts', { connection: testRedisUrl(), prefix });
  queue = new Queue('payout-attempts', { connection: redis, prefix });
});

afterEach(async () => {
  await Promise.all(relays.splice(0).map((r) => r.stop()));
  await attempts.close();
  await queue.close();
});

afterAll(async () => {
  await redis.quit();
  await mongo.close();
});

describe('job outbox relay', () => {
  it('keeps a relayed job for the window and enqueues it again under its id once Redis lost its data', async () => {
    const payoutId = randomUUID();
    const job = outboxJob('payout-attempts', { payoutId, part: 1 }, `${payoutId}-attempt-1`);
    await Payouts.create({ _id: payoutId, ...jobOutboxInsert(job) });
    const warnings: string[] = [];
    const relay = startJobOutboxRelay({
      model: Payouts,
      producers: { 'payout-attempts': attempts },
      intervalMs: 3_600_000,
      logger: { warn: (_o, msg) => warnings.push(msg), error: (_o, msg) => warnings.push(msg) },
    });
    relays.push(relay);

    await relay.drain();
    expect((await queue.getJob(job.id))?.data).toEqual({ payoutId, part: 1 });
    const stored = await Payouts.collection.findOne({ _id: payoutId as never });
    expect(stored).toMatchObject({
      jobOutbox: [],
      jobOutboxPending: false,
      jobOutboxRelayed: [{ id: job.id, relayedAt: expect.any(Date), entry: job }],
    });
    await relay.drain();
    expect(warnings).toEqual([]);

    await loseRedisData();
    expect(await queue.getJob(job.id)).toBeUndefined();
    await relay.drain();

    expect((await queue.getJob(job.id))?.data).toEqual({ payoutId, part: 1 });
    expect(warnings).toEqual([
      expect.stringContaining('Redis may have lost data'),
      expect.stringContaining('1 kept jobs enqueued again'),
    ]);
  });
});

describe('job outbox signal', () => {
  it('a document created with its jobs, and an update that adds one, each wake the relay at once', async () => {
    const relay = startJobOutboxRelay({
      model: Payouts,
      producers: { 'payout-attempts': attempts },
      // Never fires during the test: only the writes can wake the relay.
      intervalMs: 3_600_000,
    });
    relays.push(relay);
    const payoutId = randomUUID();
    const first = outboxJob('payout-attempts', { payoutId, part: 1 }, `${payoutId}-attempt-1`);
    await Payouts.create({ _id: payoutId, ...jobOutboxInsert(first) });
    await eventually(async () => expect((await queue.getJob(first.id))?.data).toEqual({ payoutId, part: 1 }));

    const second = outboxJob('payout-attempts', { payoutId, part: 2 }, `${payoutId}-attempt-2`);
    await Payouts.updateOne({ _id: payoutId }, withOutboxJobs({}, second));
    await eventually(async () =>
      expect((await queue.getJob(second.id))?.data).toEqual({ payoutId, part: 2 }),
    );
  });
});

describe('Producer.swapRelayMarker', () => {
  it('sets the marker under the queue prefix with a time to live and returns the previous value', async () => {
    expect(await attempts.swapRelayMarker('k', 'one', 60_000)).toBeNull();
    expect(await attempts.swapRelayMarker('k', 'two', 60_000)).toBe('one');
    const key = `${prefix}:payout-attempts:relay-marker:k`;
    expect(await redis.get(key)).toBe('two');
    const ttl = await redis.pttl(key);
    expect(ttl).toBeGreaterThan(50_000);
    expect(ttl).toBeLessThanOrEqual(60_000);
  });
});
