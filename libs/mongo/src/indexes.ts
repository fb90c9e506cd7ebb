import { isDeepStrictEqual } from 'node:util';
import type { Connection, Model } from 'mongoose';

/**
 * Index migrations: what a service's schemas declare, created by its `migrate` command (a
 * Kubernetes Job before a rollout, docs/deploy.md) and verified by the service itself at start
 * in production, where it builds none (`autoIndex` off, libs/runtime/src/service.ts). Nothing
 * here ever drops an index: an index the schemas no longer declare, or one that exists with
 * other options, is reported for an operator to decide on.
 */

// biome-ignore lint/suspicious/noExplicitAny: any model of any document type; only its schema and collection are read.
export type IndexedModel = Model<any, any, any, any>;

/** The options that make two indexes on the same keys behave differently. */
const COMPARED_OPTIONS = [
  'unique',
  'sparse',
  'partialFilterExpression',
  'expireAfterSeconds',
  'collation',
] as const;

export interface DeclaredIndex {
  collection: string;
  /** The name MongoDB gives it (the declared one, or the keys joined as the driver does). */
  name: string;
  key: Record<string, unknown>;
  unique: boolean;
  /** Only the options of COMPARED_OPTIONS that the schema sets. */
  options: Record<string, unknown>;
}

/** How an index stands against the declaration: `collection.name (keys, unique)`. */
export function describeIndex(index: DeclaredIndex): string {
  const keys = Object.entries(index.key)
    .map(([field, order]) => `${field}: ${String(order)}`)
    .join(', ');
  return `${index.collection}.${index.name} {${keys}}${index.unique ? ' unique' : ''}`;
}

/** Every index the models' schemas declare (`_id`'s aside, which MongoDB always has). */
export function declaredIndexes(models: readonly IndexedModel[]): DeclaredIndex[] {
  return models.flatMap((model) =>
    model.schema.indexes().map(([key, declared]) => {
      const given = declared as Record<string, unknown>;
      const options = Object.fromEntries(
        COMPARED_OPTIONS.filter((option) => given[option] !== undefined && given[option] !== false).map(
          (option) => [option, given[option]],
        ),
      );
      return {
        collection: model.collection.collectionName,
        name: typeof given.name === 'string' ? given.name : defaultName(key),
        key: key as Record<string, unknown>,
        unique: given.unique === true,
        options,
      };
    }),
  );
}

/** The driver's default index name: each field and its order, joined by `_`. */
function defaultName(key: Record<string, unknown>): string {
  return Object.entries(key)
    .map(([field, order]) => `${field}_${String(order)}`)
    .join('_');
}

interface ExistingIndex {
  name: string;
  key: Record<string, unknown>;
  [option: string]: unknown;
}

async function existingIndexes(connection: Connection, collection: string): Promise<ExistingIndex[]> {
  try {
    return (await connection.collection(collection).listIndexes().toArray()) as ExistingIndex[];
  } catch (err) {
    // NamespaceNotFound: the collection does not exist yet, so it has no index.
    if ((err as { code?: number }).code === 26) return [];
    throw err;
  }
}

/** Same keys in the same order (the order is part of an index), and the same compared options. */
function matches(existing: ExistingIndex, declared: DeclaredIndex): boolean {
  if (!isDeepStrictEqual(Object.entries(existing.key), Object.entries(declared.key))) return false;
  return COMPARED_OPTIONS.every((option) => {
    const want = declared.options[option];
    const have = existing[option] === false ? undefined : existing[option];
    return isDeepStrictEqual(have, want);
  });
}

export interface IndexConflict {
  index: DeclaredIndex;
  /** Why it was neither found nor created (an index of that name or those keys with other options). */
  reason: string;
}

export interface IndexReport {
  /** Created by this run. */
  created: DeclaredIndex[];
  /** Already there with the declared keys and options. */
  present: DeclaredIndex[];
  /** Neither there as declared nor creatable: left as they are, for an operator (exit 1). */
  conflicts: IndexConflict[];
  /** Indexes in the collections that no schema declares: never dropped, only listed. */
  undeclared: { collection: string; name: string }[];
}

/**
 * Creates every declared index that is not there, one at a time (a build on a large collection
 * is the server's work; creating them together would only compete for it). Idempotent: a second
 * run creates nothing. Never drops: an index in the way (the same name or keys with other
 * options) is reported as a conflict and left alone.
 */
export async function migrateIndexes(
  connection: Connection,
  models: readonly IndexedModel[],
): Promise<IndexReport> {
  const report: IndexReport = { created: [], present: [], conflicts: [], undeclared: [] };
  const declared = declaredIndexes(models);
  for (const index of declared) {
    const existing = await existingIndexes(connection, index.collection);
    if (existing.some((found) => matches(found, index))) {
      report.present.push(index);
      continue;
    }
    const sameName = existing.find((found) => found.name === index.name);
    if (sameName) {
      report.conflicts.push({
        index,
        reason: `an index named ${index.name} exists with other keys or options`,
      });
      continue;
    }
    try {
      await connection
        .collection(index.collection)
        .createIndex(index.key as Record<string, 1 | -1>, { name: index.name, ...index.options });
      report.created.push(index);
    } catch (err) {
      report.conflicts.push({ index, reason: err instanceof Error ? err.message : String(err) });
    }
  }
  const collections = [...new Set(declared.map((index) => index.collection))];
  for (const collection of collections) {
    for (const found of await existingIndexes(connection, collection)) {
      const known =
        found.name === '_id_' ||
        declared.some((index) => index.collection === collection && index.name === found.name);
      if (!known) report.undeclared.push({ collection, name: found.name });
    }
  }
  return report;
}

/**
 * The declared unique indexes that are not there with their declared keys and options: what a
 * service in production must not serve without (a missing one would let duplicates in).
 */
export async function missingUniqueIndexes(
  connection: Connection,
  models: readonly IndexedModel[],
): Promise<DeclaredIndex[]> {
  const unique = declaredIndexes(models).filter((index) => index.unique);
  const byCollection = new Map<string, ExistingIndex[]>();
  const missing: DeclaredIndex[] = [];
  for (const index of unique) {
    let existing = byCollection.get(index.collection);
    if (!existing) {
      existing = await existingIndexes(connection, index.collection);
      byCollection.set(index.collection, existing);
    }
    if (!existing.some((found) => matches(found, index))) missing.push(index);
  }
  return missing;
}
