import { randomUUID } from 'node:crypto';
import { freePort } from '@parametric/local-process';
import { createProducer, type Producer } from '@parametric/queue';
import {
  connectMongoose,
  connectRedis,
  type MongooseHandle,
  testRedisUrl,
  uniqueRedisPrefix,
} from '@parametric/test-harness';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { type Model, Schema } from 'mongoose';
import {
  createEvent,
  type EventEnvelope,
  type EventProducer,
  type OutboxFields,
  type OutboxRelayOptions,
  outboxUpdate,
  type RelayLogger,
  startOutboxRelay,
  withOutbox,
  withOutboxEvents,
} from '../src';

interface Organization extends OutboxFields {
  _id: string;
  kybStatus: string;
  updatedAt: Date;
}

let mongo: MongooseHandle;
let redis: Redis;
let Organizations: Model<Organization>;
let prefix: string;
let producer: Producer<'events'>;
let queue: Queue;
const relays: { stop(): Promise<void> }[] = [];

/** Records what the relay logs, so failures are asserted rather than printed. */
function recordingLogger(): RelayLogger & { warnings: string[]; logged: Promise<void> } {
  const warnings: string[] = [];
  let firstLog: () => void = () => {};
  const logged = new Promise<void>((resolve) => {
    firstLog = resolve;
  });
  const record = (_obj: object, msg: string) => {
    warnings.push(msg);
    firstLog();
  };
  return { warnings, logged, warn: record, error: record };
}

/** A relay that only runs when the test asks (drain/kick): the timer never fires during a test. */
function relay(options: Partial<OutboxRelayOptions> = {}) {
  const started = startOutboxRelay({
    model: Organizations,
    producer,
    intervalMs: 3_600_000,
    logger: recordingLogger(),
    ...options,
  });
  relays.push(started);
  return started;
}

function verified(orgId: string): EventEnvelope<'kyb.verified'> {
  return createEvent('kyb.verified', orgId, { organizationId: orgId, kybStatus: 'VERIFIED' });
}

/** An organization whose KYB was just verified: the state change and its event, one write. */
async function verifyOrganization(): Promise<{ orgId: string; event: EventEnvelope<'kyb.verified'> }> {
  const { _id: orgId } = await Organizations.create({ _id: randomUUID(), kybStatus: 'NOT_STARTED' });
  const event = verified(orgId);
  await Organizations.updateOne({ _id: orgId }, withOutboxEvents({ $set: { kybStatus: 'VERIFIED' } }, event));
  return { orgId, event };
}

function stored(orgId: string) {
  return Organizations.collection.findOne({ _id: orgId as never });
}

beforeAll(async () => {
  mongo = await connectMongoose('events_relay');
  redis = connectRedis();
  Organizations = mongo.connection.model<Organization>(
    'Organization',
    withOutbox(new Schema<Organization>({ _id: String, kybStatus: String }, { timestamps: true })),
  );
  await Organizations.init();
});

beforeEach(async () => {
  await Organizations.deleteMany({});
  prefix = uniqueRedisPrefix('relay');
  producer = createProducer('events', { connection: testRedisUrl(), prefix });
  queue = new Queue('events', { connection: redis, prefix });
});

afterEach(async () => {
  await Promise.all(relays.splice(0).map((r) => r.stop()));
  await producer.close();
  await queue.close();
});

afterAll(async () => {
  await redis.quit();
  await mongo.close();
});

