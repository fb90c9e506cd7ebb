import { UUID } from 'bson';
import { MongoCommandError } from '../errors';
import {
  cartesian,
  defaultIndexName,
  duplicateKeyError,
  Index,
  type IndexKey,
  type IndexSpec,
  normalizeIndexSpec,
  sameIndexOptions,
} from './indexes';
import type { MutationSink } from './mutations';
import type { AccessPlan } from './planner';
import { type Doc, deepFreeze, isPlainObject, keyOf } from './values';

export const ID_INDEX_NAME = '_id_';
const ID_INDEX_SPEC: IndexSpec = { v: 2, key: { _id: 1 }, name: ID_INDEX_NAME };

/**
 * One collection: documents by `_id` key in insertion (natural) order, plus its secondary
 * indexes. Every write checks all unique indexes before it changes anything, so a
 * rejected write leaves the documents and the indexes exactly as they were.
 */
export class Collection {
  private readonly docs = new Map<string, Doc>();
  /** Insertion sequence per id, so index answers come back in natural order. */
  private readonly seq = new Map<string, number>();
  private nextSeq = 0;
  private readonly indexes = new Map<string, Index>();

  constructor(
    readonly dbName: string,
    readonly name: string,
    readonly options: Doc = {},
    readonly uuid: UUID = new UUID(),
    /** Told of each change after it succeeded (the catalogue's journal hook). */
    private readonly emit: MutationSink = () => {},
  ) {}

  get ns(): string {
    return `${this.dbName}.${this.name}`;
  }

  get count(): number {
    return this.docs.size;
  }

  all(): Doc[] {
    return [...this.docs.values()];
  }

  /** Stores a new document (which must carry its `_id` first); the document is frozen. */
  insert(doc: Doc): Doc {
    const id = keyOf(doc._id);
    if (this.docs.has(id)) {
      throw duplicateKeyError(this.ns, ID_INDEX_NAME, { _id: 1 }, ['_id'], [doc._id]);
    }
    const keys = this.checkUnique(doc, id);
    this.docs.set(id, deepFreeze(doc));
    this.seq.set(id, this.nextSeq++);
    for (const [index, k] of keys) index.add(id, k, doc);
    this.emit({ op: 'insert', db: this.dbName, coll: this.name, doc });
    return doc;
  }

  /** The stored document with this `_id` value. */
  byId(idValue: unknown): Doc | undefined {
    return this.docs.get(keyOf(idValue));
  }

  /** Replaces a stored document by a new version with the same `_id`. */
  replace(current: Doc, next: Doc): void {
    const id = keyOf(current._id);
    if (keyOf(next._id) !== id) throw new Error('replace must keep the _id');
    const nextKeys = this.checkUnique(next, id, current);
    this.docs.set(id, deepFreeze(next));
    for (const [index, k] of nextKeys) index.replace(id, k, next);
    this.emit({ op: 'replace', db: this.dbName, coll: this.name, doc: next });
  }

  remove(doc: Doc): void {
    const id = keyOf(doc._id);
    if (!this.docs.delete(id)) return;
    this.seq.delete(id);
    for (const index of this.indexes.values()) index.remove(id);
    this.emit({ op: 'delete', db: this.dbName, coll: this.name, id: doc._id });
  }

  clear(): number {
    const n = this.docs.size;
    for (const doc of this.all()) this.remove(doc);
    return n;
  }

  /**
   * The keys `doc` has in each index, after checking the unique ones. With `current` (the
   * stored version `doc` replaces), an index whose fields `doc` shares with it is left out: its
   * keys are the ones already recorded.
   */
  private checkUnique(doc: Doc, id: string, current?: Doc): Array<[Index, IndexKey[]]> {
    const out: Array<[Index, IndexKey[]]> = [];
    for (const index of this.indexes.values()) {
      if (current && index.keysUnchanged(current, doc)) continue;
      const keys = index.keysFor(doc);
      const conflict = index.conflictFor(keys, id);
      if (conflict) throw index.duplicateKeyError(this.ns, conflict);
      out.push([index, keys]);
    }
    return out;
  }

  /** The secondary indexes, for the planner (`planAccess`). */
  secondaryIndexes(): Iterable<Index> {
    return this.indexes.values();
  }

  /**
   * The documents a plan reaches, in natural order, and how many index keys it read. They
   * can match the filter the plan was made for; unless the plan is exact, the caller tests
   * each one.
   */
  fetch(plan: AccessPlan): { docs: Doc[]; keysExamined: number } {
    if (plan.stage === 'COLLSCAN') return { docs: this.all(), keysExamined: 0 };
    if (plan.stage === 'OR') {
      // Each clause's documents, each once, in natural order.
      const ids = new Set<string>();
      let keysExamined = 0;
      for (const sub of plan.plans) {
        const reached = this.fetch(sub);
        keysExamined += reached.keysExamined;
        for (const doc of reached.docs) ids.add(keyOf(doc._id));
      }
      return { docs: this.byIds(ids), keysExamined };
    }
    if (plan.stage === 'IDHACK') {
      const ids = plan.ids.map(keyOf);
      const docs = this.byIds(ids.length === 1 ? ids : new Set(ids));
      return { docs, keysExamined: docs.length };
    }
    const { index, prefix, range } = plan;
    const found = new Set<string>();
    let keysExamined = 0;
    const collect = (ids: Set<string>) => {
      keysExamined += ids.size;
      for (const id of ids) found.add(id);
    };
    for (const values of cartesian(prefix)) {
      if (!range && values.length === index.fields.length) {
        const ids = index.lookup(values);
        if (ids) collect(ids);
      } else {
        index.scan(values, range, (entry) => collect(entry.ids));
      }
    }
    return { docs: this.byIds(found), keysExamined };
  }

