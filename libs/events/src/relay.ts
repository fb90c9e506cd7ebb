import { randomUUID } from 'node:crypto';
import type { Collection, mongo } from 'mongoose';
import { type EventEnvelope, eventEnvelopeSchema } from './envelope';
import { onOutboxWritten } from './signal';

/**
 * How a relay notices that Redis lost data (`Producer.swapRelayMarker` of `@parametric/queue`):
 * sets the relay's marker key to `value` (expiring after `ttlMs`) and returns what it held
 * before, null when absent, in one round trip on the connection the entries go through.
 */
export type SwapRelayMarker = (key: string, value: string, ttlMs: number) => Promise<string | null>;

/** What the relay needs from `createProducer('events', …)` of `@parametric/queue`. */
export interface EventProducer {
  /** Enqueues the events in one round trip, each under its own job id; rejects if it could not. */
  addBulk(jobs: readonly { payload: EventEnvelope; opts: { jobId: string } }[]): Promise<unknown>;
  /** Without it the relay cannot notice that Redis lost data, and never re-sends kept events. */
  swapRelayMarker?: SwapRelayMarker;
}

/**
 * How long a relayed entry is kept on its document (`<array>Relayed`), to be re-sent if Redis
 * loses its data: 15 minutes. It has to cover the time from the enqueue until the consumer has
 * recorded what the entry does in MongoDB, in normal operation: seconds, including BullMQ's own
 * retries of a failing job (5 attempts, about 30 s). Losses older than that are the consumers'
 * own reconcilers' business (the webhooks reconciler, the policy requeue sweep).
 */
export const OUTBOX_RETENTION_MS = 15 * 60_000;

