import type { Logger } from '@parametric/logger';
import type { Payload, Producer } from '@parametric/queue';
import {
  currentTrace,
  outbound,
  parseTraceparent,
  runContinuing,
  type TraceCarrier,
} from '@parametric/tracing';
import { DelayedError, type Job } from 'bullmq';
import {
  type AttemptModel,
  type AttemptRecord,
  attemptIdOf,
  createAttemptLedger,
} from '../deliveries/attempts';
import type { DeliveryDoc, DeliveryModel } from '../deliveries/model';
import type { EndpointModel } from '../endpoints/model';
import { type CurrentEndpoint, createSecretCache, type EndpointSource, uncachedEndpoints } from './endpoints';
import { createDeliveryGate } from './gate';
import { type DeliveryMetrics, eventCreatedAtOf } from './metrics';
import type { Sender } from './send';
import { deliveryHeaders } from './sign';

export interface DelivererDeps {
  deliveries: DeliveryModel;
  /** The attempt ledger (`webhook_delivery_attempts`): one row per attempt, never updated. */
  attempts: AttemptModel;
  endpoints: EndpointModel;
  sender: Sender;
  producer: Producer<'webhook-deliveries'>;
  logger: Logger;
  secretKey: string;
  backoffMs: number[];
  maxAttempts: number;
  perOrganizationConcurrency: number;
  /** Requests to partners in flight per process, all organizations together (default 50). */
  concurrency?: number;
  /** The sender's deadline: how long a slow partner's request may hold its slot (default 10 s). */
  timeoutMs?: number;
  /** Where endpoints come from (the service's cache); default: read when an attempt gets its slot. */
  endpointSource?: EndpointSource;
  now?: () => number;
  /** `webhook_deliveries_total` and `webhook_delivery_latency_seconds`, counted as each outcome is recorded. */
  metrics?: DeliveryMetrics;
}

type AttemptJob = Payload<'webhook-deliveries'>;

/** How long a successful attempt's record waits for others to share its bulk write. */
const RECORD_WINDOW_MS = 2;

interface Deferred {
  /** Whether this attempt's write changed the row (false: a duplicate or stale attempt). */
  resolve(counted: boolean): void;
  reject(err: unknown): void;
}

/** The fields of a delivery row an attempt reads. */
export type AttemptRow = Pick<
  DeliveryDoc,
  '_id' | 'organizationId' | 'event' | 'body' | 'status' | 'cycle' | 'attempts'
> & { trace?: TraceCarrier | null; lastAttempt?: AttemptRecord | null };

export function jobIdOf({ deliveryId, cycle, attempt }: AttemptJob): string {
  return `${deliveryId}_${cycle}_${attempt}`;
}

/** Wait before attempt `attempt + 1` after attempt `attempt` failed (30 s, 1 min, 2 min, 4 min…). */
export function backoffAfter(attempt: number, backoffMs: number[]): number {
  return backoffMs[Math.min(attempt, backoffMs.length) - 1] ?? 0;
}

/**
 * Delivery attempts. The row in MongoDB is the state; a job only says "attempt n of cycle c
 * is due". Every write is conditional on the row still being at attempt n-1 of cycle c, so a
 * duplicate or stale job (a manual retry started a new cycle; a crashed worker's job ran
 * twice) changes nothing: at-least-once sending, exactly-once counting.
 *
 * First attempts are made in process, right after the consumer recorded the row (`first`);
 * later attempts come from the `webhook-deliveries` queue (`attempt`). Both take a slot of
 * the gate (per-process and per-organization limits), then the endpoint as it is at that
 * moment (from the invalidated cache, or read from MongoDB), and record the outcome with one
 * conditional write.
 *
 * Each counted attempt is also kept in the attempt ledger (`webhook_delivery_attempts`, one
 * row per attempt, never updated), so a partner sees every attempt, earlier cycles included.
 * The two writes cannot be one (no transactions), so the order is chosen for what a crash
 * between them leaves:
 * - The delivery row first, and the ledger only for a write that counted. The conditional
 *   update is what decides which copy of an attempt counts (two workers can run one job when a
 *   lock expires); writing the ledger first would let the losing copy's answer ("HTTP 500")
 *   stand in the history next to a row that says the winner's ("DELIVERED"), and a re-run
 *   after a crash would find the attempt already in the ledger and its answer never counted.
 * - The same update stores the attempt on the row as `lastAttempt`. A crash before the ledger
 *   write leaves it there: the read shows it from there, and it is copied to the ledger before
 *   any later attempt of the delivery is made (`attempt` and `firstAttempt` below), that is
 *   before the next counted write could replace it. So the history never loses an attempt the row counted, and
 *   never shows one it did not.
 * - Ledger rows have a deterministic `_id` (`{deliveryId}_{cycle}_{attempt}`), so that copy,
 *   or a re-run, is a duplicate key: never two rows for one attempt.
 */
