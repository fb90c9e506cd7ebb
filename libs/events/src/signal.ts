import type { Schema } from 'mongoose';

// The relay polls (relay.ts), but an entry should not wait a whole interval when this process
// has just written it. So the outbox write itself says so: `signalOutboxWrites` adds post-write
// hooks to the schema, and a write that set the pending flag, once MongoDB has acknowledged it,
// wakes every relay of this process that serves that collection and array, naming the documents
// when it can: the relay then reads those documents, not whichever are pending, so replicas of a
// service each relay their own writes instead of racing for the same ones. Nothing else has to
// remember to: no domain function, route or worker passes a "kick the relay" callback around.
// Writes made by another process are that process's relay's; a relay's poll takes what nobody
// relayed (relay.ts).

/** What identifies a collection across models: its database and its name. */
export interface SignalledCollection {
  readonly collectionName: string;
  readonly conn?: { readonly name?: string };
}

/**
 * Told which documents a write set pending: their `_id`s when the write named them (documents
 * saved or inserted, an update by `_id`), undefined when it could not tell (an update by any
 * other filter, `_id`s that are not strings).
 */
export type OutboxWriteListener = (ids: readonly string[] | undefined) => void;
type Listener = OutboxWriteListener;

/** Per process: `<database>/<collection>#<pending field>` → the relays waiting for it. */
const listeners = new Map<string, Set<Listener>>();

const keyOf = (collection: SignalledCollection, pendingField: string) =>
  `${collection.conn?.name ?? ''}/${collection.collectionName}#${pendingField}`;

/**
 * Calls `listener` after every write in this process that set `pendingField` on a document of
 * `collection`, with the documents' ids when the write named them. Answers a function that stops it.
 */
export function onOutboxWritten(
  collection: SignalledCollection,
  pendingField: string,
  listener: Listener,
): () => void {
  const key = keyOf(collection, pendingField);
  let set = listeners.get(key);
  if (!set) {
    set = new Set();
    listeners.set(key, set);
  }
  set.add(listener);
  return () => {
    set.delete(listener);
    if (set.size === 0 && listeners.get(key) === set) listeners.delete(key);
  };
}

/**
 * Wakes the relays waiting for `collection`'s `pendingField` (the hooks below call it), telling
 * them which documents, when the writer knows (`ids`; undefined: any of them).
 */
export function outboxWritten(
  collection: SignalledCollection,
  pendingField: string,
  ids?: readonly unknown[],
): void {
  const named = ids?.every((id) => typeof id === 'string') ? (ids as readonly string[]) : undefined;
  for (const listener of listeners.get(keyOf(collection, pendingField)) ?? []) listener(named);
}

/** The `_id`s an update's filter names: `{ _id: x }` or `{ _id: { $in: [...] } }`; else undefined. */
function idsOfFilter(filter: unknown): unknown[] | undefined {
  const id = (filter as { _id?: unknown } | null | undefined)?._id;
  if (typeof id === 'string') return [id];
  const inList = (id as { $in?: unknown } | null | undefined)?.$in;
  if (id && typeof id === 'object' && Object.keys(id).length === 1 && Array.isArray(inList)) return inList;
  return undefined;
}

/** Whether an update document (or pipeline) sets `field` to true. */
function setsPending(update: unknown, field: string): boolean {
  if (Array.isArray(update)) return update.some((stage) => setsPending(stage, field));
  if (typeof update !== 'object' || update === null) return false;
  const fields = update as Record<string, unknown>;
  if (fields[field] === true) return true;
  for (const operator of ['$set', '$addFields']) {
    const set = fields[operator] as Record<string, unknown> | undefined;
    if (set && set[field] === true) return true;
  }
  return false;
}

const QUERY_WRITES = [
  'updateOne',
  'updateMany',
  'findOneAndUpdate',
  'findOneAndReplace',
  'replaceOne',
] as const;

/**
 * Adds the hooks that signal a write of `pendingField` (`outboxPending`, `jobOutboxPending`) to
 * the schema: after an update that sets it, and after a document saved or inserted with it set.
 * Post hooks run only once the write succeeded, so a relay woken by one finds what it wrote.
 * (The relay's own bookkeeping goes through the raw driver: it never wakes itself.)
 */
export function signalOutboxWrites<S extends Schema>(schema: S, pendingField: string): S {
  for (const operation of QUERY_WRITES) {
    schema.post(
      operation,
      function (this: {
        model: { collection: SignalledCollection };
        getUpdate(): unknown;
        getFilter(): unknown;
      }) {
        if (setsPending(this.getUpdate(), pendingField)) {
          outboxWritten(this.model.collection, pendingField, idsOfFilter(this.getFilter()));
        }
      },
    );
  }
  schema.post('save', function (this: { collection: SignalledCollection; get(path: string): unknown }) {
    if (this.get(pendingField) === true) outboxWritten(this.collection, pendingField, [this.get('_id')]);
  });
  schema.post('insertMany', function (this: { collection: SignalledCollection }, docs: unknown) {
    const inserted = (Array.isArray(docs) ? docs : [docs]) as Array<{ get?(path: string): unknown } | null>;
    const pending = inserted.filter((doc) => doc?.get?.(pendingField) === true);
    if (pending.length > 0) {
      outboxWritten(
        this.collection,
        pendingField,
        pending.map((doc) => doc?.get?.('_id')),
      );
    }
  });
  return schema;
}
