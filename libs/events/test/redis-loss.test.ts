import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { type LocalRedis, startLocalRedis } from '@parametric/local-redis';
import { createProducer, type Producer } from '@parametric/queue';
import {
  connectMongoose,
  eventually,
  type MongooseHandle,
  uniqueRedisPrefix,
} from '@parametric/test-harness';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { type Model, Schema } from 'mongoose';
import {
  createEvent,
  type EventEnvelope,
  type EventProducer,
  OUTBOX_RETENTION_MS,
  type OutboxFields,
  type OutboxRelayOptions,
  type RelayLogger,
  startOutboxRelay,
  withOutbox,
  withOutboxEvents,
} from '../src';

/**
 * Redis losing its data (FLUSHALL, or killed and back empty) after the relay moved events out
 * of their outbox: the copies kept on the documents for the retention window are enqueued again.
 * A private redis-server, so emptying or killing it disturbs no other test.
 */
jest.setTimeout(60_000);

interface Organization extends OutboxFields {
  _id: string;
  kybStatus: string;
}

let mongo: MongooseHandle;
let Organizations: Model<Organization>;
let redis: LocalRedis;
let port: number;
/** The redis-server started again on the same port after a kill, if a test did. */
let restarted: ChildProcess | undefined;
let admin: Redis;
let prefix: string;
let producer: Producer<'events'>;
let queue: Queue;
/** What the relay enqueued, in order (re-sends included). */
let sent: string[];
let clock: number;
const relays: { stop(): Promise<void> }[] = [];

const silent: RelayLogger & { warnings: string[] } = {
  warnings: [],
  warn(_obj, msg) {
    this.warnings.push(msg);
  },
  error(_obj, msg) {
    this.warnings.push(msg);
  },
};

/** The real producer, counting what goes through it. */
function countingProducer(): EventProducer {
  return {
    addBulk: (jobs) => {
      sent.push(...jobs.map((j) => j.payload.id));
      return producer.addBulk(jobs);
    },
    swapRelayMarker: (key, value, ttlMs) => producer.swapRelayMarker(key, value, ttlMs),
  };
}

/** A relay that only runs when the test asks, on the test's clock. */
function relay(options: Partial<OutboxRelayOptions> = {}) {
  const started = startOutboxRelay({
    model: Organizations,
    producer: countingProducer(),
    intervalMs: 3_600_000,
    now: () => clock,
    logger: silent,
    ...options,
  });
  relays.push(started);
  return started;
}

async function verifyOrganization(): Promise<{ orgId: string; event: EventEnvelope<'kyb.verified'> }> {
  const { _id: orgId } = await Organizations.create({ _id: randomUUID(), kybStatus: 'NOT_STARTED' });
  const event = createEvent('kyb.verified', orgId, { organizationId: orgId, kybStatus: 'VERIFIED' });
  await Organizations.updateOne({ _id: orgId }, withOutboxEvents({ $set: { kybStatus: 'VERIFIED' } }, event));
  return { orgId, event };
}

function stored(orgId: string) {
  return Organizations.collection.findOne({ _id: orgId as never });
}

async function jobIds(): Promise<string[]> {
  const jobs = await queue.getJobs(['waiting', 'delayed', 'active', 'completed', 'failed']);
  return jobs.map((j) => j.id as string).sort();
}

/** SIGKILL, then a new redis-server on the same port, empty (no persistence). */
async function killAndRestartEmpty(): Promise<void> {
  const pid = restarted?.pid ?? (redis.pid as number);
  const old = restarted;
  process.kill(pid, 'SIGKILL');
  if (old) await once(old, 'exit');
  else await eventually(() => expect(() => process.kill(pid, 0)).toThrow(), { timeout: 5_000 });
  restarted = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    { stdio: 'ignore' },
  );
  await eventually(async () => expect(await admin.ping()).toBe('PONG'), { timeout: 10_000, interval: 50 });
}