describe('outbox relay', () => {
  it('moves a recorded event to the queue under its own id, empties the outbox and clears the flag', async () => {
    const { orgId, event } = await verifyOrganization();
    const before = await stored(orgId);
    expect(before).toMatchObject({ outboxPending: true, outbox: [event] });

    await relay().drain();

    const job = await queue.getJob(event.id);
    expect(job?.data).toEqual(event);
    expect(await queue.getJobCounts('waiting')).toEqual({ waiting: 1 });
    const after = await stored(orgId);
    expect(after).toMatchObject({ kybStatus: 'VERIFIED', outbox: [], outboxPending: false });
    // Relay bookkeeping is not a change of the organization.
    expect(after?.updatedAt).toEqual(before?.updatedAt);
  });

  it('relays every event of every pending document, across batches', async () => {
    const recorded = await Promise.all([1, 2, 3, 4, 5].map(() => verifyOrganization()));
    const extra = verified(recorded[0]?.orgId as string);
    await Organizations.updateOne({ _id: recorded[0]?.orgId }, outboxUpdate(extra));

    await relay({ batchSize: 2 }).drain();

    const ids = [...recorded.map((r) => r.event.id), extra.id];
    const jobs = await queue.getJobs(['waiting']);
    expect(jobs.map((j) => j.id).sort()).toEqual(ids.sort());
    expect(await Organizations.countDocuments({ outboxPending: true })).toBe(0);
  });

  it('with Redis unreachable keeps the event, and a later relay delivers it exactly as recorded', async () => {
    const { orgId, event } = await verifyOrganization();
    // Nothing listens on this port; no reconnects, so the enqueue fails at once.
    const deadRedis = new Redis(`redis://127.0.0.1:${await freePort()}`, {
      lazyConnect: true,
      retryStrategy: () => null,
      maxRetriesPerRequest: 0,
    });
    const deadProducer = createProducer('events', { connection: deadRedis, prefix, onError: () => {} });
    const logger = recordingLogger();
    const failing = relay({ producer: deadProducer, logger });
    try {
      await expect(failing.drain()).rejects.toThrow(`could not enqueue event ${event.id}`);
      expect(await stored(orgId)).toMatchObject({ outbox: [event], outboxPending: true });

      // A kicked (or timed) pass has no caller to reject to: it logs, and the event stays.
      failing.kick();
      await logger.logged;
      await failing.stop();
      expect(logger.warnings).toEqual([expect.stringContaining('pending events stay in the outbox')]);
      expect(await stored(orgId)).toMatchObject({ outbox: [event], outboxPending: true });
    } finally {
      await deadProducer.close();
      // ioredis arms a 2 s timer on disconnect() even for a socket that is already gone.
      if (deadRedis.status !== 'end') deadRedis.disconnect();
    }

    await relay().drain();

    expect((await queue.getJob(event.id))?.data).toEqual(event);
    expect(await stored(orgId)).toMatchObject({ outbox: [], outboxPending: false });
  });

  it('after a crash between enqueue and pull, the re-run leaves one job for the event, not two', async () => {
    const { orgId, event } = await verifyOrganization();
    // What the crashed relay did before dying: the enqueue, but not the pull.
    await producer.add(event, { jobId: event.id });

    await relay().drain();

    expect(await queue.getJobCounts('waiting', 'delayed', 'active', 'completed')).toEqual({
      waiting: 1,
      delayed: 0,
      active: 0,
      completed: 0,
    });
    expect((await queue.getJob(event.id))?.data).toEqual(event);
    expect(await stored(orgId)).toMatchObject({ outbox: [], outboxPending: false });
  });

  it('an event appended while a pass runs is not stranded', async () => {
    const { orgId, event } = await verifyOrganization();
    const second = createEvent('kyb.verified', orgId, { organizationId: orgId, kybStatus: 'VERIFIED' });
    let appended = false;
    // The real producer; the first enqueue also lets another writer append to the same
    // document, after the pass has read it and before it clears the flag.
    const racing: EventProducer = {
      async add(payload, opts) {
        const job = await producer.add(payload, opts);
        if (!appended) {
          appended = true;
          await Organizations.updateOne({ _id: orgId }, outboxUpdate(second));
        }
        return job;
      },
    };

    await relay({ producer: racing }).drain();

    expect(appended).toBe(true);
    expect((await queue.getJob(event.id))?.data).toEqual(event);
    expect((await queue.getJob(second.id))?.data).toEqual(second);
    expect(await stored(orgId)).toMatchObject({ outbox: [], outboxPending: false });
  });

  it('moves invalid outbox entries aside instead of blocking the outbox', async () => {
    const { orgId: badOrg, event: validNeighbour } = await verifyOrganization();
    const invalid = { ...verified(badOrg), event: 'kyb.pending' };
    const { id: _dropped, ...withoutId } = verified(badOrg);
    // Written behind the schema's back, as an older release or a manual fix could have.
    await Organizations.collection.updateOne({ _id: badOrg as never }, {
      $push: { outbox: { $each: [invalid, withoutId] } },
    } as never);
    const laterValid = verified(badOrg);
    await Organizations.updateOne({ _id: badOrg }, outboxUpdate(laterValid));
    const { event: good } = await verifyOrganization();
    const logger = recordingLogger();

    await relay({ logger }).drain();

    expect((await queue.getJob(good.id))?.data).toEqual(good);
    expect((await queue.getJob(validNeighbour.id))?.data).toEqual(validNeighbour);
    expect((await queue.getJob(laterValid.id))?.data).toEqual(laterValid);
    expect(await queue.getJob(invalid.id)).toBeUndefined();
    expect(await stored(badOrg)).toMatchObject({
      outbox: [],
      outboxPending: false,
      outboxRejected: [invalid, withoutId],
    });
    expect(logger.warnings).toEqual([
      expect.stringContaining('invalid event moved to outboxRejected'),
      expect.stringContaining('invalid event moved to outboxRejected'),
    ]);
  });

  /** A relay whose producer resolves `enqueued` after its first enqueue. */
  function signalledRelay() {
    let release: () => void = () => {};
    const enqueued = new Promise<void>((resolve) => {
      release = resolve;
    });
    const started = relay({
      producer: {
        async add(payload, opts) {
          const job = await producer.add(payload, opts);
          release();
          return job;
        },
      },
    });
    return { started, enqueued };
  }

  it('kick() runs a pass without waiting for the interval (what a previous run left behind)', async () => {
    const { orgId, event } = await verifyOrganization();
    const { started, enqueued } = signalledRelay();

    started.kick();
    await enqueued;

    expect((await queue.getJob(event.id))?.data).toEqual(event);
    await started.stop();
    expect(await stored(orgId)).toMatchObject({ outbox: [], outboxPending: false });
  });

  it('a write of this process that records an event wakes the relay: no kick, no interval', async () => {
    const { started, enqueued } = signalledRelay();

    const { orgId, event } = await verifyOrganization();
    await enqueued;

    expect((await queue.getJob(event.id))?.data).toEqual(event);
    await started.stop();
    expect(await stored(orgId)).toMatchObject({ outbox: [], outboxPending: false });
  });

  it('a stopped relay is no longer woken by writes', async () => {
    let woken = 0;
    const stopped = relay({
      producer: {
        async add(payload, opts) {
          woken++;
          return producer.add(payload, opts);
        },
      },
    });
    await stopped.stop();
    // Another relay of the same collection still is: it sends the event, the stopped one never.
    const { started, enqueued } = signalledRelay();

    const { event } = await verifyOrganization();
    await enqueued;

    expect((await queue.getJob(event.id))?.data).toEqual(event);
    await started.stop();
    expect(woken).toBe(0);
  });

  it('stop() waits for the running pass to finish', async () => {
    const { orgId, event } = await verifyOrganization();
    let enqueueStarted: () => void = () => {};
    const started = new Promise<void>((resolve) => {
      enqueueStarted = resolve;
    });
    let letEnqueueFinish: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      letEnqueueFinish = resolve;
    });
    const slow = relay({
      producer: {
        async add(payload, opts) {
          enqueueStarted();
          await gate;
          return producer.add(payload, opts);
        },
      },
    });

    slow.kick();
    await started;
    let stopped = false;
    const stopping = slow.stop().then(() => {
      stopped = true;
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect(stopped).toBe(false);

    letEnqueueFinish();
    await stopping;
    expect((await queue.getJob(event.id))?.data).toEqual(event);
    expect(await stored(orgId)).toMatchObject({ outbox: [], outboxPending: false });
    await expect(slow.drain()).rejects.toThrow('stopped');
  });
});
