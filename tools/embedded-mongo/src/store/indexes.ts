import { MongoCommandError } from '../errors';
import { MINGO_COMPILED, Query } from '../mingo/context';
import { type FieldRange, type IndexEntry, SortedEntries } from './sorted-entries';
import {
  crossesArray,
  type Doc,
  formatValue,
  indexValuesAt,
  isPlainObject,
  keyOf,
  optionNumber,
} from './values';

/** An index as `listIndexes` shows it. */
export interface IndexSpec {
  v: number;
  key: Record<string, unknown>;
  name: string;
  unique?: boolean;
  sparse?: boolean;
  partialFilterExpression?: Doc;
  expireAfterSeconds?: number;
  [option: string]: unknown;
}

/** One key a document contributes to an index, with the values behind it (for error messages). */
export interface IndexKey {
  key: string;
  values: unknown[];
}

/** Key types we keep in the catalogue but do not maintain entries for. */
const SPECIAL_TYPES = new Set(['text', '2dsphere', '2d', 'hashed', 'geoHaystack', 'wildcard']);
const MAX_KEYS_PER_DOCUMENT = 10_000;

export function defaultIndexName(key: Record<string, unknown>): string {
  return Object.entries(key)
    .map(([field, dir]) => `${field}_${dir}`)
    .join('_');
}

/** The map key of an index key: one value's `keyOf`, or the JSON list of them for a compound index. */
function entryKey(values: readonly unknown[]): string {
  return values.length === 1 ? keyOf(values[0]) : JSON.stringify(values.map(keyOf));
}

/**
 * A secondary index: key -> the documents holding it, plus (built on the first scan that needs
 * it) the same entries in value order for range and prefix scans. Unique indexes reject a
 * second owner. Sparse and partial indexes leave documents out; the planner uses them only
 * for queries that cannot match those documents. Special types (text, geo, hashed) are
 * listed but hold no entries.
 */
export class Index {
  readonly fields: string[];
  private readonly paths: string[][];
  readonly special: boolean;
  private readonly entries = new Map<string, IndexEntry>();
  /** The keys each document is recorded under (what `keysFor` gave when it was stored). */
  private readonly keysById = new Map<string, IndexKey[]>();
  private sorted?: SortedEntries;
  /** Per field: whether some document ever had an array along its path (sticky, as on mongod). */
  private readonly multikey: boolean[];
  private readonly partial?: Query;
  /**
   * The top-level fields the keys depend on (the indexed paths' and the partial filter's), or
   * undefined when the filter reads something else as well: then every version is re-keyed.
   */
  private readonly roots?: readonly string[];

  constructor(readonly spec: IndexSpec) {
    this.fields = Object.keys(spec.key);
    this.paths = this.fields.map((field) => field.split('.'));
    const filterRoots = spec.partialFilterExpression ? rootsOfFilter(spec.partialFilterExpression) : [];
    if (filterRoots)
      this.roots = [...new Set([...this.paths.map((parts) => parts[0] as string), ...filterRoots])];
    this.multikey = this.fields.map(() => false);
    this.special = Object.values(spec.key).some((dir) => typeof dir === 'string' && SPECIAL_TYPES.has(dir));
    if (spec.partialFilterExpression) this.partial = new Query(spec.partialFilterExpression, MINGO_COMPILED);
  }

  get name(): string {
    return this.spec.name;
  }

  get unique(): boolean {
    return this.spec.unique === true;
  }

  get sparse(): boolean {
    return this.spec.sparse === true;
  }

  get isMultikey(): boolean {
    return this.multikey.some(Boolean);
  }

  /** Whether the field at `position` has held an array in some document. */
  isMultikeyField(position: number): boolean {
    return this.multikey[position] === true;
  }

  /**
   * Whether `next`, a new version of the stored `current`, has the same keys here without
   * computing them: every field they depend on is the same value. Stored documents are frozen
   * and an update copies only the top-level fields it changes (update.ts `copyForModifier`), so
   * a field it left alone is the very same object, and its keys are the ones recorded.
   */
  keysUnchanged(current: Doc, next: Doc): boolean {
    if (!this.roots || this.special) return this.special;
    for (const root of this.roots) {
      if (current[root] !== next[root] || root in current !== root in next) return false;
    }
    return true;
  }