beforeAll(async () => {
  mongo = await connectMongoose('events_relay_redis_loss');
  Organizations = mongo.connection.model<Organization>(
    'Organization',
    withOutbox(new Schema<Organization>({ _id: String, kybStatus: String })),
  );
  await Organizations.init();
  redis = await startLocalRedis({});
  port = Number(new URL(redis.url).port);
  admin = new Redis(redis.url, { maxRetriesPerRequest: 1 });
});

beforeEach(async () => {
  await Organizations.deleteMany({});
  sent = [];
  silent.warnings = [];
  clock = Date.parse('2026-01-01T00:00:00Z');
  prefix = uniqueRedisPrefix('relay_loss');
  producer = createProducer('events', { connection: redis.url, prefix, onError: () => undefined });
  queue = new Queue('events', { connection: { url: redis.url, maxRetriesPerRequest: 1 }, prefix });
  queue.on('error', () => undefined);
});

afterEach(async () => {
  await Promise.all(relays.splice(0).map((r) => r.stop()));
  await producer.close();
  await queue.close();
});

afterAll(async () => {
  admin.disconnect();
  if (restarted && restarted.exitCode === null) {
    const exited = once(restarted, 'exit');
    restarted.kill('SIGKILL');
    await exited;
  }
  await redis.stop();
  await mongo.close();
});

