import type { Model, QueryFilter, Schema } from 'mongoose';

type LeanFix = (doc: Record<string, unknown>) => void;

/** What a driver read needs of a model (any model of `T`, whatever its other type parameters). */
type LeanReadable<T> = Pick<Model<T>, 'collection' | 'schema' | 'db'>;

/** Each schema's lean-read fixes, in the order they were registered. */
const fixes = new WeakMap<Schema, LeanFix[]>();

/**
 * Registers what a lean read of a schema's documents must fix in what the driver gave back (a
 * lean read skips mongoose's casting: int64 money comes back as a number or a `Long`,
 * services/policy/src/int64.ts). Applied to every lean `find`, `findOne` and
 * `findOneAndUpdate` of the schema's models (mongoose post hooks) and to `findOneLean`'s reads
 * alike, so a document reads the same whichever way it was read.
 */
export function onLeanRead(schema: Schema, fix: LeanFix): void {
  const registered = fixes.get(schema);
  if (registered) registered.push(fix);
  else fixes.set(schema, [fix]);
  schema.post(['find', 'findOne', 'findOneAndUpdate'], (result: unknown) => {
    for (const doc of Array.isArray(result) ? result : [result]) {
      if (doc !== null && typeof doc === 'object') fix(doc as Record<string, unknown>);
    }
  });
}

/**
 * One document, read by the driver alone and fixed as a lean mongoose read would be: what a
 * read on a hot path uses. A mongoose query (building the query, casting the filter, merging
 * options, running hooks) cost 35 to 50 µs of CPU more per read than the driver's `findOne` on
 * the same filter, a sixth to a third of the read's client-side cost (docs/performance.md, "The
 * policy read without a mongoose query"). The filter is sent as given, not cast: callers give
 * values of the stored types (ids as the schema's `_id` type casts them, see `castId`).
 *
 * The read is the `find` command the driver's `findOne` sends (`limit: 1, singleBatch: true`),
 * run as a command: the answer is its first batch, with no cursor object around it. The
 * driver's cursor (its options merged, a cursor object set up, read and closed) cost the
 * policy service about 47 µs of CPU a read more (docs/performance.md, "The policy read as one
 * find command"). `singleBatch` makes the server close its cursor with the first batch (the
 * reply's cursor id is 0), so no read leaves a cursor behind for anyone to close.
 */
export async function findOneLean<T>(model: LeanReadable<T>, filter: QueryFilter<T>): Promise<T | null> {
  const db = model.db.db;
  const collection = model.collection.collectionName;
  if (!db) throw new Error(`findOneLean: the connection of ${collection} is not open`);
  const reply = await db.command({ find: collection, filter, limit: 1, singleBatch: true });
  const doc = (reply.cursor as { firstBatch: Record<string, unknown>[] }).firstBatch[0];
  if (doc === undefined) return null;
  for (const fix of fixes.get(model.schema) ?? []) fix(doc);
  return doc as T;
}

/**
 * An id as the model's `_id` path stores it, as a query would cast it (a string stays a string;
 * an ObjectId's hex becomes one; what the type cannot hold throws).
 */
export function castId<T>(model: LeanReadable<T>, id: unknown): unknown {
  const path = model.schema.path('_id') as unknown as { cast(value: unknown): unknown } | undefined;
  return path ? path.cast(id) : id;
}
