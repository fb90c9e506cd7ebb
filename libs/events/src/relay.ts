import type { Collection, mongo } from 'mongoose';
import { type EventEnvelope, eventEnvelopeSchema } from './envelope';

/** What the relay needs from `createProducer('events', …)` of `@parametric/queue`. */
export interface EventProducer {
  add(event: EventEnvelope, opts: { jobId: string }): Promise<unknown>;
}

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
  logger?: RelayLogger;
}

export interface OutboxRelay {
  /** Run a pass soon (call right after a write that recorded an event). */
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

/** What one relayed entry is: its id in the array, and how to send it. */
export type RelayedEntry =
  | { ok: true; id: string; send(): Promise<unknown> }
  | { ok: false; issues: unknown };

/** Where a document keeps its entries, and how one entry is read and sent. */
export interface DocumentRelaySpec {
  /** The array of entries, e.g. `outbox`. Each entry has a unique string `id`. */
  arrayField: string;
  /** Set by every write that appends; cleared by the relay once the array is empty. */
  pendingField: string;
  /** Where entries that cannot be parsed are moved, kept for ops. */
  rejectedField: string;
  /** What the log calls the entries ("event", "job"). */
  entryName: string;
  parse(entry: unknown): RelayedEntry;
}

export interface DocumentRelayOptions extends Omit<OutboxRelayOptions, 'producer'> {
  spec: DocumentRelaySpec;
}

/**
 * Moves outbox events to the queue, at least once. Each event is enqueued with
 * `jobId = event.id` and only then pulled from its document, so a crash or a Redis outage in
 * between leaves it in the outbox and the next pass re-enqueues it under the same id, which
 * BullMQ ignores as a duplicate while it still holds the first job.
 */
export function startOutboxRelay(options: OutboxRelayOptions): OutboxRelay {
  const { producer, ...rest } = options;
  return startDocumentRelay({
    ...rest,
    spec: {
      arrayField: 'outbox',
      pendingField: 'outboxPending',
      rejectedField: 'outboxRejected',
      entryName: 'event',
      parse(entry) {
        const parsed = eventEnvelopeSchema.safeParse(entry);
        if (!parsed.success) return { ok: false, issues: parsed.error.issues };
        const event = parsed.data;
        return { ok: true, id: event.id, send: () => producer.add(event, { jobId: event.id }) };
      },
    },
  });
}

/**
 * The relay behind `startOutboxRelay`, for any array of entries written in the same
 * single-document update as the change that caused them (events, or jobs for other services).
 */
export function startDocumentRelay(options: DocumentRelayOptions): OutboxRelay {
  const { model, spec, intervalMs = 1000, batchSize = 100, enqueueTimeoutMs = 10_000 } = options;
  const { arrayField, pendingField, rejectedField, entryName } = spec;
  const logger = options.logger ?? consoleLogger;
  // The raw driver collection, not the model: relay bookkeeping must not bump the document's
  // `updatedAt`, run the service's middleware, or be reshaped by mongoose casting.
  const collection = model.collection as unknown as mongo.Collection<StoredDocument>;

  async function relayDocument(doc: StoredDocument): Promise<void> {
    const stored = doc[arrayField];
    const entries = Array.isArray(stored) ? stored : [];
    for (const entry of entries) {
      const parsed = spec.parse(entry);
      if (!parsed.ok) {
        // Retrying cannot fix it, and leaving it would keep the document pending forever.
        // Moved aside in one update, so it is kept for ops, never silently dropped. Pulled by
        // its whole value: an entry without a usable `id` must not match (and drop) others.
        await collection.updateOne({ _id: doc._id }, {
          $pull: { [arrayField]: entry },
          $push: { [rejectedField]: entry },
        } as never);
        logger.error(
          { model: model.modelName, documentId: doc._id, entry, issues: parsed.issues },
          `outbox relay: invalid ${entryName} moved to ${rejectedField}`,
        );
        continue;
      }
      try {
        await withTimeout(parsed.send(), enqueueTimeoutMs);
      } catch (cause) {
        throw new Error(
          `outbox relay: could not enqueue ${entryName} ${parsed.id} (${model.modelName} ${doc._id})`,
          { cause },
        );
      }
      await collection.updateOne({ _id: doc._id }, { $pull: { [arrayField]: { id: parsed.id } } } as never);
    }
    // Conditional, so an entry appended after our read keeps the flag set and the next pass
    // finds it. `<array>.0` absent covers both an empty and a missing array.
    await collection.updateOne({ _id: doc._id, [`${arrayField}.0`]: { $exists: false } }, {
      $set: { [pendingField]: false },
    } as never);
  }

  /** One pass; resolves with the number of pending documents it found. */
  async function pass(): Promise<number> {
    const docs = await collection
      .find({ [pendingField]: true }, { projection: { [arrayField]: 1 } })
      .limit(batchSize)
      .toArray();
    // Stop at the first enqueue failure: Redis is most likely down, and hammering it with the
    // rest of the batch would only produce more of the same error.
    for (const doc of docs) await relayDocument(doc);
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

  async function onTimer(): Promise<void> {
    timer = undefined;
    try {
      await requestPass();
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

  return {
    kick() {
      if (stopped) return;
      requestPass().catch(logPassFailure);
    },
    async drain() {
      if (stopped) throw new Error('outbox relay is stopped');
      while ((await requestPass()) > 0) {
        // Keep going: a full batch may leave more behind, and a document that was appended to
        // during the pass is still pending.
      }
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      timer = undefined;
      await chain;
    },
  };
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