  /** The keys `doc` contributes; none when a sparse or partial index leaves it out. */
  keysFor(doc: Doc): IndexKey[] {
    if (this.special) return [];
    if (this.partial && !this.partial.test(doc)) return [];
    const perField = this.paths.map((parts) => indexValuesAt(doc, parts));
    if (this.spec.sparse && perField.every((values) => values.length === 1 && values[0] === undefined))
      return [];
    if (perField.every((values) => values.length === 1)) {
      // One value per field (no array met): one key, without the general product below.
      const values = perField.map((fieldValues) => fieldValues[0]);
      return [{ key: entryKey(values), values }];
    }
    if (perField.filter((values) => values.length > 1).length > 1) {
      throw new MongoCommandError(
        'CannotIndexParallelArrays',
        `cannot index parallel arrays [${this.fields.join('] [')}]`,
      );
    }
    const out = new Map<string, IndexKey>();
    for (const values of cartesian(perField)) {
      const key = entryKey(values);
      if (!out.has(key)) out.set(key, { key, values });
      if (out.size > MAX_KEYS_PER_DOCUMENT) break;
    }
    return [...out.values()];
  }

  /** The id of another document already holding one of `keys`, if any. */
  conflictFor(keys: IndexKey[], ownId: string): IndexKey | undefined {
    if (!this.unique) return undefined;
    for (const k of keys) {
      const owners = this.entries.get(k.key)?.ids;
      if (owners && (owners.size > 1 || !owners.has(ownId))) return k;
    }
    return undefined;
  }

  /** Records `doc` (stored under `id`) under each of its `keys`. */
  add(id: string, keys: IndexKey[], doc: Doc): void {
    if (keys.length === 0) return;
    this.noteArrays(doc);
    this.keysById.set(id, keys);
    for (const { key, values } of keys) {
      let entry = this.entries.get(key);
      if (!entry) {
        entry = { key, values: values.map((v) => (v === undefined ? null : v)), ids: new Set() };
        this.entries.set(key, entry);
        this.sorted?.insert(entry);
      }
      entry.ids.add(id);
    }
  }

  /** Whether `doc` has an array along an indexed path: that field is multikey from now on. */
  private noteArrays(doc: Doc): void {
    for (let i = 0; i < this.paths.length; i++) {
      if (!this.multikey[i] && crossesArray(doc, this.paths[i] as string[])) this.multikey[i] = true;
    }
  }

  /**
   * Records the new version `doc` of the document stored under `id`, whose keys are now
   * `keys`. Most updates leave indexed fields alone: then the entries stay as they are.
   */
  replace(id: string, keys: IndexKey[], doc: Doc): void {
    const current = this.keysById.get(id);
    if (current && sameKeys(current, keys)) {
      this.noteArrays(doc);
      return;
    }
    this.remove(id);
    this.add(id, keys, doc);
  }

  /** Takes the document stored under `id` out of the entries it is recorded under. */
  remove(id: string): void {
    const keys = this.keysById.get(id);
    if (!keys) return;
    this.keysById.delete(id);
    for (const { key } of keys) {
      const entry = this.entries.get(key);
      if (!entry) continue;
      entry.ids.delete(id);
      if (entry.ids.size === 0) {
        this.entries.delete(key);
        this.sorted?.remove(entry);
      }
    }
  }

  /** Ids holding the key made of these per-field values (in index field order). */
  lookup(values: unknown[]): Set<string> | undefined {
    return this.entries.get(entryKey(values))?.ids;
  }

  /**
   * Entries whose first fields equal `prefix` and whose next field lies in `range` (when
   * given), in value order.
   */
  scan(prefix: readonly unknown[], range: FieldRange | undefined, visit: (entry: IndexEntry) => void): void {
    this.sorted ??= new SortedEntries(this.entries.values());
    this.sorted.scan(prefix, range, visit);
  }

  duplicateKeyError(ns: string, conflict: IndexKey): MongoCommandError {
    return duplicateKeyError(ns, this.name, this.spec.key, this.fields, conflict.values);
  }
}

/**
 * The top-level fields a partial filter reads: its field names' first segments, through
 * `$and`/`$or`/`$nor`; undefined when it uses another top-level operator (`$expr`...).
 */
