import { Schema, type UpdateQuery } from 'mongoose';
import { EVENT_NAMES } from './catalog';
import type { EventEnvelope } from './envelope';
import { signalOutboxWrites } from './signal';

// Our MongoDB has no multi-document transactions, so an event is embedded in the document
// whose change caused it and written by the same single-document update: either both the
// change and the event are stored, or neither. The relay (relay.ts) then moves it to BullMQ.

/** The stored form of an envelope: the same fields, so the relay enqueues it unchanged. */
export const outboxEventSchema = new Schema(
  {
    id: { type: String, required: true },
    event: { type: String, required: true, enum: EVENT_NAMES },
    createdAt: { type: String, required: true },
    organizationId: { type: String, required: true },
    data: { type: Schema.Types.Mixed, required: true },
    /** The creating request's trace (`EventEnvelope.trace`); absent for events made outside one. */
    trace: { type: Schema.Types.Mixed, required: false },
  },
  // No `_id` per entry: the event id is the identity. `id: false` frees the `id` path from
  // mongoose's virtual. `minimize: false` keeps empty objects inside `data` (a `links: {}` is
  // part of what the partner receives).
  { _id: false, id: false, minimize: false },
);

/** A relayed entry's copy, kept for the retention window in case Redis loses its data (relay.ts). */
export interface KeptOutboxEntry<E = unknown> {
  id: string;
  relayedAt: Date;
  entry: E;
}

/** Fields `withOutbox` adds, for the service's own document interface. */
export interface OutboxFields {
  outbox: EventEnvelope[];
  outboxPending: boolean;
  /** Entries the relay could not validate, moved aside so they don't block the outbox. */
  outboxRejected?: unknown[];
  /** Events already relayed, kept for the retention window (written by the relay only). */
  outboxRelayed?: KeptOutboxEntry<EventEnvelope>[];
  /** The latest `relayedAt` among them. */
  outboxRelayedAt?: Date;
}

/** Adds the outbox to a service's schema (call before compiling the model). */
export function withOutbox<S extends Schema>(schema: S): S {
  schema.add({
    outbox: { type: [outboxEventSchema], default: [] },
    // Set by every write that appends an event; cleared by the relay only once the array is
    // empty. Lets the relay find pending documents without scanning every `outbox` array.
    outboxPending: { type: Boolean, default: false },
    outboxRejected: { type: [Schema.Types.Mixed], default: undefined },
    // Written by the relay only, with the raw driver: copies of relayed events, re-sent if Redis
    // loses its data, and pruned once older than the retention window.
    outboxRelayed: { type: [Schema.Types.Mixed], default: undefined },
    outboxRelayedAt: { type: Date, default: undefined },
  });
  // Serves the relay's `find({ outboxPending: true })`. Partial, so it holds only documents
  // with undelivered events (a handful at any moment), not every policy or payout ever made.
  schema.index({ outboxPending: 1 }, { partialFilterExpression: { outboxPending: true } });
  // Serves the relay's re-send pass after Redis lost its data, `find({ outboxRelayedAt: { $gte:
  // now - window } })`: a range over the last window of the index, however many documents relayed
  // something before. Partial, so documents that never had an event are not in it.
  schema.index({ outboxRelayedAt: 1 }, { partialFilterExpression: { outboxRelayedAt: { $exists: true } } });
  // Each write that records an event wakes this process's relay at once (signal.ts).
  return signalOutboxWrites(schema, 'outboxPending');
}

export interface OutboxUpdate {
  $set: { outboxPending: true };
  $push: { outbox: EventEnvelope };
}

/** The update fragment that records one event, to merge into the state change's update. */
export function outboxUpdate(event: EventEnvelope): OutboxUpdate {
  return { $set: { outboxPending: true }, $push: { outbox: event } };
}

/**
 * The caller's update plus the events it causes, as one update document:
 * `Model.findOneAndUpdate(filter, withOutboxEvents({ $set: { kybStatus: 'VERIFIED' } }, event))`.
 * Plain top-level fields are folded into `$set` (mongoose would treat them so anyway).
 */
export function withOutboxEvents<T>(
  update: UpdateQuery<NoInfer<T>>,
  ...events: [EventEnvelope, ...EventEnvelope[]]
): UpdateQuery<T> {
  const merged: Record<string, unknown> = {};
  const set: Record<string, unknown> = { ...(update.$set as Record<string, unknown> | undefined) };
  for (const [key, value] of Object.entries(update)) {
    if (key === '$set') continue;
    if (key.startsWith('$')) merged[key] = value;
    else set[key] = value;
  }
  const push = { ...(update.$push as Record<string, unknown> | undefined) };
  if ('outboxPending' in set || 'outbox' in push) {
    throw new Error('withOutboxEvents: the update already writes the outbox; pass all events here instead');
  }
  set.outboxPending = true;
  push.outbox = events.length === 1 ? events[0] : { $each: events };
  return { ...merged, $set: set, $push: push } as UpdateQuery<T>;
}

/** Outbox fields for a document that is created together with its events. */
export function outboxInsert(...events: EventEnvelope[]): Pick<OutboxFields, 'outbox' | 'outboxPending'> {
  return { outbox: events, outboxPending: events.length > 0 };
}
