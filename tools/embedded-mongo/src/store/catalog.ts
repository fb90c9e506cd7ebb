import type { UUID } from 'bson';
import { MongoCommandError } from '../errors';
import { Collection } from './collection';
import type { Mutation, MutationSink } from './mutations';
import type { Doc } from './values';

const INVALID_DB_CHARS = /[/\\. "$*<>:|?\0]/;

export function validateDatabaseName(db: unknown): string {
  if (typeof db !== 'string' || db.length === 0 || db.length >= 64 || INVALID_DB_CHARS.test(db)) {
    throw new MongoCommandError('InvalidNamespace', `Invalid database name: '${String(db)}'`);
  }
  return db;
}

export function validateCollectionName(db: string, name: unknown): string {
  if (typeof name !== 'string') {
    throw new MongoCommandError('InvalidNamespace', `collection name has invalid type ${typeof name}`);
  }
  if (name.length === 0 || name.includes('$') || name.includes('\0') || name.startsWith('.')) {
    throw new MongoCommandError('InvalidNamespace', `Invalid namespace specified '${db}.${name}'`);
  }
  if (db.length + 1 + name.length > 255) {
    throw new MongoCommandError(
      'InvalidNamespace',
      `Fully qualified namespace is too long. Namespace: ${db}.${name}`,
    );
  }
  return name;
}

/** Databases and their collections; a database exists while it holds a collection. */
export class Catalog {
  private readonly dbs = new Map<string, Map<string, Collection>>();
  /** Receives every change once it has succeeded; set when the server persists its data. */
  sink?: MutationSink;
  /** While above 0, a compound change is running and reports itself once, as a whole. */
  private muted = 0;
  private readonly emit = (mutation: Mutation): void => {
    if (this.sink && this.muted === 0) this.sink(mutation);
  };

  private quietly<T>(run: () => T): T {
    this.muted++;
    try {
      return run();
    } finally {
      this.muted--;
    }
  }

  get(db: string, name: string): Collection | undefined {
    return this.dbs.get(db)?.get(name);
  }

  /** The collection, created implicitly as a write to a missing collection does. */
  getOrCreate(db: string, name: string): { collection: Collection; created: boolean } {
    const existing = this.get(db, name);
    if (existing) return { collection: existing, created: false };
    return { collection: this.create(db, name), created: true };
  }

  create(db: string, name: string, options: Doc = {}, uuid?: UUID): Collection {
    validateDatabaseName(db);
    validateCollectionName(db, name);
    if (this.get(db, name))
      throw new MongoCommandError('NamespaceExists', `Collection ${db}.${name} already exists.`);
    let colls = this.dbs.get(db);
    if (!colls) {
      colls = new Map();
      this.dbs.set(db, colls);
    }
    const collection = new Collection(db, name, options, uuid, this.emit);
    colls.set(name, collection);
    this.emit({ op: 'create', db, coll: name, options, uuid: collection.uuid });
    return collection;
  }

  drop(db: string, name: string): Collection | undefined {
    const colls = this.dbs.get(db);
    const collection = colls?.get(name);
    if (!colls || !collection) return undefined;
    colls.delete(name);
    if (colls.size === 0) this.dbs.delete(db);
    this.emit({ op: 'drop', db, coll: name });
    return collection;
  }

  dropDatabase(db: string): void {
    if (this.dbs.delete(db)) this.emit({ op: 'dropDatabase', db });
  }

  /** `uuid` names the new collection (replay passes the one first given, so it survives restarts). */
  rename(fromDb: string, from: string, toDb: string, to: string, dropTarget: boolean, uuid?: UUID): void {
    const source = this.get(fromDb, from);
    if (!source) throw new MongoCommandError('NamespaceNotFound', 'Source collection does not exist');
    if (this.get(toDb, to) && !dropTarget)
      throw new MongoCommandError('NamespaceExists', 'target namespace exists');
    const target = this.quietly(() => {
      if (this.get(toDb, to)) this.drop(toDb, to);
      const created = this.create(toDb, to, source.options, uuid);
      for (const spec of source.indexSpecs().slice(1)) created.createIndex(spec);
      for (const doc of source.all()) created.insert(doc);
      this.drop(fromDb, from);
      return created;
    });
    this.emit({ op: 'rename', fromDb, from, toDb, to, dropTarget, uuid: target.uuid });
  }

  /**
   * `$out`: builds the new contents beside the old (keeping the target's indexes), so a
   * failure part-way leaves the target as it was; then swaps it in.
   */
  replaceContents(db: string, name: string, docs: Doc[], uuid?: UUID): void {
    validateDatabaseName(db);
    validateCollectionName(db, name);
    const existing = this.get(db, name);
    const next = new Collection(db, name, existing?.options ?? {}, uuid, this.emit);
    this.quietly(() => {
      for (const spec of existing?.indexSpecs().slice(1) ?? []) next.createIndex(spec);
      for (const doc of docs) next.insert(doc);
    });
    this.emit({ op: 'replaceContents', db, coll: name, uuid: next.uuid, count: docs.length });
    for (const doc of docs) this.emit({ op: 'doc', doc });
    let colls = this.dbs.get(db);
    if (!colls) {
      colls = new Map();
      this.dbs.set(db, colls);
    }
    colls.set(name, next);
  }

  databaseNames(): string[] {
    return [...this.dbs.keys()];
  }

  collections(db: string): Collection[] {
    return [...(this.dbs.get(db)?.values() ?? [])];
  }

  *allCollections(): Generator<Collection> {
    for (const colls of this.dbs.values()) yield* colls.values();
  }
}
