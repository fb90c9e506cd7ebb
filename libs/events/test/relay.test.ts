import { randomUUID } from 'node:crypto';
import { freePort } from '@parametric/local-process';
import { createProducer, type Producer } from '@parametric/queue';
import {
  connectMongoose,
  connectRedis,
  eventually,
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
  outboxInsert,
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

/** An organization made pending by another process (the raw driver: no write of this one wakes a relay). */
async function writtenElsewhere(): Promise<{ orgId: string; event: EventEnvelope<'kyb.verified'> }> {
  const orgId = randomUUID();
  const event = verified(orgId);
  await Organizations.collection.insertOne({
    _id: orgId,
    kybStatus: 'VERIFIED',
    ...outboxInsert(event),
  } as never);
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
    const batches: string[][] = [];
    // The real producer; the first enqueue also lets another writer append to the same
    // document, after the pass has read it and before it clears the flag.
    const racing: EventProducer = {
      async addBulk(jobs) {
        batches.push(jobs.map((j) => j.payload.id));
        const added = await producer.addBulk(jobs);
        if (!appended) {
          appended = true;
          await Organizations.updateOne({ _id: orgId }, outboxUpdate(second));
        }
        return added;
      },
    };

    await relay({ producer: racing }).drain();

    expect(appended).toBe(true);
    // The first pass left the flag set for the appended event; the next one relayed it.
    expect(batches).toEqual([[event.id], [second.id]]);
    expect((await queue.getJob(event.id))?.data).toEqual(event);
    expect((await queue.getJob(second.id))?.data).toEqual(second);
    expect(await stored(orgId)).toMatchObject({ outbox: [], outboxPending: false });
    // The first pass moved its event although the array had grown meanwhile: one copy of each kept.
    const kept = (await stored(orgId))?.outboxRelayed as { id: string }[];
    expect(kept.map((copy) => copy.id)).toEqual([event.id, second.id]);
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

  it("enqueues a pass's events together, and a failed enqueue leaves every document pending and nothing moved", async () => {
    const recorded = await Promise.all([1, 2, 3].map(() => verifyOrganization()));
    const before = await Promise.all(recorded.map((r) => stored(r.orgId)));
    const batches: string[][] = [];
    let failing = true;
    const logger = recordingLogger();
    const flaky = relay({
      logger,
      producer: {
        async addBulk(jobs) {
          batches.push(jobs.map((j) => j.payload.id));
          if (failing) throw new Error('Redis went away');
          return producer.addBulk(jobs);
        },
      },
    });

    await expect(flaky.drain()).rejects.toThrow('could not enqueue event');
    expect(await Promise.all(recorded.map((r) => stored(r.orgId)))).toEqual(before);
    expect(await queue.getJobCounts('waiting')).toEqual({ waiting: 0 });

    failing = false;
    await flaky.drain();

    const ids = recorded.map((r) => r.event.id).sort();
    // One enqueue per pass, for all of its documents.
    expect(batches.map((b) => [...b].sort())).toEqual([ids, ids]);
    expect((await queue.getJobs(['waiting'])).map((j) => j.id).sort()).toEqual(ids);
    for (const { orgId, event } of recorded) {
      expect(await stored(orgId)).toMatchObject({
        outbox: [],
        outboxPending: false,
        outboxRelayed: [{ id: event.id, entry: event }],
      });
    }
    expect(logger.warnings).toEqual([]);
  });

  it('in a pass with an invalid entry, moves it aside and relays the others of the same enqueue', async () => {
    const { orgId: badOrg, event: neighbour } = await verifyOrganization();
    const invalid = { ...verified(badOrg), event: 'kyb.pending' };
    await Organizations.collection.updateOne({ _id: badOrg as never }, {
      $push: { outbox: invalid },
    } as never);
    const { orgId: goodOrg, event: good } = await verifyOrganization();
    const batches: string[][] = [];
    const logger = recordingLogger();

    await relay({
      logger,
      producer: {
        async addBulk(jobs) {
          batches.push(jobs.map((j) => j.payload.id));
          return producer.addBulk(jobs);
        },
      },
    }).drain();

    expect(batches.map((b) => [...b].sort())).toEqual([[neighbour.id, good.id].sort()]);
    expect((await queue.getJob(neighbour.id))?.data).toEqual(neighbour);
    expect((await queue.getJob(good.id))?.data).toEqual(good);
    expect(await stored(badOrg)).toMatchObject({
      outbox: [],
      outboxPending: false,
      outboxRejected: [invalid],
      outboxRelayed: [{ id: neighbour.id, entry: neighbour }],
    });
    expect(await stored(goodOrg)).toMatchObject({ outbox: [], outboxPending: false });
    expect(logger.warnings).toEqual([expect.stringContaining('invalid event moved to outboxRejected')]);
  });

  it('two relays racing on the same documents enqueue each event under its id, and keep one copy of each', async () => {
    const [first, other] = await Promise.all([verifyOrganization(), verifyOrganization()]);
    const later = verified(first.orgId);
    let aRead: () => void = () => {};
    const aHasRead = new Promise<void>((resolve) => {
      aRead = resolve;
    });
    let openGate: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      openGate = resolve;
    });
    /** Resolves once no entry of the first document has this id any more. */
    const moved = (id: string) =>
      eventually(async () => {
        const outbox = (await stored(first.orgId))?.outbox as { id: string }[];
        expect(outbox.map((e) => e.id)).not.toContain(id);
      });
    // Relay A reads both documents, then waits while `later` is appended and relay B reads
    // them too; B enqueues, lets A go, and writes only after A has moved what it read: B's
    // update of the first document finds `first.event` gone and `later` still there. A's next
    // pass (the flag stayed set for `later`) waits for B's write.
    let aPasses = 0;
    const a = relay({
      producer: {
        async addBulk(jobs) {
          if (++aPasses > 1) await moved(later.id);
          aRead();
          await gate;
          return producer.addBulk(jobs);
        },
      },
    }).drain();
    await aHasRead;
    await Organizations.updateOne({ _id: first.orgId }, outboxUpdate(later));
    const b = relay({
      producer: {
        async addBulk(jobs) {
          const added = await producer.addBulk(jobs);
          openGate();
          await moved(first.event.id);
          return added;
        },
      },
    }).drain();
    await Promise.all([a, b]);

    const ids = [first.event.id, later.id, other.event.id].sort();
    expect((await queue.getJobs(['waiting'])).map((j) => j.id).sort()).toEqual(ids);
    const copy = (event: EventEnvelope) => ({ id: event.id, relayedAt: expect.any(Date), entry: event });
    const firstAfter = await stored(first.orgId);
    expect(firstAfter).toMatchObject({ outbox: [], outboxPending: false });
    expect(firstAfter?.outboxRelayed).toEqual([copy(first.event), copy(later)]);
    const otherAfter = await stored(other.orgId);
    expect(otherAfter).toMatchObject({ outbox: [], outboxPending: false });
    expect(otherAfter?.outboxRelayed).toEqual([copy(other.event)]);
  });

  /**
   * A relay whose producer resolves `enqueued` after its first enqueue; with `failing`, its first
   * `failing` enqueues are refused (Redis down), and `calls` counts every try.
   */
  function signalledRelay({ failing = 0 } = {}) {
    let release: () => void = () => {};
    const enqueued = new Promise<void>((resolve) => {
      release = resolve;
    });
    const tries = { calls: 0 };
    const started = relay({
      producer: {
        async addBulk(jobs) {
          if (++tries.calls <= failing) throw new Error('Redis is down');
          const added = await producer.addBulk(jobs);
          release();
          return added;
        },
      },
    });
    return { started, enqueued, tries };
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

  it("a write of this process wakes a pass that relays its own documents, not another process's", async () => {
    // Replicas of a service each relay what they wrote, rather than racing for the same documents.
    const elsewhere = await writtenElsewhere();
    const { started, enqueued } = signalledRelay();

    const mine = await verifyOrganization();
    await enqueued;
    await started.stop();

    expect((await queue.getJob(mine.event.id))?.data).toEqual(mine.event);
    expect(await queue.getJob(elsewhere.event.id)).toBeUndefined();
    expect(await stored(elsewhere.orgId)).toMatchObject({ outboxPending: true, outbox: [elsewhere.event] });
  });

  it('the poll relays what no woken pass did (another process wrote it, nobody relayed it)', async () => {
    const elsewhere = await writtenElsewhere();
    relay({ intervalMs: 20 });

    await eventually(async () => {
      expect((await queue.getJob(elsewhere.event.id))?.data).toEqual(elsewhere.event);
    });
    await eventually(async () => {
      expect(await stored(elsewhere.orgId)).toMatchObject({ outbox: [], outboxPending: false });
    });
  });

  it('a write that cannot name its documents wakes a pass that reads any pending ones', async () => {
    const elsewhere = await writtenElsewhere();
    const { started, enqueued } = signalledRelay();
    const { _id: orgId } = await Organizations.create({ _id: randomUUID(), kybStatus: 'IN_REVIEW' });
    const event = verified(orgId);

    await Organizations.updateMany(
      { kybStatus: 'IN_REVIEW' },
      withOutboxEvents({ $set: { kybStatus: 'VERIFIED' } }, event),
    );
    await enqueued;
    await started.stop();

    expect((await queue.getJob(event.id))?.data).toEqual(event);
    expect((await queue.getJob(elsewhere.event.id))?.data).toEqual(elsewhere.event);
  });

  it("what a woken pass failed to enqueue, the next one reads again with the next write's", async () => {
    const { started, enqueued, tries } = signalledRelay({ failing: 1 });
    const first = await verifyOrganization();
    await eventually(() => expect(tries.calls).toBe(1));
    expect(await stored(first.orgId)).toMatchObject({ outboxPending: true, outbox: [first.event] });

    const second = await verifyOrganization();
    await enqueued;
    await started.stop();

    expect((await queue.getJob(first.event.id))?.data).toEqual(first.event);
    expect((await queue.getJob(second.event.id))?.data).toEqual(second.event);
    expect(await Organizations.countDocuments({ outboxPending: true })).toBe(0);
  });

  it('a stopped relay is no longer woken by writes', async () => {
    let woken = 0;
    const stopped = relay({
      producer: {
        async addBulk(jobs) {
          woken++;
          return producer.addBulk(jobs);
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
        async addBulk(jobs) {
          enqueueStarted();
          await gate;
          return producer.addBulk(jobs);
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
