import { connectRedis, testRedisUrl, uniqueRedisPrefix } from '@parametric/test-harness';
import { type Job, Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { createProducer, createWorker, type Payload } from '../src';
import { clientNames, closeAfterEach, connectionsGone, deferred, kybVerified } from './helpers';

let redis: Redis;
let prefix: string;
const track = closeAfterEach();

beforeAll(() => {
  redis = connectRedis();
});

beforeEach(() => {
  prefix = uniqueRedisPrefix('worker');
});

afterAll(async () => {
  await redis.quit();
});

describe('createWorker', () => {
  it('hands the handler the validated payload and its job', async () => {
    const producer = track(createProducer('events', { connection: testRedisUrl(), prefix }));
    const received = deferred<{ payload: Payload<'events'>; job: Job }>();
    track(
      createWorker('events', async (payload, job) => received.resolve({ payload, job }), {
        connection: testRedisUrl(),
        prefix,
      }),
    );

    const event = kybVerified();
    await producer.add(event, { jobId: event.id });
    const { payload, job } = await received.promise;

    expect(payload).toEqual(event);
    expect(job.id).toBe(event.id);
    // Narrowing on `event` types `data` per catalog entry.
    if (payload.event === 'kyb.verified') expect(payload.data.kybStatus).toBe('VERIFIED');
  });

  it('fails a job with an invalid payload permanently, without calling the handler', async () => {
    const raw = track(new Queue('events', { connection: redis, prefix }));
    const calls: unknown[] = [];
    const worker = track(
      createWorker('events', async (payload) => void calls.push(payload), {
        connection: testRedisUrl(),
        prefix,
      }),
    );
    const failed = deferred<Error>();
    worker.worker.on('failed', (_job, err) => failed.resolve(err));

    const event = kybVerified();
    // Bypasses the producer, as a buggy or foreign producer would.
    await raw.add(
      'events',
      { ...event, data: { organizationId: event.organizationId } },
      { jobId: event.id, attempts: 3, backoff: 1000 },
    );
    const error = await failed.promise;

    expect(error.message).toContain('invalid payload for queue "events"');
    expect(calls).toEqual([]);
    // Not scheduled for a retry: the failure is final after one attempt.
    expect(await raw.getJobState(event.id)).toBe('failed');
    expect((await raw.getJob(event.id))?.attemptsMade).toBe(1);
  });

  it('retries a job whose handler fails (only invalid payloads are final)', async () => {
    const producer = track(createProducer('events', { connection: testRedisUrl(), prefix }));
    const attempts: number[] = [];
    const succeeded = deferred<void>();
    const worker = track(
      createWorker(
        'events',
        async (_payload, job) => {
          attempts.push(job.attemptsMade);
          if (attempts.length === 1) throw new Error('transient');
        },
        { connection: testRedisUrl(), prefix },
      ),
    );
    worker.worker.on('completed', () => succeeded.resolve());

    await producer.add(kybVerified(), { attempts: 2 });
    await succeeded.promise;

    expect(attempts).toEqual([0, 1]);
  });

  it('close() releases every connection it opened for a URL', async () => {
    const worker = createWorker('events', async () => {}, { connection: testRedisUrl(), prefix });
    await worker.worker.waitUntilReady();
    // Ours plus BullMQ's dedicated blocking connection.
    expect((await clientNames(redis, `${prefix}:`)).length).toBeGreaterThanOrEqual(2);
    await worker.close();
    await connectionsGone(redis, `${prefix}:`);
  });

  it('refuses a client that BullMQ cannot use for a worker', () => {
    const client = new Redis(testRedisUrl(), { lazyConnect: true });
    expect(() => createWorker('events', async () => {}, { connection: client, prefix })).toThrow(
      /maxRetriesPerRequest: null/,
    );
    client.disconnect();
  });

  it('close() leaves a caller-owned client open', async () => {
    const shared = connectRedis();
    const worker = createWorker('events', async () => {}, { connection: shared, prefix });
    await worker.worker.waitUntilReady();
    await worker.close();
    expect(await shared.ping()).toBe('PONG');
    await shared.quit();
  });
});
