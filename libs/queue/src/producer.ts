import { currentCarrier, type TraceCarrier } from '@parametric/tracing';
import { type DefaultJobOptions, type Job, type JobsOptions, Queue } from 'bullmq';
import {
  closeOwned,
  QUEUE_COMMAND_TIMEOUT_MS,
  QUEUE_OPERATION_TIMEOUT_MS,
  type RedisConnection,
  resolveConnection,
  withDeadline,
} from './connection';
import type { Payload, QueueName } from './registry';
import { validatePayload } from './validate';

export interface ProducerOptions {
  connection: RedisConnection;
  /** BullMQ key prefix; defaults to BullMQ's `bull`. */
  prefix?: string;
  /** Connection errors BullMQ reports; defaults to console.error. */
  onError?: (error: Error) => void;
  /** Per-command timeout of the connection this creates from a URL (`QUEUE_COMMAND_TIMEOUT_MS`). */
  commandTimeoutMs?: number;
  /**
   * The most one `add`, `ensure` or `schedule` may take, connecting included
   * (`QUEUE_OPERATION_TIMEOUT_MS`); past it the call rejects with `QueueTimeoutError`. Applies to a
   * caller's own client too, which may have no command timeout of its own.
   */
  operationTimeoutMs?: number;
}

export interface AddOptions {
  /** De-duplicates: adding an id BullMQ still holds is a no-op returning the existing job. */
  jobId?: string;
  delay?: number;
  attempts?: number;
  /**
   * The trace the job belongs to, when it is not the current one (a relayed outbox entry
   * carries the trace of the request that stored it; `null`: none, it starts its own). Default:
   * the current request's or job's.
   */
  trace?: TraceCarrier | null;
}

/** One job of `Producer.addBulk`. */
export interface BulkJob<N extends QueueName> {
  payload: Payload<N>;
  opts?: AddOptions;
}

export interface Producer<N extends QueueName> {
  readonly name: N;
  /** Rejects with `QueueTimeoutError` when Redis does not answer in time (the job may still land). */
  add(payload: Payload<N>, opts?: AddOptions): Promise<Job<Payload<N>>>;
  /**
   * `add` for many jobs in one round trip (BullMQ `addBulk`): every payload validated first, so
   * one bad payload adds none. For the outbox relays, which move a pass's entries together.
   */
  addBulk(jobs: readonly BulkJob<N>[]): Promise<Job<Payload<N>>[]>;
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
  /**
   * For the outbox relays (`@parametric/events`), which use it to notice that Redis lost data:
   * sets `<prefix>:<queue>:relay-marker:<key>` to `value`, expiring after `ttlMs`, and returns
   * the value it held before (null: none), in one command (`SET … PX … GET`) on the connection
   * the jobs go through, bounded like `add`.
   */
  swapRelayMarker(key: string, value: string, ttlMs: number): Promise<string | null>;
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

/**
 * Enqueues validated jobs on one registered queue. A connection created from a URL has a connect
 * and a command timeout, and every operation a deadline, so a hung Redis fails a producer's call
 * instead of holding it (and whatever awaits it) until Redis comes back.
 */
export function createProducer<N extends QueueName>(name: N, options: ProducerOptions): Producer<N> {
  const commandTimeoutMs = options.commandTimeoutMs ?? QUEUE_COMMAND_TIMEOUT_MS;
  const connection = resolveConnection(options.connection, {
    connectionName: `${options.prefix ?? 'bull'}:${name}:producer`,
    commandTimeoutMs,
  });
  const deadlineMs = options.operationTimeoutMs ?? QUEUE_OPERATION_TIMEOUT_MS;
  const bounded = <T>(what: string, operation: () => Promise<T>): Promise<T> =>
    withDeadline(operation(), deadlineMs, `${what} on queue ${name}`, commandTimeoutMs);
  // Untyped inside: BullMQ's generics cannot resolve a payload type that depends on `N`; the
  // public `add` is typed, and `validatePayload` is what actually guarantees the shape.
  const queue: Queue = new Queue(name, {
    connection: connection.client,
    prefix: options.prefix,
    defaultJobOptions: DEFAULT_JOB_OPTIONS,
  });
  queue.on('error', options.onError ?? ((error) => console.error(`[queue ${name}] producer error`, error)));

  const jobOptionsOf = (data: Payload<N>, opts: AddOptions): JobsOptions => {
    const jobOptions: JobsOptions = {};
    if (opts.jobId !== undefined) jobOptions.jobId = opts.jobId;
    if (opts.delay !== undefined) jobOptions.delay = opts.delay;
    if (opts.attempts !== undefined) jobOptions.attempts = opts.attempts;
    // The trace of the request or job adding this one travels in the job's options (where
    // BullMQ's own telemetry keeps its propagation metadata), never in the payload. A payload
    // that carries its own trace (an event, stamped when its request wrote it) keeps that one.
    const carrier = hasOwnTrace(data) ? undefined : opts.trace === undefined ? currentCarrier() : opts.trace;
    if (carrier) jobOptions.telemetry = { metadata: JSON.stringify(carrier) };
    return jobOptions;
  };
  /** Validated before the deadline starts: a bad payload is an `InvalidPayloadError`, never a timeout. */
  const enqueue = async (data: Payload<N>, opts: AddOptions) =>
    (await queue.add(name, data, jobOptionsOf(data, opts))) as Job<Payload<N>>;

  return {
    name,
    async add(payload, opts = {}) {
      const data = validatePayload(name, payload);
      return bounded('add', () => enqueue(data, opts));
    },
    async addBulk(jobs) {
      const bulk = jobs.map(({ payload, opts = {} }) => {
        const data = validatePayload(name, payload);
        return { name, data, opts: jobOptionsOf(data, opts) };
      });
      if (bulk.length === 0) return [];
      return bounded('addBulk', async () => (await queue.addBulk(bulk)) as Job<Payload<N>>[]);
    },
    async ensure(payload, opts) {
      const data = validatePayload(name, payload);
      return bounded('ensure', async () => {
        const existing = await queue.getJob(opts.jobId);
        if (existing) {
          if (LIVE_STATES.has(await existing.getState())) return 'queued' as const;
          await existing.remove();
        }
        await enqueue(data, opts);
        return 'added' as const;
      });
    },
    async schedule(schedulerId, everyMs, payload) {
      const data = validatePayload(name, payload);
      await bounded('schedule', () =>
        queue.upsertJobScheduler(schedulerId, { every: everyMs }, { name, data }),
      );
    },
    async swapRelayMarker(key, value, ttlMs) {
      const markerKey = `${options.prefix ?? 'bull'}:${name}:relay-marker:${key}`;
      return bounded('relay marker', () =>
        connection.client.set(markerKey, value, 'PX', Math.max(1, Math.ceil(ttlMs)), 'GET'),
      );
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

function hasOwnTrace(data: unknown): boolean {
  return typeof data === 'object' && data !== null && (data as { trace?: unknown }).trace !== undefined;
}
