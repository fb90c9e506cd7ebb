import { countJobProcessed } from '@parametric/metrics';
import { runContinuing, type TraceCarrier } from '@parametric/tracing';
import { type Job, UnrecoverableError, Worker } from 'bullmq';
import { closeOwned, type RedisConnection, resolveConnection } from './connection';
import { InvalidPayloadError, type Payload, type QueueName } from './registry';
import { validatePayload } from './validate';

/** `token` is the job's lock token, for `job.moveToDelayed(ts, token)` + `DelayedError`. */
export type JobHandler<N extends QueueName> = (
  payload: Payload<N>,
  job: Job<Payload<N>>,
  token?: string,
) => Promise<void>;

export interface WorkerOptions {
  /** A URL, or an ioredis client created with `maxRetriesPerRequest: null`. */
  connection: RedisConnection;
  prefix?: string;
  concurrency?: number;
  /**
   * How long a job's lock lasts without renewal; a worker that dies mid-job has its job
   * picked up again after about this long (BullMQ's stalled-job check runs at half of it).
   */
  lockDurationMs?: number;
  /** Connection errors BullMQ reports; defaults to console.error. */
  onError?: (error: Error) => void;
  /** BullMQ's rate limiter: at most `max` jobs started per `duration` ms, across every worker of the queue. */
  limiter?: { max: number; duration: number };
}

export interface QueueWorker<N extends QueueName> {
  /** The BullMQ worker, for its events (`completed`, `failed`, …). */
  readonly worker: Worker<Payload<N>>;
  /** Waits for running jobs, then releases every connection this worker opened. */
  close(): Promise<void>;
}

/** Consumes one registered queue, handing the handler only payloads that match its schema. */
export function createWorker<N extends QueueName>(
  name: N,
  handler: JobHandler<N>,
  options: WorkerOptions,
): QueueWorker<N> {
  // BullMQ duplicates this client for its blocking fetch and rejects the copy unless
  // commands may wait for a reconnect indefinitely; say so here rather than from inside it.
  if (typeof options.connection !== 'string' && options.connection.options.maxRetriesPerRequest !== null) {
    throw new Error(`createWorker("${name}"): the ioredis client needs maxRetriesPerRequest: null`);
  }
  // A connect timeout (resolveConnection) but no command timeout: BullMQ duplicates this client
  // for its blocking fetch (BZPOPMIN for up to `drainDelay` s), which a command timeout would
  // abort on every idle wait. A hung Redis cannot park the worker anyway: BullMQ races that fetch
  // against a watchdog (block time + 1 s) and resets the blocking connection when it fires, and
  // the job's lock expiring hands a job stuck mid-write to another worker.
  //
  // Auto-pipelining: a batch of jobs finishing together (a consumer that settles a whole batch
  // at once) issues its moveToFinished scripts in one turn of the event loop; they then go to
  // Redis as one write instead of one write (one system call, here and in Redis) per job. Each
  // script still runs atomically and in order, so nothing BullMQ relies on changes.
  const connection = resolveConnection(options.connection, {
    maxRetriesPerRequest: null,
    enableAutoPipelining: true,
    connectionName: `${options.prefix ?? 'bull'}:${name}:worker`,
  });

  const worker = new Worker<Payload<N>>(
    name,
    async (job, token) => {
      let payload: Payload<N>;
      try {
        payload = validatePayload(name, job.data);
      } catch (err) {
        // Retrying cannot make the data valid: fail now, keeping the reason on the job.
        if (err instanceof InvalidPayloadError) throw new UnrecoverableError(err.message);
        throw err;
      }
      // The job runs in the trace of the request (or job) that caused it, restored for the
      // handler's whole duration: every line logged meanwhile carries its traceId and reqId.
      await runContinuing(traceCarrierOf(job), `process ${name}`, 'consumer', () =>
        handler(payload, job, token),
      );
    },
    {
      connection: connection.client,
      prefix: options.prefix,
      concurrency: options.concurrency ?? 1,
      ...(options.limiter ? { limiter: options.limiter } : {}),
      ...(options.lockDurationMs
        ? {
            lockDuration: options.lockDurationMs,
            stalledInterval: Math.max(500, Math.floor(options.lockDurationMs / 2)),
          }
        : {}),
    },
  );
  // `queue_jobs_processed_total{queue,outcome}`, for every worker of every service, counted here once.
  worker.on('completed', () => countJobProcessed(name, 'completed'));
  worker.on('failed', () => countJobProcessed(name, 'failed'));
  worker.on('error', options.onError ?? ((error) => console.error(`[queue ${name}] worker error`, error)));

  return {
    worker,
    async close() {
      try {
        await worker.close();
      } finally {
        await closeOwned(connection);
      }
    },
  };
}

/**
 * Where a job's trace is: the payload's own `trace` (an event's envelope, stamped by the
 * request that wrote it to the outbox), else what the producer put in the job's options.
 * Anything malformed is ignored: the job then starts a trace of its own.
 */
export function traceCarrierOf(job: Pick<Job, 'data' | 'opts'>): TraceCarrier | undefined {
  const own = (job.data as { trace?: unknown } | undefined)?.trace;
  if (isCarrier(own)) return own;
  const metadata = job.opts?.telemetry?.metadata;
  if (typeof metadata !== 'string' || metadata.length > 512) return undefined;
  try {
    const parsed: unknown = JSON.parse(metadata);
    return isCarrier(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

function isCarrier(value: unknown): value is TraceCarrier {
  if (typeof value !== 'object' || value === null) return false;
  const { traceparent, requestId } = value as Record<string, unknown>;
  return typeof traceparent === 'string' && (requestId === undefined || typeof requestId === 'string');
}
