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

  // Which documents a pass reads. Replicas of a service each run this relay on the same
  // collection; were every pass to read whichever documents are pending, two replicas would read
  // the same ones (the first `batchSize` in the collection's order) and both enqueue their
  // entries: no entry is lost or doubled (the queue keeps one job per id, the fallback updates
  // keep one copy), but the second enqueue and its updates are wasted work, measured at about
  // one job added twice for every three entries on a drought day with two replicas
  // (docs/performance.md, "Replicas against their design floor"). So:
  // - a write of this process names its documents (signal.ts), and the pass it wakes reads
  //   those (`written`): each replica relays what it wrote;
  // - the poll relays only what nobody is relaying (`stale`): documents it found pending on its
  //   previous tick too, an interval ago (a writer that died, a pass that failed, a write that
  //   came from a process without this relay). Should they fill a batch, a backlog is waiting
  //   and the relay takes any pending documents until it is gone;
  // - `kick()` (leftovers of a previous run, at start-up), `drain()`, and a write that could not
  //   name its documents read any pending ones (`any`), as every pass did before.
  type PassKind = 'written' | 'stale' | 'any';
  /** Ids this process wrote pending and has not yet relayed, oldest first. */
  const written = new Set<string>();
  /** A write that named no documents (or more than `writtenCap` wait): the next woken pass reads any. */
  let anyWritten = false;
  /** Past this many ids waiting (Redis down, writes going on), the relay forgets them and reads any. */
  const writtenCap = batchSize * 100;
  /** The pending documents the last poll found, by id: pending again at the next, nobody relayed them. */
  let seenByPoll = new Set<string>();

  /** What a pass reads: the filter, and what to do when it fails (the ids it took go back). */
  function selection(kind: PassKind): { filter: Record<string, unknown>; taken: string[] } | undefined {
    if (kind === 'any') return { filter: { [pendingField]: true }, taken: [] };
    if (kind === 'written') {
      if (anyWritten) {
        anyWritten = false;
        return { filter: { [pendingField]: true }, taken: [] };
      }
      const taken = [...written].slice(0, batchSize);
      for (const id of taken) written.delete(id);
      return taken.length > 0 ? { filter: { _id: { $in: taken }, [pendingField]: true }, taken } : undefined;
    }
    return undefined;
  }

  /**
   * One pass over up to `batchSize` pending documents of its kind; resolves with the number it
   * found. Every valid entry they hold is enqueued first, together, and only then moved out of
   * the outbox: a failed enqueue stops the pass with every document as it was, still pending.
   */
  async function pass(kind: PassKind): Promise<number> {
    if (kind === 'stale') return stalePass();
    const chosen = selection(kind);
    if (!chosen) return 0;
    try {
      return await relayDocuments(chosen.filter);
    } catch (err) {
      // Still pending: the next woken pass or the poll tries them again.
      if (chosen.taken.length > 0) noteWritten(chosen.taken);
      else if (kind === 'written') anyWritten = true;
      throw err;
    }
  }

  /** The poll: relays what was pending at its previous tick and still is; resolves with that count. */
  async function stalePass(): Promise<number> {
    const head = await collection
      .find({ [pendingField]: true }, { projection: { _id: 1 } })
      .limit(batchSize)
      .toArray();
    const ids = head.map((doc) => doc._id).filter((id): id is string => typeof id === 'string');
    // Not string ids: this relay cannot tell documents apart, and relays any pending ones.
    if (ids.length < head.length) return relayDocuments({ [pendingField]: true });
    const stale = ids.filter((id) => seenByPoll.has(id));
    seenByPoll = new Set(ids.filter((id) => !seenByPoll.has(id)));
    if (stale.length > 0) return relayDocuments({ _id: { $in: stale }, [pendingField]: true });
    // Nothing to relay, but Redis may have lost what was: an idle relay still checks every tick.
    await checkRedisKept();
    return 0;
  }

  /** Remembers ids this process wrote pending (signal.ts), bounded by `writtenCap`. */
  function noteWritten(ids: readonly string[] | undefined): void {
    if (!ids) {
      anyWritten = true;
      return;
    }
    for (const id of ids) written.add(id);
    if (written.size > writtenCap) {
      written.clear();
      anyWritten = true;
    }
  }

  /** Relays up to `batchSize` documents matching `filter`; resolves with the number it found. */
  async function relayDocuments(filter: Record<string, unknown>): Promise<number> {
    const docs = await collection
      .find(
        filter,
        // The kept copies' stamps only (whether one has expired), not their entries.
        { projection: { [arrayField]: 1, [`${keptField}.relayedAt`]: 1 } },
      )
      .limit(batchSize)
      .toArray();
    // Relayed now, whoever wrote them: a woken pass need not read them again.
    for (const doc of docs) if (typeof doc._id === 'string') written.delete(doc._id);
    const plans = docs.map(planDocument);
    await send(plans.flatMap((plan) => plan.parsed));
    // One ordered bulk write, so one round trip whose updates the server applies in this order.
    // Each of them changes its document unless another writer changed the array since the read;
    // then (fewer changed than written) the general moves and flags follow for every document:
    // on one already moved they match nothing, or set a flag that is already clear.
    const updates = plans.flatMap((plan) => plan.updates);
    if (updates.length > 0) {
      const result = await collection.bulkWrite(updates, { ordered: true });
      if (result.modifiedCount < updates.length) {
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
  // it will see everything a new request of its kind would, so those share it instead of piling up.
  let chain: Promise<unknown> = Promise.resolve();
  let queued: { kind: PassKind; pass: Promise<number> } | undefined;

  function requestPass(kind: PassKind): Promise<number> {
    if (queued?.kind === kind) return queued.pass;
    const next = chain.then(() => {
      if (queued?.pass === next) queued = undefined;
      return stopped ? 0 : pass(kind);
    });
    queued = { kind, pass: next };
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

  /** Whether woken passes have documents of this process's writes left to read. */
  const writtenWaiting = () => anyWritten || written.size > 0;

  /**
   * Passes of `kind` until there is nothing more of it: for `written`, no id left; for `any`, a
   * pass that found less than a full batch (a full one most likely left more behind, which
   * should not wait for the next write's wake-up or the interval). A poll that found a full batch
   * nobody relayed goes on as `any`.
   */
  async function runPasses(kind: PassKind): Promise<void> {
    let next: PassKind | undefined = kind;
    while (!stopped && next) {
      const found = await requestPass(next);
      if (next === 'written') next = writtenWaiting() ? 'written' : undefined;
      else next = found >= batchSize ? 'any' : undefined;
    }
  }

  async function onTimer(): Promise<void> {
    timer = undefined;
    try {
      // What a failed pass left of this process's writes, then what nobody relayed.
      if (writtenWaiting()) await runPasses('written');
      await runPasses('stale');
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

  // A write of this process that records an entry wakes the relay at once, naming its documents;
  // the poll above is the safety net (writes of other processes nobody relays, a pass that failed).
  const unsubscribe = onOutboxWritten(model.collection, pendingField, (ids) => {
    if (stopped) return;
    noteWritten(ids);
    runPasses('written').catch(logPassFailure);
  });

  return {
    kick() {
      if (stopped) return;
      runPasses('any').catch(logPassFailure);
    },
    async drain() {
      if (stopped) throw new Error('outbox relay is stopped');
      while ((await requestPass('any')) > 0) {
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
