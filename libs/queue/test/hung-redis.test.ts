import { type LocalRedis, startLocalRedis } from '@parametric/local-redis';
import { eventually, uniqueRedisPrefix } from '@parametric/test-harness';
import { Redis } from 'ioredis';
import {
  createProducer,
  createWorker,
  type Producer,
  QUEUE_COMMAND_TIMEOUT_MS,
  QueueTimeoutError,
  type QueueWorker,
} from '../src';
import { kybVerified } from './helpers';

/**
 * A Redis that hangs (SIGSTOP: the socket stays open, nothing answers) must fail a producer's
 * call with a timeout error rather than hold it, and both sides must work again once it answers.
 * A private redis-server, so pausing it disturbs no other test.
 */
describe('queues against a hung Redis (SIGSTOP)', () => {
  let redis: LocalRedis;
  let pid: number;
  const opened: Array<{ close(): Promise<unknown> }> = [];

  beforeAll(async () => {
    redis = await startLocalRedis({});
    pid = redis.pid as number;
  });
  afterEach(async () => {
    process.kill(pid, 'SIGCONT');
    await Promise.all(opened.splice(0).map((c) => c.close()));
  });
  afterAll(async () => {
    process.kill(pid, 'SIGCONT');
    await redis.stop();
  });

  it('producer.add rejects with a timeout error while Redis hangs; after SIGCONT it adds again and the worker processes', async () => {
    const prefix = uniqueRedisPrefix('hung');
    const producer: Producer<'events'> = createProducer('events', {
      connection: redis.url,
      prefix,
      onError: () => undefined,
    });
    opened.push(producer);
    const processed: string[] = [];
    const worker: QueueWorker<'events'> = createWorker(
      'events',
      async (payload) => void processed.push(payload.id),
      { connection: redis.url, prefix, onError: () => undefined },
    );
    opened.push(worker);

    const before = kybVerified();
    await producer.add(before, { jobId: before.id });
    await eventually(() => expect(processed).toContain(before.id));

    process.kill(pid, 'SIGSTOP');
    const during = kybVerified();
    const refused = await producer.add(during, { jobId: during.id }).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(refused).toBeInstanceOf(QueueTimeoutError);
    expect((refused as QueueTimeoutError).message).toMatch(
      /^add on queue events: Redis did not answer within \d+ ms$/,
    );
    process.kill(pid, 'SIGCONT');

    const after = kybVerified();
    await producer.add(after, { jobId: after.id });
    await eventually(() => expect(processed).toContain(after.id), { timeout: 20_000 });
    // The refused add had been sent: Redis ran it when it woke (hence jobIds, which de-duplicate).
    await eventually(() => expect(processed).toContain(during.id), { timeout: 20_000 });
    expect(processed.filter((id) => id === during.id)).toHaveLength(1);
  }, 40_000);

  it("bounds add even on a caller's client that has no command timeout of its own", async () => {
    const prefix = uniqueRedisPrefix('hung-own');
    const client = new Redis(redis.url);
    opened.push({ close: async () => client.disconnect() });
    const producer = createProducer('events', {
      connection: client,
      prefix,
      operationTimeoutMs: 1_000,
      onError: () => undefined,
    });
    opened.unshift(producer);
    const first = kybVerified();
    await producer.add(first, { jobId: first.id });

    process.kill(pid, 'SIGSTOP');
    const during = kybVerified();
    await expect(producer.add(during, { jobId: during.id })).rejects.toThrow(QueueTimeoutError);
    process.kill(pid, 'SIGCONT');

    const after = kybVerified();
    expect((await producer.add(after, { jobId: after.id })).id).toBe(after.id);
  });

  it('gives a worker a connect timeout but no command timeout, so its blocking fetch is not cut off', async () => {
    const prefix = uniqueRedisPrefix('idle');
    const processed: string[] = [];
    const errors: Error[] = [];
    const worker = createWorker('events', async (payload) => void processed.push(payload.id), {
      connection: redis.url,
      prefix,
      onError: (err) => errors.push(err),
    });
    opened.push(worker);
    const producer = createProducer('events', { connection: redis.url, prefix });
    opened.push(producer);
    await worker.worker.waitUntilReady();
    // An idle worker sits in BZPOPMIN for its drain delay (5 s). Left idle for three times the
    // producers' command timeout, a command timeout on its connection would have cut that wait
    // off and reported "Command timed out"; a job added afterwards is still taken, and nothing errored.
    await new Promise((resolve) => setTimeout(resolve, 3 * QUEUE_COMMAND_TIMEOUT_MS));
    const event = kybVerified();
    await producer.add(event, { jobId: event.id });
    await eventually(() => expect(processed).toEqual([event.id]));
    expect(errors).toEqual([]);
  });
});
