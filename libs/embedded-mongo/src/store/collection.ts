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
import { type Doc, deepFreeze, isIndexableScalar, isPlainObject, keyOf } from './values';

export const ID_INDEX_NAME = '_id_';
const ID_INDEX_SPEC: IndexSpec = { v: 2, key: { _id: 1 }, name: ID_INDEX_NAME };
const MAX_LOOKUP_COMBINATIONS = 1000;

/**
 * One collection: documents by `_id` key in insertion (natural) order, plus its secondary
 * indexes. Every write checks all unique indexes before it changes anything, so a
 * rejected write leaves the documents and the indexes exactly as they were.
 */
export class Collection {
  readonly uuid = new UUID();
  private readonly docs = new Map<string, Doc>();
  /** Insertion sequence per id, so index answers come back in natural order. */
  private readonly seq = new Map<string, number>();
  private nextSeq = 0;
  private readonly indexes = new Map<string, Index>();

  constructor(
    readonly dbName: string,
    readonly name: string,
    readonly options: Doc = {},
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
    for (const [index, k] of keys) index.add(id, k);
    return doc;
  }

  /** Replaces a stored document by a new version with the same `_id`. */
  replace(current: Doc, next: Doc): void {
    const id = keyOf(current._id);
    if (keyOf(next._id) !== id) throw new Error('replace must keep the _id');
    const nextKeys = this.checkUnique(next, id);
    for (const index of this.indexes.values()) index.remove(id, index.keysFor(current));
    this.docs.set(id, deepFreeze(next));
    for (const [index, k] of nextKeys) index.add(id, k);
  }

  remove(doc: Doc): void {
    const id = keyOf(doc._id);
    if (!this.docs.delete(id)) return;
    this.seq.delete(id);
    for (const index of this.indexes.values()) index.remove(id, index.keysFor(doc));
  }

  clear(): number {
    const n = this.docs.size;
    for (const doc of this.all()) this.remove(doc);
    return n;
  }

  private checkUnique(doc: Doc, id: string): Array<[Index, IndexKey[]]> {
    const out: Array<[Index, IndexKey[]]> = [];
    for (const index of this.indexes.values()) {
      const keys = index.keysFor(doc);
      const conflict = index.conflictFor(keys, id);
      if (conflict) throw index.duplicateKeyError(this.ns, conflict);
      out.push([index, keys]);
    }
    return out;
  }

  /**
   * The documents that can match `filter`, using the `_id` map or an index when the filter
   * pins every field of one with equality (`v`, `{ $eq: v }` or `{ $in: [...] }`);
   * `undefined` means nothing narrows it and the caller scans. Callers still test each
   * returned document against the full filter.
   */
  candidates(filter: Doc): Doc[] | undefined {
    const eq = equalityConditions(filter);
    if (eq.size === 0) return undefined;
    const ids = eq.get('_id');
    if (ids) return this.byIds(ids.map(keyOf));

    let best: Index | undefined;
    for (const index of this.indexes.values()) {
      if (!index.supportsLookup || !index.fields.every((f) => eq.has(f))) continue;
      if (!best || (index.unique && !best.unique) || index.fields.length > best.fields.length) best = index;
    }
    if (!best) return undefined;
    const perField = best.fields.map((f) => eq.get(f) as unknown[]);
    if (perField.reduce((n, values) => n * values.length, 1) > MAX_LOOKUP_COMBINATIONS) return undefined;
    const found = new Set<string>();
    for (const values of cartesian(perField)) {
      for (const id of best.lookup(values) ?? []) found.add(id);
    }
    return this.byIds([...found]);
  }

  private byIds(ids: string[]): Doc[] {
    const unique = [...new Set(ids)].filter((id) => this.docs.has(id));
    // Natural order, as a scan would return them.
    if (unique.length > 1) unique.sort((a, b) => (this.seq.get(a) ?? 0) - (this.seq.get(b) ?? 0));
    return unique.map((id) => this.docs.get(id) as Doc);
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
      index.add(id, keys);
    }
    this.indexes.set(spec.name, index);
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
    this.indexes.delete(name);
  }

  dropAllIndexes(): void {
    this.indexes.clear();
  }

  get indexCount(): number {
    return this.indexes.size + 1;
  }
}

/**
 * Fields the filter pins to a finite set of scalar values, from its top level and from
 * `$and` clauses. Anything else (operators, regexes, arrays, sub-documents) is left to the
 * scan + match, which is always correct.
 */
function equalityConditions(filter: Doc): Map<string, unknown[]> {
  const out = new Map<string, unknown[]>();
  const visit = (clause: Doc) => {
    for (const [field, cond] of Object.entries(clause)) {
      if (field === '$and' && Array.isArray(cond)) {
        for (const sub of cond) if (isPlainObject(sub)) visit(sub);
        continue;
      }
      if (field.startsWith('$') || out.has(field)) continue;
      const values = equalityValues(cond);
      if (values) out.set(field, values);
    }
  };
  visit(filter);
  return out;
}

function equalityValues(cond: unknown): unknown[] | undefined {
  if (isIndexableScalar(cond)) return [cond];
  if (!isPlainObject(cond)) return undefined;
  const keys = Object.keys(cond);
  if (keys.length !== 1) return undefined;
  if (keys[0] === '$eq' && isIndexableScalar(cond.$eq)) return [cond.$eq];
  if (keys[0] === '$in' && Array.isArray(cond.$in) && cond.$in.every(isIndexableScalar)) return cond.$in;
  return undefined;
}