  /** The stored documents with these (distinct) ids, in natural order as a scan returns them. */
  private byIds(ids: Iterable<string>): Doc[] {
    const docs: Doc[] = [];
    const seqs: number[] = [];
    let ordered = true;
    for (const id of ids) {
      const doc = this.docs.get(id);
      if (!doc) continue;
      const seq = this.seq.get(id) as number;
      if (ordered && seqs.length > 0 && seq < (seqs[seqs.length - 1] as number)) ordered = false;
      docs.push(doc);
      seqs.push(seq);
    }
    // Index entries list ids in the order they were added: natural order unless updated since.
    if (ordered) return docs;
    const order = docs.map((_, i) => i).sort((a, b) => (seqs[a] as number) - (seqs[b] as number));
    return order.map((i) => docs[i] as Doc);
  }

  indexSpecs(): IndexSpec[] {
    return [ID_INDEX_SPEC, ...[...this.indexes.values()].map((i) => i.spec)];
  }

  ttlIndexes(): Index[] {
    return [...this.indexes.values()].filter((i) => typeof i.spec.expireAfterSeconds === 'number');
  }

  /** Creates the index unless an identical one exists; returns whether it was created. */
  createIndex(raw: unknown): boolean {
    const spec = normalizeIndexSpec(raw);
    if (keyOf(spec.key) === keyOf({ _id: 1 }) && !spec.partialFilterExpression) {
      if (spec.name === ID_INDEX_NAME || spec.name === defaultIndexName(spec.key)) return false;
    }
    const byName = spec.name === ID_INDEX_NAME ? new Index(ID_INDEX_SPEC) : this.indexes.get(spec.name);
    if (byName) {
      if (keyOf(byName.spec.key) === keyOf(spec.key) && sameIndexOptions(byName.spec, spec)) return false;
      throw new MongoCommandError(
        'IndexKeySpecsConflict',
        `An existing index has the same name as the requested index. When index names are not specified, they are auto generated and can cause conflicts. Please refer to our documentation. Requested index: ${JSON.stringify(spec)}, existing index: ${JSON.stringify(byName.spec)}`,
      );
    }
    for (const existing of this.indexes.values()) {
      if (keyOf(existing.spec.key) !== keyOf(spec.key)) continue;
      if (keyOf(existing.spec.partialFilterExpression) !== keyOf(spec.partialFilterExpression)) continue;
      const message = sameIndexOptions(existing.spec, spec)
        ? `Index already exists with a different name: ${existing.name}`
        : `An equivalent index already exists with the same name but different options. Requested index: ${JSON.stringify(spec)}, existing index: ${JSON.stringify(existing.spec)}`;
      throw new MongoCommandError('IndexOptionsConflict', message);
    }

    const index = new Index(spec);
    for (const [id, doc] of this.docs) {
      const keys = index.keysFor(doc);
      const conflict = index.conflictFor(keys, id);
      if (conflict) {
        const cause = index.duplicateKeyError(this.ns, conflict);
        throw new MongoCommandError(
          'DuplicateKey',
          `Index build failed: ${this.uuid.toHexString()}: Collection ${this.ns} ( ${this.uuid.toHexString()} ) :: caused by :: ${cause.message}`,
          cause.extra,
        );
      }
      index.add(id, keys, doc);
    }
    this.indexes.set(spec.name, index);
    this.emit({ op: 'createIndex', db: this.dbName, coll: this.name, spec });
    return true;
  }

  /** Resolves an index by name or key pattern. */
  findIndex(nameOrKey: unknown): Index | undefined {
    if (typeof nameOrKey === 'string') return this.indexes.get(nameOrKey);
    if (isPlainObject(nameOrKey)) {
      const wanted = keyOf(nameOrKey);
      return [...this.indexes.values()].find((i) => keyOf(i.spec.key) === wanted);
    }
    return undefined;
  }

  isIdIndex(nameOrKey: unknown): boolean {
    return (
      nameOrKey === ID_INDEX_NAME || (isPlainObject(nameOrKey) && keyOf(nameOrKey) === keyOf({ _id: 1 }))
    );
  }

  dropIndex(name: string): void {
    if (this.indexes.delete(name)) this.emit({ op: 'dropIndex', db: this.dbName, coll: this.name, name });
  }

  dropAllIndexes(): void {
    this.indexes.clear();
    this.emit({ op: 'dropAllIndexes', db: this.dbName, coll: this.name });
  }

  /** collMod of a TTL index; returns the previous value. */
  setExpireAfterSeconds(name: string, seconds: number): number | undefined {
    const index = this.indexes.get(name);
    if (!index) throw new MongoCommandError('IndexNotFound', `cannot find index ${name} for ns ${this.ns}`);
    const old = index.spec.expireAfterSeconds;
    index.spec.expireAfterSeconds = seconds;
    this.emit({ op: 'setExpireAfterSeconds', db: this.dbName, coll: this.name, name, seconds });
    return old;
  }

  get indexCount(): number {
    return this.indexes.size + 1;
  }
}
