import { type DefaultJobOptions, type Job, type JobsOptions, Queue } from 'bullmq';
import { closeOwned, type RedisConnection, resolveConnection } from './connection';
import type { Payload, QueueName } from './registry';
import { validatePayload } from './validate';

export interface ProducerOptions {
  connection: RedisConnection;
  /** BullMQ key prefix; defaults to BullMQ's `bull`. */
  prefix?: string;
  /** Connection errors BullMQ reports; defaults to console.error. */
  onError?: (error: Error) => void;
}

export interface AddOptions {
  /** De-duplicates: adding an id BullMQ still holds is a no-op returning the existing job. */
  jobId?: string;
  delay?: number;
  attempts?: number;
}

export interface Producer<N extends QueueName> {
  readonly name: N;
  add(payload: Payload<N>, opts?: AddOptions): Promise<Job<Payload<N>>>;
  /**
   * Makes sure a job with this id is waiting, delayed or running: if BullMQ still holds a
   * finished (completed or failed) job under the id, that one is removed and the job added
   * afresh. For reconcilers, where plain `add` would be silently swallowed by the old id.
   */
  ensure(payload: Payload<N>, opts: AddOptions & { jobId: string }): Promise<'queued' | 'added'>;
  /**
   * Creates or updates a BullMQ job scheduler: a job with `payload` every `everyMs`. Every
   * replica may call it at start-up; the scheduler id keeps it to one schedule.
   */
  schedule(schedulerId: string, everyMs: number, payload: Payload<N>): Promise<void>;
  close(): Promise<void>;
}

const LIVE_STATES = new Set(['waiting', 'delayed', 'active', 'prioritized', 'waiting-children']);

export const DEFAULT_JOB_OPTIONS = {
  // Rides out a consumer's transient failures (a MongoDB failover, a restart) in about 30 s.
  attempts: 5,
  backoff: { type: 'exponential', delay: 1000 },
  // BullMQ de-duplicates a `jobId` only while it still holds that job. The outbox relay
  // re-adds an event under the same id after a crash or a lost reply, usually within
  // seconds, so completed jobs are kept for a day: far past any such retry, and bounded.
  removeOnComplete: { age: 24 * 3600 },
  // Failed jobs stay a week so ops can inspect and retry them.
  removeOnFail: { age: 7 * 24 * 3600 },
} satisfies DefaultJobOptions;

/** Enqueues validated jobs on one registered queue. */
export function createProducer<N extends QueueName>(name: N, options: ProducerOptions): Producer<N> {
  const connection = resolveConnection(options.connection, {
    connectionName: `${options.prefix ?? 'bull'}:${name}:producer`,
  });
  // Untyped inside: BullMQ's generics cannot resolve a payload type that depends on `N`; the
  // public `add` is typed, and `validatePayload` is what actually guarantees the shape.
  const queue: Queue = new Queue(name, {
    connection: connection.client,
    prefix: options.prefix,
    defaultJobOptions: DEFAULT_JOB_OPTIONS,
  });
  queue.on('error', options.onError ?? ((error) => console.error(`[queue ${name}] producer error`, error)));

  return {
    name,
    async add(payload, opts = {}) {
      const data = validatePayload(name, payload);
      const jobOptions: JobsOptions = {};
      if (opts.jobId !== undefined) jobOptions.jobId = opts.jobId;
      if (opts.delay !== undefined) jobOptions.delay = opts.delay;
      if (opts.attempts !== undefined) jobOptions.attempts = opts.attempts;
      return (await queue.add(name, data, jobOptions)) as Job<Payload<N>>;
    },
    async ensure(payload, opts) {
      const existing = await queue.getJob(opts.jobId);
      if (existing) {
        if (LIVE_STATES.has(await existing.getState())) return 'queued';
        await existing.remove();
      }
      await this.add(payload, opts);
      return 'added';
    },
    async schedule(schedulerId, everyMs, payload) {
      const data = validatePayload(name, payload);
      await queue.upsertJobScheduler(schedulerId, { every: everyMs }, { name, data });
    },
    async close() {
      try {
        await queue.close();
      } finally {
        await closeOwned(connection);
      }
    },
  };
}