describe('outbox relay when Redis loses its data', () => {
  it('keeps a copy of a relayed event, and enqueues it again under its id after FLUSHALL', async () => {
    const { orgId, event } = await verifyOrganization();
    const r = relay();
    await r.drain();
    expect(await jobIds()).toEqual([event.id]);
    expect(await stored(orgId)).toMatchObject({
      outbox: [],
      outboxPending: false,
      outboxRelayed: [{ id: event.id, relayedAt: new Date(clock), entry: event }],
      outboxRelayedAt: new Date(clock),
    });

    await admin.flushall();
    expect(await jobIds()).toEqual([]);
    sent = [];
    await r.drain();

    expect(sent).toEqual([event.id]);
    expect((await queue.getJob(event.id))?.data).toEqual(event);
    expect(silent.warnings).toEqual([
      expect.stringContaining('Redis may have lost data'),
      expect.stringContaining('1 kept events enqueued again'),
    ]);
    // The copy stays for the rest of the window.
    expect((await stored(orgId))?.outboxRelayed).toHaveLength(1);
  });

  it('an idle relay notices at its next poll that Redis lost its data, with nothing new to relay', async () => {
    const { event } = await verifyOrganization();
    const r = relay({ intervalMs: 25 });
    await r.drain();
    expect(await jobIds()).toEqual([event.id]);
    sent = [];

    await admin.flushall();

    await eventually(() => expect(sent).toEqual([event.id]));
    expect((await queue.getJob(event.id))?.data).toEqual(event);
  });

  it('enqueues the kept events again after Redis was killed and came back empty on its port', async () => {
    const first = await verifyOrganization();
    const second = await verifyOrganization();
    const r = relay();
    await r.drain();
    expect(await jobIds()).toEqual([first.event.id, second.event.id].sort());

    await killAndRestartEmpty();
    // An event recorded while Redis was away goes out with the re-sent ones.
    const third = await verifyOrganization();
    await eventually(() => r.drain(), { timeout: 15_000, interval: 100 });

    expect(await jobIds()).toEqual([first.event.id, second.event.id, third.event.id].sort());
    expect((await queue.getJob(first.event.id))?.data).toEqual(first.event);
  });

  it('notices a Redis back without its last writes (the tail of an append-only file): the marker holds an older value', async () => {
    await verifyOrganization();
    const r = relay();
    await r.drain();
    const [markerKey] = await admin.keys(`${prefix}:events:relay-marker:*`);
    const before = await admin.get(markerKey as string);
    expect(before).not.toBeNull();

    const { event } = await verifyOrganization();
    await r.drain();
    expect(await admin.get(markerKey as string)).not.toBe(before);
    // What a restart from an append-only file missing its last second looks like: the job and
    // the marker writes that followed it are gone, the older marker value is back.
    await (await queue.getJob(event.id))?.remove();
    await admin.set(markerKey as string, before as string);
    sent = [];
    await r.drain();

    expect(sent).toContain(event.id);
    expect((await queue.getJob(event.id))?.data).toEqual(event);
  });

  it('a re-send that fails part-way is made again by the next pass', async () => {
    const { event } = await verifyOrganization();
    let failResend = false;
    const flaky: EventProducer = {
      addBulk: (jobs) => {
        if (failResend) {
          failResend = false;
          return Promise.reject(new Error('Redis went away again'));
        }
        sent.push(...jobs.map((j) => j.payload.id));
        return producer.addBulk(jobs);
      },
      swapRelayMarker: (key, value, ttlMs) => producer.swapRelayMarker(key, value, ttlMs),
    };
    const r = relay({ producer: flaky });
    await r.drain();

    await admin.flushall();
    failResend = true;
    await expect(r.drain()).rejects.toThrow(`could not enqueue event ${event.id}`);
    expect(await queue.getJob(event.id)).toBeUndefined();
    sent = [];
    await r.drain();

    expect(sent).toEqual([event.id]);
    expect((await queue.getJob(event.id))?.data).toEqual(event);
  });

  it('a Redis that kept its data (marker intact) gets nothing again, however many passes', async () => {
    await verifyOrganization();
    await verifyOrganization();
    const r = relay();
    await r.drain();
    // A new relay's first pass re-sends the window (it cannot know what its predecessor's Redis
    // kept); BullMQ ignores the ids it holds. From then on, nothing is sent twice.
    const afterFirst = [...sent];
    expect(afterFirst).toHaveLength(4);
    const { event } = await verifyOrganization();
    for (let i = 0; i < 5; i++) await r.drain();

    expect(sent).toEqual([...afterFirst, event.id]);
    expect(silent.warnings).toEqual([]);
    expect(await jobIds()).toHaveLength(3);
  });

  it('prunes copies older than the window in the same update, and does not re-send them', async () => {
    const windowMs = 60_000;
    const { orgId, event: old } = await verifyOrganization();
    const { orgId: staleOrg, event: stale } = await verifyOrganization();
    const r = relay({ retentionMs: windowMs });
    await r.drain();
    expect((await stored(orgId))?.outboxRelayed).toHaveLength(1);

    // Past the window: the next event relayed from the same document prunes the old copy. The
    // other document's copy, past the window too, stays until its document relays again.
    clock += windowMs + 1;
    const next = createEvent('kyb.verified', orgId, { organizationId: orgId, kybStatus: 'VERIFIED' });
    await Organizations.updateOne(
      { _id: orgId },
      withOutboxEvents({ $set: { kybStatus: 'VERIFIED' } }, next),
    );
    await r.drain();
    expect((await stored(orgId))?.outboxRelayed).toEqual([
      { id: next.id, relayedAt: new Date(clock), entry: next },
    ]);
    expect((await stored(staleOrg))?.outboxRelayed).toHaveLength(1);

    await admin.flushall();
    sent = [];
    await r.drain();

    expect(sent).toEqual([next.id]);
    expect(await jobIds()).toEqual([next.id]);
    expect(await queue.getJob(old.id)).toBeUndefined();
    expect(await queue.getJob(stale.id)).toBeUndefined();
  });

  it('a relay started after Redis lost its data (both restarted) re-sends the window on its first pass', async () => {
    const { event } = await verifyOrganization();
    const before = relay();
    await before.drain();
    await before.stop();

    await admin.flushall();
    sent = [];
    await relay().drain();

    expect(sent).toEqual([event.id]);
    expect((await queue.getJob(event.id))?.data).toEqual(event);
  });

  it('uses the default window of 15 minutes', async () => {
    expect(OUTBOX_RETENTION_MS).toBe(15 * 60_000);
    const { event } = await verifyOrganization();
    const r = relay();
    await r.drain();
    clock += OUTBOX_RETENTION_MS - 1;
    await admin.flushall();
    sent = [];
    await r.drain();
    expect(sent).toEqual([event.id]);

    clock += 2;
    await admin.flushall();
    sent = [];
    await r.drain();
    expect(sent).toEqual([]);
  });
});