export function createDeliverer(deps: DelivererDeps) {
  const now = deps.now ?? Date.now;
  const timeoutMs = deps.timeoutMs ?? 10_000;
  const gate = createDeliveryGate({
    total: deps.concurrency ?? 50,
    perOrganization: deps.perOrganizationConcurrency,
    slowMs: Math.max(50, Math.min(250, Math.floor(timeoutMs / 2))),
    timeoutMs,
    now,
  });
  const source = deps.endpointSource ?? uncachedEndpoints(deps.endpoints);
  const secretOf = createSecretCache(deps.secretKey);
  const ledger = createAttemptLedger(deps.attempts);
  /** Ledger writes of successful attempts still in flight (`close` waits for them). */
  const keeping = new Set<Promise<void>>();
  /** After a counted write: a failure here is not lost, the row keeps the attempt (see above). */
  function keep(attempt: AttemptRecord): Promise<void> {
    const written = ledger.record(attempt).catch((err: unknown) => {
      deps.logger.warn(
        { err, deliveryId: attempt.deliveryId, attempt: attempt.attempt },
        'could not write the attempt to the ledger; the delivery row keeps it until the next attempt',
      );
    });
    keeping.add(written);
    void written.finally(() => keeping.delete(written));
    return written;
  }
  /** First attempts running in this process, by delivery id (a duplicate event joins its copy). */
  const running = new Map<string, Promise<void>>();

  async function schedule(job: AttemptJob, delay: number): Promise<void> {
    try {
      await deps.producer.add(job, { jobId: jobIdOf(job), delay });
    } catch (err) {
      // The row says when the attempt is due; the reconciler enqueues it once Redis is back.
      deps.logger.warn(
        { err, deliveryId: job.deliveryId },
        'could not schedule delivery attempt; reconciler will',
      );
    }
  }

  /** Conditional on the row still being at attempt n-1 of cycle c; true when it counted. */
  async function record(row: AttemptRow, job: AttemptJob, update: Record<string, unknown>): Promise<boolean> {
    const result = await deps.deliveries.collection.updateOne(filterFor(row, job), {
      $set: { ...update, updatedAt: new Date(now()) },
    });
    return result.modifiedCount === 1;
  }

  const filterFor = (row: AttemptRow, job: AttemptJob) =>
    ({ _id: row._id, status: 'PENDING', cycle: job.cycle, attempts: job.attempt - 1 }) as never;

  // Successful attempts finishing within RECORD_WINDOW_MS are recorded by one unordered bulk
  // write: still one conditional update per attempt, one round trip for all.
  // (A failed attempt is recorded alone: whether it counted decides the next job.)
  let delivered: Array<{
    id: string;
    job: AttemptJob;
    filter: never;
    set: Record<string, unknown> & { deliveredAt: Date };
    done: Deferred;
  }> = [];
  function recordDelivered(
    row: AttemptRow,
    job: AttemptJob,
    set: Record<string, unknown> & { deliveredAt: Date },
  ): Promise<boolean> {
    return new Promise<boolean>((resolve, reject) => {
      delivered.push({ id: row._id, job, filter: filterFor(row, job), set, done: { resolve, reject } });
      if (delivered.length === 1) setTimeout(flushDelivered, RECORD_WINDOW_MS);
    });
  }
  function flushDelivered(): void {
    const batch = delivered;
    delivered = [];
    const updatedAt = new Date(now());
    deps.deliveries.collection
      .bulkWrite(
        batch.map((b) => ({ updateOne: { filter: b.filter, update: { $set: { ...b.set, updatedAt } } } })),
        { ordered: false },
      )
      .then(
        async (result) => {
          // Which writes changed their row: all (the usual case), none, or (rarely) some, told
          // apart by the delivery time each wrote. Only counted writes are counted as delivered.
          if (result.modifiedCount === batch.length || result.modifiedCount === 0) {
            for (const b of batch) b.done.resolve(result.modifiedCount > 0);
            return;
          }
          const ids = [...new Set(batch.map((b) => b.id))];
          let stored: Array<{ _id: string; cycle?: number; attempts?: number; deliveredAt?: Date | null }> =
            [];
          try {
            stored = (await deps.deliveries.collection
              .find({ _id: { $in: ids } } as never, { projection: { cycle: 1, attempts: 1, deliveredAt: 1 } })
              .toArray()) as unknown as typeof stored;
          } catch {
            // Counted as not delivered by this write: a metric may undercount, never double count.
          }
          const byId = new Map(stored.map((r) => [r._id, r]));
          const claimed = new Set<string>();
          for (const b of batch) {
            const r = byId.get(b.id);
            const mine =
              !claimed.has(b.id) &&
              r?.cycle === b.job.cycle &&
              r.attempts === b.job.attempt &&
              r.deliveredAt?.getTime() === b.set.deliveredAt.getTime();
            if (mine) claimed.add(b.id);
            b.done.resolve(mine);
          }
        },
        (err: unknown) => {
          for (const b of batch) b.done.reject(err);
        },
      );
  }

  /** Attempt `job.attempt` on a slot already held; the slot is freed once the partner answered. */
  async function send(
    row: AttemptRow,
    job: AttemptJob,
    endpoint: CurrentEndpoint | null,
    release: () => void,
  ): Promise<void> {
    const startedAt = now();
    let status: number | null = null;
    let error: string | null;
    const url: string | null = endpoint?.url ?? null;
    try {
      if (!endpoint) {
        error = 'No webhook URL configured';
      } else {
        const headers = deliveryHeaders({
          secret: secretOf(endpoint.secretSealed),
          body: row.body,
          event: row.event,
          deliveryId: row._id,
          now: startedAt,
        });
        const target = endpoint.url;
        // The partner may continue our trace (W3C `traceparent`); the body stays the event alone.
        const result = await outbound(`POST webhook ${row.event}`, (traceparent) =>
          deps.sender.post(target, row.body, traceparent ? { ...headers, traceparent } : headers),
        );
        status = result.status;
        error = result.error ?? (status !== null && (status < 200 || status > 299) ? `HTTP ${status}` : null);
      }
    } finally {
      // The limits are on requests to partners; recording the outcome needs no slot.
      release();
    }

    const finishedAt = new Date(now());
    const attempt: AttemptRecord = {
      _id: attemptIdOf({ deliveryId: row._id, cycle: job.cycle, attempt: job.attempt }),
      deliveryId: row._id,
      organizationId: row.organizationId,
      cycle: job.cycle,
      attempt: job.attempt,
      attemptedAt: new Date(startedAt),
      url,
      responseStatus: status,
      error,
      durationMs: Math.max(0, finishedAt.getTime() - startedAt),
      outcome: !endpoint ? 'SKIPPED' : error ? 'FAILED' : 'DELIVERED',
    };
    if (!error) {
      // Debug: one line per delivery is too many for production's info level; with
      // LOG_LEVEL=debug it is the line (with the event's traceId) that shows the delivery made.
      deps.logger.debug(
        { deliveryId: row._id, event: row.event, attempt: job.attempt, status },
        'webhook delivered',
      );
      const counted = await recordDelivered(row, job, {
        status: 'DELIVERED',
        attempts: job.attempt,
        responseStatus: status,
        lastError: null,
        deliveredAt: finishedAt,
        nextAttemptAt: null,
        url,
        lastAttempt: attempt,
      });
      // Not awaited: the event job (and its worker slot) is done once the row counted the
      // attempt, which the row keeps as `lastAttempt` until the ledger has it.
      if (counted) void keep(attempt);
      if (counted && deps.metrics) {
        deps.metrics.outcome('delivered', job.attempt);
        deps.metrics.delivered(eventCreatedAtOf(row.body), finishedAt.getTime());
      }
      return;
    }
    const exhausted = job.attempt >= deps.maxAttempts || !endpoint;
    const delay = backoffAfter(job.attempt, deps.backoffMs);
    const counted = await record(row, job, {
      status: exhausted ? 'FAILED' : 'PENDING',
      attempts: job.attempt,
      responseStatus: status,
      lastError: error,
      nextAttemptAt: exhausted ? null : new Date(finishedAt.getTime() + delay),
      url,
      lastAttempt: attempt,
    });
    if (counted) await keep(attempt);
    deps.logger.info(
      { deliveryId: row._id, attempt: job.attempt, status, error, exhausted },
      'delivery attempt failed',
    );
    if (counted)
      deps.metrics?.outcome(!endpoint ? 'skipped' : exhausted ? 'failed' : 'retrying', job.attempt);
    if (counted && !exhausted) await schedule({ ...job, attempt: job.attempt + 1 }, delay);
  }

  /** The endpoint as it is now that the slot is held (cached, or read), then the attempt. */
  function sendNow(row: AttemptRow, job: AttemptJob, release: () => void): Promise<void> {
    return inTraceOf(row, () => sendInTrace(row, job, release));
  }

  /**
   * Runs in the trace of the request that caused the event (stored on the row), unless this
   * job already is (its options carried it): events are batched, and a reconciler's job has
   * no trace of its own, so the row is what says whose attempt this is.
   */
  function inTraceOf(row: AttemptRow, fn: () => Promise<void>): Promise<void> {
    const stored = row.trace ?? undefined;
    const parent = parseTraceparent(stored?.traceparent);
    if (!parent || currentTrace()?.traceId === parent.traceId) return fn();
    return runContinuing(stored, `deliver ${row.event}`, 'internal', fn, { 'webhook.delivery_id': row._id });
  }

  async function sendInTrace(row: AttemptRow, job: AttemptJob, release: () => void): Promise<void> {
    let endpoint: CurrentEndpoint | null | undefined = source.peek(row.organizationId);
    if (endpoint === undefined) {
      try {
        endpoint = await source.get(row.organizationId);
      } catch (err) {
        release();
        throw err;
      }
    }
    await send(row, job, endpoint, release);
  }

  /** An attempt from the `webhook-deliveries` queue. */
  async function attempt(job: AttemptJob, bullJob?: Job, token?: string): Promise<void> {
    const row = (await deps.deliveries.collection.findOne({ _id: job.deliveryId } as never, {
      projection: { url: 0, lastError: 0 },
    })) as AttemptRow | null;
    // The row's last attempt reaches the ledger before this attempt can count and replace it
    // (usually it is there already: a duplicate key). A failure fails the job, which is retried.
    if (row?.lastAttempt) await ledger.record(row.lastAttempt);
    if (row?.status !== 'PENDING' || row.cycle !== job.cycle || row.attempts !== job.attempt - 1) return;

    // One slow or dead partner must not hold every slot: when its own slots are all stuck,
    // the job steps aside (back to delayed, freeing this worker slot) instead of waiting here.
    for (;;) {
      const grant = await gate.acquire(row.organizationId);
      if (grant.kind === 'go') return sendNow(row, job, grant.release);
      if (bullJob && token) {
        await bullJob.moveToDelayed(now() + grant.delayMs, token);
        throw new DelayedError();
      }
      await new Promise((resolve) => setTimeout(resolve, grant.delayMs));
    }
  }

  async function firstAttempt(row: AttemptRow): Promise<void> {
    const job = { deliveryId: row._id, cycle: row.cycle, attempt: row.attempts + 1 };
    // A copy of the event found its row waiting in a later cycle: as in `attempt`.
    if (row.lastAttempt) await ledger.record(row.lastAttempt);
    const release = gate.tryAcquire(row.organizationId);
    if (release) return sendNow(row, job, release);
    const grant = await gate.acquire(row.organizationId);
    if (grant.kind === 'go') return sendNow(row, job, grant.release);
    // A slow partner: the attempt waits in the delayed queue, not in this process.
    await schedule(job, grant.delayMs);
  }

  /**
   * The first attempt of a row the consumer has just recorded (PENDING, attempts 0), in this
   * process. Resolves once the attempt is recorded or handed to the queue.
   */
  function first(row: AttemptRow): Promise<void> {
    const already = running.get(row._id);
    if (already) return already;
    const started = firstAttempt(row).finally(() => running.delete(row._id));
    running.set(row._id, started);
    return started;
  }

  return {
    attempt,
    first,
    schedule,
    /** Stops the gate, then resolves once the ledger writes in flight are done (each bounded by MongoDB's timeouts). */
    async close(): Promise<void> {
      gate.close();
      await Promise.all([...keeping]);
    },
  };
}

export type Deliverer = ReturnType<typeof createDeliverer>;