function rootsOfFilter(filter: Doc): string[] | undefined {
  const roots: string[] = [];
  for (const [key, value] of Object.entries(filter)) {
    if (!key.startsWith('$')) {
      roots.push(key.split('.')[0] as string);
      continue;
    }
    if (!['$and', '$or', '$nor'].includes(key) || !Array.isArray(value)) return undefined;
    for (const clause of value) {
      const inner = isPlainObject(clause) ? rootsOfFilter(clause) : undefined;
      if (!inner) return undefined;
      roots.push(...inner);
    }
  }
  return roots;
}

function sameKeys(a: readonly IndexKey[], b: readonly IndexKey[]): boolean {
  return a.length === b.length && a.every((k, i) => k.key === (b[i] as IndexKey).key);
}

export function duplicateKeyError(
  ns: string,
  indexName: string,
  keyPattern: Record<string, unknown>,
  fields: string[],
  values: unknown[],
): MongoCommandError {
  const keyValue: Doc = {};
  fields.forEach((field, i) => {
    keyValue[field] = values[i] === undefined ? null : values[i];
  });
  const shown = fields.map((field, i) => `${field}: ${formatValue(values[i])}`).join(', ');
  return new MongoCommandError(
    'DuplicateKey',
    `E11000 duplicate key error collection: ${ns} index: ${indexName} dup key: { ${shown} }`,
    { keyPattern, keyValue },
  );
}

export function* cartesian(lists: unknown[][]): Generator<unknown[]> {
  if (lists.length === 0) {
    yield [];
    return;
  }
  const [first, ...rest] = lists as [unknown[], ...unknown[][]];
  for (const head of first) {
    for (const tail of cartesian(rest)) yield [head, ...tail];
  }
}

/** Checks an index specification the way `createIndexes` does and fills in defaults. */
export function normalizeIndexSpec(raw: unknown): IndexSpec {
  if (!isPlainObject(raw))
    throw new MongoCommandError('TypeMismatch', 'Each index specification must be an object');
  const key = raw.key;
  if (!isPlainObject(key) || Object.keys(key).length === 0) {
    throw new MongoCommandError(
      'CannotCreateIndex',
      "Index key pattern must be a non-empty object, 'key' field",
    );
  }
  for (const [field, raw] of Object.entries(key)) {
    const dir = optionNumber(raw);
    const validNumber = typeof dir === 'number' && dir !== 0 && Number.isFinite(dir);
    const validType = typeof dir === 'string' && SPECIAL_TYPES.has(dir);
    if (!validNumber && !validType) {
      throw new MongoCommandError(
        'CannotCreateIndex',
        `Values in the index key pattern can only be numbers or strings: ${field}`,
      );
    }
  }
  const name = raw.name === undefined ? defaultIndexName(key) : raw.name;
  if (typeof name !== 'string' || name.length === 0) {
    throw new MongoCommandError('CannotCreateIndex', 'The index name must be a non-empty string');
  }
  const { v: _v, key: _k, name: _n, background: _b, ns: _ns, ...options } = raw;
  const spec: IndexSpec = { v: 2, key, name, ...options };
  if (options.expireAfterSeconds !== undefined)
    spec.expireAfterSeconds = optionNumber(options.expireAfterSeconds) as number;
  if (spec.expireAfterSeconds !== undefined) {
    const ttl = spec.expireAfterSeconds;
    if (typeof ttl !== 'number' || !Number.isInteger(ttl) || ttl < 0) {
      throw new MongoCommandError(
        'CannotCreateIndex',
        "TTL index 'expireAfterSeconds' option must be a non-negative integer",
      );
    }
    if (Object.keys(key).length !== 1) {
      throw new MongoCommandError(
        'CannotCreateIndex',
        'TTL indexes are single-field indexes, compound indexes do not support TTL',
      );
    }
  }
  if (spec.partialFilterExpression !== undefined && !isPlainObject(spec.partialFilterExpression)) {
    throw new MongoCommandError('TypeMismatch', 'partialFilterExpression must be an object');
  }
  return spec;
}

/** Whether two specs describe the same index (ignoring the name). */
export function sameIndexOptions(a: IndexSpec, b: IndexSpec): boolean {
  const strip = ({ name: _n, v: _v, ...rest }: IndexSpec) =>
    Object.fromEntries(Object.entries(rest).sort(([x], [y]) => x.localeCompare(y)));
  return keyOf(strip(a)) === keyOf(strip(b));
}
