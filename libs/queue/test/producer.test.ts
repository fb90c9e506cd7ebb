import { connectRedis, testRedisUrl, uniqueRedisPrefix } from '@parametric/test-harness';
import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { createProducer, createWorker, InvalidPayloadError, type Producer } from '../src';
import { clientNames, closeAfterEach, connectionsGone, deferred, kybVerified } from './helpers';

let redis: Redis;
let prefix: string;
let producer: Producer<'events'>;
let inspect: Queue;
const track = closeAfterEach();

beforeAll(() => {
  redis = connectRedis();
});

beforeEach(() => {
  prefix = uniqueRedisPrefix('producer');
  producer = createProducer('events', { connection: testRedisUrl(), prefix });
  inspect = new Queue('events', { connection: redis, prefix });
});

afterEach(async () => {
  await producer.close();
  await inspect.close();
});

afterAll(async () => {
  await redis.quit();
});

async function jobCount(): Promise<number> {
  const counts = await inspect.getJobCounts();
  return Object.values(counts).reduce((sum, n) => sum + n, 0);
}

describe('createProducer', () => {
  it('rejects an invalid payload and enqueues nothing', async () => {
    const event = kybVerified();
    const invalid = [
      { ...event, data: { ...event.data, kybStatus: 'REJECTED' } },
      { ...event, event: 'kyb.pending' },
      { ...event, id: 'not-a-uuid' },
      { ...event, extra: 1 },
    ];
    for (const payload of invalid) {
      await expect(producer.add(payload as never)).rejects.toThrow(InvalidPayloadError);
    }
    expect(await jobCount()).toBe(0);
  });

  it('names the queue and the failing field in the error', async () => {
    const event = kybVerified();
    const error = await producer
      .add({ ...event, data: { ...event.data, kybStatus: 'NOPE' } } as never)
      .catch((e) => e);
    expect(error).toBeInstanceOf(InvalidPayloadError);
    expect(error.queue).toBe('events');
    expect(error.message).toContain('kybStatus');
  });

  it('enqueues a valid payload unchanged, under the given jobId, with retrying defaults', async () => {
    const event = kybVerified();
    const job = await producer.add(event, { jobId: event.id });
    const stored = await inspect.getJob(event.id);
    expect(job.id).toBe(event.id);
    expect(stored?.data).toEqual(event);
    expect(stored?.opts.attempts).toBe(5);
    expect(stored?.opts.backoff).toEqual({ type: 'exponential', delay: 1000 });
  });

  it('per-job attempts and delay override the defaults', async () => {
    const event = kybVerified();
    await producer.add(event, { jobId: event.id, attempts: 2, delay: 60_000 });
    const stored = await inspect.getJob(event.id);
    expect(stored?.opts.attempts).toBe(2);
    expect(await inspect.getJobState(event.id)).toBe('delayed');
  });

  it('de-duplicates a jobId, also once that job has completed', async () => {
    const event = kybVerified();
    await producer.add(event, { jobId: event.id });
    await producer.add(event, { jobId: event.id });
    expect(await jobCount()).toBe(1);

    const done = deferred<void>();
    const worker = track(createWorker('events', async () => {}, { connection: testRedisUrl(), prefix }));
    worker.worker.on('completed', () => done.resolve());
    await done.promise;
    await worker.close();

    // The relay re-adds after a crash: the completed job must still be there to absorb it.
    await producer.add(event, { jobId: event.id });
    expect(await inspect.getJobCounts('completed', 'waiting', 'delayed', 'active')).toEqual({
      completed: 1,
      waiting: 0,
      delayed: 0,
      active: 0,
    });
  });

  it('addBulk enqueues every job under its own id, skips ids it still holds, and adds none if one payload is invalid', async () => {
    const [first, second] = [kybVerified(), kybVerified()];
    await producer.add(first, { jobId: first.id });

    const bad = { ...kybVerified(), event: 'kyb.pending' };
    await expect(
      producer.addBulk([{ payload: second, opts: { jobId: second.id } }, { payload: bad as never }]),
    ).rejects.toThrow(InvalidPayloadError);
    expect(await jobCount()).toBe(1);

    await producer.addBulk([
      { payload: first, opts: { jobId: first.id } },
      { payload: second, opts: { jobId: second.id, attempts: 2 } },
    ]);
    expect(await jobCount()).toBe(2);
    expect((await inspect.getJob(second.id))?.data).toEqual(second);
    expect((await inspect.getJob(second.id))?.opts.attempts).toBe(2);
  });

  it('close() releases the connection it opened for a URL', async () => {
    const own = createProducer('events', { connection: testRedisUrl(), prefix: `${prefix}-own` });
    await own.add(kybVerified());
    expect(await clientNames(redis, `${prefix}-own:`)).toHaveLength(1);
    await own.close();
    await connectionsGone(redis, `${prefix}-own:`);
  });

  it('close() leaves a caller-owned client open', async () => {
    const shared = connectRedis();
    const borrowing = createProducer('events', { connection: shared, prefix });
    await borrowing.add(kybVerified());
    await borrowing.close();
    expect(await shared.ping()).toBe('PONG');
    await shared.quit();
  });

  it('schedule() runs a job repeatedly, keeps one schedule per id across calls, and validates the payload', async () => {
    const sweeps = createProducer('policy-sweeps', { connection: testRedisUrl(), prefix });
    const inspectSweeps = new Queue('policy-sweeps', { connection: redis, prefix });
    try {
      await expect(sweeps.schedule('bad', 100, { task: 'nope' } as never)).rejects.toThrow(
        InvalidPayloadError,
      );
      // Two replicas starting up: the same scheduler id twice is still one schedule.
      await sweeps.schedule('expire', 100, { task: 'expire-policies' });
      await sweeps.schedule('expire', 100, { task: 'expire-policies' });
      expect(await inspectSweeps.getJobSchedulersCount()).toBe(1);

      const seen: string[] = [];
      const three = deferred<void>();
      const worker = track(
        createWorker(
          'policy-sweeps',
          async ({ task }) => {
            seen.push(task);
            if (seen.length === 3) three.resolve();
          },
          { connection: testRedisUrl(), prefix },
        ),
      );
      await three.promise;
      await worker.close();
      expect(seen).toEqual(['expire-policies', 'expire-policies', 'expire-policies']);
    } finally {
      await sweeps.close();
      await inspectSweeps.close();
    }
  });
});