/** pino-compatible (`logger.warn(obj, msg)`), so a service passes its own logger. */
export interface RelayLogger {
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface OutboxRelayOptions {
  /** A mongoose model whose schema went through `withOutbox`. */
  model: { readonly collection: Collection; readonly modelName: string };
  producer: EventProducer;
  intervalMs?: number;
  batchSize?: number;
  /**
   * An enqueue that has not settled by then counts as failed. Without it, a producer whose
   * Redis never connected waits forever (BullMQ waits for "ready"), and so would `stop()`.
   */
  enqueueTimeoutMs?: number;
  /**
   * How long a relayed entry's copy is kept for re-sending after Redis lost its data
   * (`OUTBOX_RETENTION_MS`, 15 min, by default). Must exceed how long a consumer can take to
   * pick a job up and record its effect in normal operation.
   */
  retentionMs?: number;
  /** The clock for `relayedAt` and the window (tests move it). */
  now?: () => number;
  logger?: RelayLogger;
}

export interface OutboxRelay {
  /**
   * Run a pass soon. A write in this process that records an entry does it by itself
   * (signal.ts); a service calls it once at start-up, for what a previous run left behind.
   */
  kick(): void;
  /** Run passes until none finds a pending document; rejects if a pass fails. */
  drain(): Promise<void>;
  /** No new passes; resolves once the running one (if any) has finished. */
  stop(): Promise<void>;
}

/** A document as the driver returns it: only `_id` is assumed; the arrays are checked. */
type StoredDocument = { _id: mongo.ObjectId | string } & Record<string, unknown>;

const consoleLogger: RelayLogger = {
  warn: (obj, msg) => console.warn(msg, obj),
  error: (obj, msg) => console.error(msg, obj),
};

/** What one relayed entry is: its id in the array, and the job that sends it (`spec.send`). */
export type RelayedEntry<J> = { ok: true; id: string; job: J } | { ok: false; issues: unknown };

/** Where a document keeps its entries, how one entry is read, and how entries are sent. */
export interface DocumentRelaySpec<J> {
  /** The array of entries, e.g. `outbox`. Each entry has a unique string `id`. */
  arrayField: string;
  /** Set by every write that appends; cleared by the relay once the array is empty. */
  pendingField: string;
  /** Where entries that cannot be parsed are moved, kept for ops. */
  rejectedField: string;
  /**
   * Where relayed entries are kept for the retention window, as `{ id, relayedAt, entry }`,
   * e.g. `outboxRelayed`: re-sent if Redis loses its data.
   */
  keptField: string;
  /** The latest `relayedAt` of the document's kept entries (indexed: the re-send pass's query). */
  keptAtField: string;
  /**
   * Swaps the relay's marker in every Redis the entries go to, resolving with each previous
   * value (see `SwapRelayMarker`). Absent: Redis losing its data goes unnoticed.
   */
  swapMarker?: (key: string, value: string, ttlMs: number) => Promise<Array<string | null>>;
  /** What the log calls the entries ("event", "job"). */
  entryName: string;
  parse(entry: unknown): RelayedEntry<J>;
  /**
   * Enqueues the jobs, each under its entry's id (a re-sent one is a duplicate the queue
   * ignores), in as few round trips as it can; rejects unless every one of them was enqueued.
   */
  send(jobs: readonly J[]): Promise<unknown>;
}

export interface DocumentRelayOptions<J> extends Omit<OutboxRelayOptions, 'producer'> {
  spec: DocumentRelaySpec<J>;
}

/**
 * Moves outbox events to the queue, at least once. Each event is enqueued with
 * `jobId = event.id` and only then moved from its document's outbox to `outboxRelayed`, so a
 * crash or a Redis outage in between leaves it in the outbox and the next pass re-enqueues it
 * under the same id, which BullMQ ignores as a duplicate while it still holds the first job.
 * The copy in `outboxRelayed` is kept for the retention window: if Redis loses its data (back
 * empty after a crash, or without the last second of its append-only file), the relay notices
 * (its marker key) and enqueues every kept copy again, under the same ids.
 */
export function startOutboxRelay(options: OutboxRelayOptions): OutboxRelay {
  const { producer, ...rest } = options;
  const swap = producer.swapRelayMarker?.bind(producer);
  return startDocumentRelay({
    ...rest,
    spec: {
      arrayField: 'outbox',
      pendingField: 'outboxPending',
      rejectedField: 'outboxRejected',
      keptField: 'outboxRelayed',
      keptAtField: 'outboxRelayedAt',
      entryName: 'event',
      swapMarker: swap && (async (key, value, ttlMs) => [await swap(key, value, ttlMs)]),
      parse(entry) {
        const parsed = eventEnvelopeSchema.safeParse(entry);
        if (!parsed.success) return { ok: false, issues: parsed.error.issues };
        return { ok: true, id: parsed.data.id, job: parsed.data };
      },
      send: (events) =>
        producer.addBulk(events.map((event) => ({ payload: event, opts: { jobId: event.id } }))),
    },
  });
}

/**
 * The relay behind `startOutboxRelay`, for any array of entries written in the same
 * single-document update as the change that caused them (events, or jobs for other services).
 */
export function startDocumentRelay<J>(options: DocumentRelayOptions<J>): OutboxRelay {
  const { model, spec, intervalMs = 1000, batchSize = 100, enqueueTimeoutMs = 10_000 } = options;
  const { arrayField, pendingField, rejectedField, keptField, keptAtField, entryName } = spec;
  const retentionMs = options.retentionMs ?? OUTBOX_RETENTION_MS;
  const now = options.now ?? Date.now;
  const logger = options.logger ?? consoleLogger;
  // The raw driver collection, not the model: relay bookkeeping must not bump the document's
  // `updatedAt`, run the service's middleware, or be reshaped by mongoose casting.
  const collection = model.collection as unknown as mongo.Collection<StoredDocument>;

  type Parsed = Extract<RelayedEntry<J>, { ok: true }>;
  /** Enqueues the entries together (one round trip per queue); rejects unless all of them went. */
  async function send(parsed: readonly Parsed[]): Promise<void> {
    if (parsed.length === 0) return;
    try {
      await withTimeout(spec.send(parsed.map((p) => p.job)), enqueueTimeoutMs);
    } catch (cause) {
      const first = (parsed[0] as Parsed).id;
      const more = parsed.length > 1 ? ` and ${parsed.length - 1} more` : '';
      throw new Error(`outbox relay: could not enqueue ${entryName} ${first}${more} (${model.modelName})`, {
        cause,
      });
    }
  }

  /** Clears a document's flag once its array is empty (`<array>.0` absent: empty or missing). */
  const clearFlag = (doc: StoredDocument): mongo.AnyBulkWriteOperation<StoredDocument> => ({
    updateOne: {
      filter: { _id: doc._id, [`${arrayField}.0`]: { $exists: false } },
      update: { $set: { [pendingField]: false } } as never,
    },
  });

  /**
   * What a pass does to one document it read: its valid entries to enqueue, the updates that
   * move them (and its invalid entries) out of the array, and the updates to write instead of
   * the last one should it find the array changed since the read.
   */
  function planDocument(doc: StoredDocument): {
    parsed: Parsed[];
    /** Each changes the document unless the array changed since the read. */
    updates: mongo.AnyBulkWriteOperation<StoredDocument>[];
    /** The general move, then the flag: what an array changed since the read needs. */
    fallback: mongo.AnyBulkWriteOperation<StoredDocument>[];
    /** To log once the updates are written. */
    rejected: { documentId: StoredDocument['_id']; entry: unknown; issues: unknown }[];
  } {
    const stored = doc[arrayField];
    const entries = Array.isArray(stored) ? (stored as unknown[]) : [];
    const parsed: Parsed[] = [];
    const relayed: unknown[] = [];
    const rejected: { documentId: StoredDocument['_id']; entry: unknown; issues: unknown }[] = [];
    for (const entry of entries) {
      const result = spec.parse(entry);
      if (result.ok) {
        parsed.push(result);
        relayed.push(entry);
        continue;
      }
      rejected.push({ documentId: doc._id, entry, issues: result.issues });
    }
    const updates: mongo.AnyBulkWriteOperation<StoredDocument>[] = [];
    if (rejected.length > 0) {
      const invalid = rejected.map((r) => r.entry);
      // Retrying cannot fix them, and leaving them would keep the document pending forever.
      // Moved aside in one update, so they are kept for ops, never silently dropped. Pulled by
      // their whole value: an entry without a usable `id` must not match (and drop) others.
      updates.push({
        updateOne: {
          filter: { _id: doc._id },
          update: {
            $pull: { [arrayField]: { $in: invalid } },
            $push: { [rejectedField]: { $each: invalid } },
          } as never,
        },
      });
    }
    if (parsed.length === 0) {
      updates.push(clearFlag(doc));
      return { parsed, updates, fallback: [clearFlag(doc)], rejected };
    }
    const ids = [...new Set(parsed.map((p) => p.id))];
    const relayedAt = new Date(now());
    const cutoff = new Date(relayedAt.getTime() - retentionMs);
    const copies = parsed.map((p, i) => ({ id: p.id, relayedAt, entry: relayed[i] }));
    // Copies older than the window go first (so the kept array stays bounded): only when the
    // read found one, which a document relayed once (a determination) never has.
    if (hasExpiredCopy(doc[keptField], cutoff)) {
      updates.push({
        updateOne: {
          filter: { _id: doc._id },
          update: { $pull: { [keptField]: { relayedAt: { $lt: cutoff } } } } as never,
        },
      });
    }
    // The entries leave the array and their copies are kept, stamped, for the window. Plain
    // update operators, not a pipeline: MongoDB applies them without evaluating expressions
    // against the document, which the drought day measured as the embedded server's largest
    // cost (docs/performance.md, "Drought day: cheaper MongoDB writes per determination").
    const keep = {
      $push: { [keptField]: { $each: copies } },
      $max: { [keptAtField]: relayedAt },
    };
    // Usually the array holds exactly what was read: one update empties it and clears the flag.
    // Anything appended since (its writer set the flag) or moved by another replica's relay
    // (which kept its copy) makes it match nothing, and the pass writes `fallback` instead.
    updates.push({
      updateOne: {
        filter: { _id: doc._id, [arrayField]: { $size: parsed.length }, [`${arrayField}.id`]: { $all: ids } },
        update: { ...keep, $set: { [arrayField]: [], [pendingField]: false } } as never,
      },
    });
    // Moves the entries only if every one of them is still there (one moved by another relay has
    // its copy kept already: then nothing changes, they stay, the flag stays set, and the next
    // pass moves them under the same ids); then clears the flag if the array is empty by then,
    // so an entry appended after our read keeps it set and the next pass finds it.
    const fallback: mongo.AnyBulkWriteOperation<StoredDocument>[] = [
      {
        updateOne: {
          filter: { _id: doc._id, [`${arrayField}.id`]: { $all: ids } },
          update: { ...keep, $pull: { [arrayField]: { id: { $in: ids } } } } as never,
        },
      },
      clearFlag(doc),
    ];
    return { parsed, updates, fallback, rejected };
  }

  /** Enqueues every copy kept within the window again, under its own id; resolves with the count. */
  async function resendKept(): Promise<number> {
    const cutoff = new Date(now() - retentionMs);
    // Served by the index `withOutbox` / `withJobOutbox` declare on `<array>RelayedAt`: only
    // documents that relayed something within the window.
    const cursor = collection.find({ [keptAtField]: { $gte: cutoff } }, { projection: { [keptField]: 1 } });
    let sent = 0;
    let chunk: Parsed[] = [];
    for await (const doc of cursor) {
      const kept = doc[keptField];
      for (const copy of Array.isArray(kept) ? (kept as unknown[]) : []) {
        const { relayedAt, entry } = (copy ?? {}) as { relayedAt?: unknown; entry?: unknown };
        if (!(relayedAt instanceof Date) || relayedAt < cutoff) continue;
        const parsed = spec.parse(entry);
        // It parsed when it was relayed; a copy damaged since cannot be sent, only reported.
        if (!parsed.ok) {
          logger.error(
            { model: model.modelName, documentId: doc._id, entry, issues: parsed.issues },
            `outbox relay: kept ${entryName} cannot be re-sent`,
          );
          continue;
        }
        chunk.push(parsed);
        if (chunk.length >= batchSize) {
          await send(chunk);
          sent += chunk.length;
          chunk = [];
        }
      }
    }
    await send(chunk);
    return sent + chunk.length;
  }

  // Noticing that Redis lost data. After each pass's enqueues the relay swaps its own marker key
  // (this relay instance's, in every Redis it sends to) for a new value and gets the previous
  // one back: one round trip a pass. If that is not the value it last wrote, Redis lost writes
  // made after it (emptied, replaced, restarted without the last second of its append-only
  // file: the enqueues come before the marker in its log, so losing them loses the marker too)
  // and every copy kept within the window is enqueued again. A relay that has not written a
  // marker yet (just started) cannot know what its predecessor's Redis kept, so its first pass
  // re-sends too; BullMQ ignores the ids it still holds.
  const markerKey = `${model.modelName}:${arrayField}:${randomUUID()}`;
  let markerSeq = 0;
  /**
   * The marker value this relay last wrote, once Redis is known to hold everything relayed up to
   * it; null: unknown (not written yet, a swap not acknowledged, re-sends not finished), so the
   * next check re-sends.
   */
  let markerValue: string | null = null;
  let markerConfirmed = false;

  type Swap = NonNullable<DocumentRelaySpec<J>['swapMarker']>;
  /** Writes a new marker value; `intact` when the marker held `expected` (and it was not null). */
  async function swapMarker(
    swap: Swap,
    expected: string | null,
  ): Promise<{ value: string; intact: boolean }> {
    const value = `${++markerSeq}:${now()}`;
    markerValue = null;
    const previous = await withTimeout(swap(markerKey, value, retentionMs), enqueueTimeoutMs);
    return { value, intact: expected !== null && previous.every((p) => p === expected) };
  }

  async function checkRedisKept(): Promise<void> {
    const swap = spec.swapMarker;
    if (!swap) return;
    const check = await swapMarker(swap, markerValue);
    if (check.intact) {
      markerValue = check.value;
      return;
    }
    // A relay's first check re-sends as a matter of course: not worth a warning.
    const startup = !markerConfirmed;
    if (!startup) {
      logger.warn(
        { model: model.modelName },
        `outbox relay: Redis may have lost data (relay marker gone, changed or unacknowledged); re-sending the ${entryName}s kept for ${Math.round(retentionMs / 1000)} s`,
      );
    }
    // Should a re-send fail, `markerValue` stays null and the next pass re-sends them all again.
    const resent = await resendKept();
    // Marked again after the re-sends: should Redis lose them too, this swap or the next notices.
    const after = await swapMarker(swap, check.value);
    if (after.intact) {
      markerValue = after.value;
      markerConfirmed = true;
    }
    if (!startup) {
      logger.warn(
        { model: model.modelName, resent, intact: after.intact },
        `outbox relay: ${resent} kept ${entryName}s enqueued again`,
      );
    }
  }

  /**
   * One pass over up to `batchSize` pending documents; resolves with the number it found.
   * Every valid entry they hold is enqueued first, together, and only then moved out of the
   * outbox: a failed enqueue stops the pass with every document as it was, still pending.
   */
  async function pass(): Promise<number> {
    const docs = await collection
      .find(
        { [pendingField]: true },
        // The kept copies' stamps only (whether one has expired), not their entries.
        { projection: { [arrayField]: 1, [`${keptField}.relayedAt`]: 1 } },
      )
      .limit(batchSize)
      .toArray();
    const plans = docs.map(planDocument);
    await send(plans.flatMap((plan) => plan.parsed));
    // One ordered bulk write, so one round trip whose updates the server applies in this order.
    // Each of them changes its document unless another writer changed the array since the read;
    // then (fewer changed than written) the general moves and flags follow for every document:
    // on one already moved they match nothing, or set a flag that is already clear.
    const updates = plans.flatMap((plan) => plan.updates);
    if (updates.length > 0) {
      const written = await collection.bulkWrite(updates, { ordered: true });
      if (written.modifiedCount < updates.length) {
        await collection.bulkWrite(
          plans.flatMap((plan) => plan.fallback),
          { ordered: true },
        );
      }
    }
    for (const { documentId, entry, issues } of plans.flatMap((plan) => plan.rejected)) {
      logger.error(
        { model: model.modelName, documentId, entry, issues },
        `outbox relay: invalid ${entryName} moved to ${rejectedField}`,
      );
    }
    await checkRedisKept();
    return docs.length;
  }

  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  // Passes run one after another on this chain. `queued` is a pass that has not started yet:
  // it will see everything a new request would, so requests share it instead of piling up.
  let chain: Promise<unknown> = Promise.resolve();
  let queued: Promise<number> | undefined;

  function requestPass(): Promise<number> {
    if (queued) return queued;
    const next = chain.then(() => {
      queued = undefined;
      return stopped ? 0 : pass();
    });
    queued = next;
    chain = next.catch(() => undefined);
    return next;
  }

  function schedule(delayMs: number): void {
    if (stopped) return;
    clearTimeout(timer);
    timer = setTimeout(onTimer, delayMs);
    // The relay alone should not keep a process alive that has nothing else to do.
    timer.unref();
  }

  /**
   * Passes until one finds less than a full batch: a full one most likely left more behind,
   * which should not wait for the next write's wake-up or the interval.
   */
  async function runPasses(): Promise<void> {
    while (!stopped && (await requestPass()) >= batchSize) {
      // Next batch.
    }
  }

  async function onTimer(): Promise<void> {
    timer = undefined;
    try {
      await runPasses();
    } catch (err) {
      logPassFailure(err);
    } finally {
      schedule(intervalMs);
    }
  }

  function logPassFailure(err: unknown): void {
    logger.warn(
      { err, model: model.modelName },
      `outbox relay: pass failed; pending ${entryName}s stay in the outbox for the next pass`,
    );
  }

  // The first pass waits one interval like every other: a service that wants leftovers from
  // before a restart relayed at once calls `kick()` after starting the relay.
  schedule(intervalMs);

  const kick = () => {
    if (stopped) return;
    runPasses().catch(logPassFailure);
  };
  // A write of this process that records an entry wakes the relay at once; the poll above is
  // the safety net (writes of other processes, a pass that failed).
  const unsubscribe = onOutboxWritten(model.collection, pendingField, kick);

  return {
    kick,
    async drain() {
      if (stopped) throw new Error('outbox relay is stopped');
      while ((await requestPass()) > 0) {
        // Keep going: a full batch may leave more behind, and a document that was appended to
        // during the pass is still pending.
      }
    },
    async stop() {
      stopped = true;
      unsubscribe();
      clearTimeout(timer);
      timer = undefined;
      await chain;
    },
  };
}

/** Whether a document's kept copies (`<array>Relayed`, as read) hold one relayed before `cutoff`. */
function hasExpiredCopy(kept: unknown, cutoff: Date): boolean {
  if (!Array.isArray(kept)) return false;
  return kept.some((copy) => {
    const relayedAt = (copy as { relayedAt?: unknown } | null)?.relayedAt;
    return relayedAt instanceof Date && relayedAt < cutoff;
  });
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timeout: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timeout = setTimeout(() => reject(new Error(`enqueue did not settle within ${ms} ms`)), ms);
  });
  // A late rejection after the timeout won is expected (Redis still down); nothing awaits it.
  promise.catch(() => undefined);
  return Promise.race([promise, expired]).finally(() => clearTimeout(timeout));
}
