import { ObjectId, serialize } from 'bson';
import { asBadValue, MongoCommandError } from './errors';
import { Aggregator, MINGO_COMPILED } from './mingo/context';
import { updateDocument } from './mingo/updater';
import { isNumeric } from './numeric/numbers';
import { validatePipeline } from './query';
import {
  bsonTypeName,
  type Doc,
  deepClone,
  formatValue,
  isPlainObject,
  keyOf,
  withIdFirst,
} from './store/values';
import { deferArithmetic, nonNumericTarget, settleArithmetic } from './update-arithmetic';

const UPDATE_OPERATORS = new Set([
  '$set',
  '$unset',
  '$inc',
  '$mul',
  '$min',
  '$max',
  '$rename',
  '$push',
  '$addToSet',
  '$pop',
  '$pull',
  '$pullAll',
  '$bit',
  '$currentDate',
  '$setOnInsert',
]);

const UPDATE_PIPELINE_STAGES = new Set([
  '$addFields',
  '$set',
  '$project',
  '$unset',
  '$replaceRoot',
  '$replaceWith',
]);

export type UpdateKind = 'modifier' | 'replacement' | 'pipeline';

export function classifyUpdate(u: unknown): UpdateKind {
  if (Array.isArray(u)) {
    validatePipeline(u, UPDATE_PIPELINE_STAGES);
    return 'pipeline';
  }
  if (!isPlainObject(u)) {
    throw new MongoCommandError('FailedToParse', 'Update argument must be either an object or an array');
  }
  const keys = Object.keys(u);
  if (keys.length === 0 || !keys[0]?.startsWith('$')) return 'replacement';
  for (const op of keys) {
    if (!UPDATE_OPERATORS.has(op)) {
      throw new MongoCommandError(
        'FailedToParse',
        `Unknown modifier: ${op}. Expected a valid update modifier or pipeline-style update specified as an array`,
      );
    }
    if (!isPlainObject(u[op])) {
      throw new MongoCommandError(
        'FailedToParse',
        `Modifiers operate on fields but we found type ${Array.isArray(u[op]) ? 'array' : typeof u[op]} instead. For example: {$mod: {<field>: ...}} not {${op}: ${JSON.stringify(u[op])}}`,
      );
    }
  }
  return 'modifier';
}

export interface UpdateContext {
  arrayFilters?: unknown;
  /** The query that selected the document (positional `$` resolves against it). */
  filter?: unknown;
  /** True when the update builds a new upserted document. */
  inserting?: boolean;
}

/** Returns the next version of `doc` (never mutating it) and whether anything changed. */
export function applyUpdate(doc: Doc, u: unknown, ctx: UpdateContext = {}): { doc: Doc; changed: boolean } {
  const kind = classifyUpdate(u);
  let next: Doc;
  let changed: boolean;
  if (kind === 'replacement') {
    const replacement = u as Doc;
    if ('_id' in replacement && keyOf(replacement._id) !== keyOf(doc._id)) throw immutableId();
    const { _id: _ignored, ...fields } = replacement;
    next = deepClone({ _id: doc._id, ...fields });
    changed = !sameDocument(doc, next);
  } else if (kind === 'pipeline') {
    let out: Doc | undefined;
    try {
      const input = onlyTopLevelFields(u as Doc[]) ? doc : deepClone(doc);
      out = new Aggregator(u as Doc[], MINGO_COMPILED).run([input])[0] as Doc | undefined;
    } catch (err) {
      throw asBadValue(err);
    }
    next = out ?? {};
    if (!('_id' in next)) next = { _id: doc._id, ...next };
    else if (keyOf(next._id) !== keyOf(doc._id)) throw immutableId();
    next = withIdFirst(next);
    changed = !sameDocument(doc, next);
  } else {
    const checked = checkModifier(doc, modifierFor(u as Doc, ctx.inserting === true));
    const { modifier, selectors } = deferArithmetic(checked);
    next = copyForModifier(doc, modifier);
    let paths: string[] = [];
    if (Object.keys(modifier).length > 0) {
      const arrayFilters = Array.isArray(ctx.arrayFilters) ? (ctx.arrayFilters as Doc[]) : undefined;
      // Only a positional `$` reads the query; without one, mingo would just test the
      // document against it again.
      const condition = isPlainObject(ctx.filter) && hasPositionalPath(modifier) ? ctx.filter : undefined;
      // Of the modifier, only `$pull` holds conditions; the values the others write are data
      // (a pushed event of a few KiB need not be walked).
      const evaluatesExpressions = mentionsExpression([modifier.$pull, arrayFilters, condition]);
      try {
        paths = updateDocument(next, modifier, arrayFilters, condition, evaluatesExpressions);
      } catch (err) {
        throw updateError(err);
      }
    }
    const arithmeticChanged = selectors.size > 0 && settleArithmetic(next, doc, selectors);
    if (keyOf(next._id) !== keyOf(doc._id)) throw immutableId();
    next = withIdFirst(next);
    changed = arithmeticChanged || paths.some((path) => !selectors.has(path));
  }
  return { doc: next, changed };
}

/** Whether a modifier writes through a positional `$` segment (`'grades.$'`, `'a.$.b'`). */
function hasPositionalPath(modifier: Doc): boolean {
  return Object.values(modifier).some(
    (fields) => isPlainObject(fields) && Object.keys(fields).some((path) => path.split('.').includes('$')),
  );
}

/** Whether a value holds `$expr` or `$where` at any depth: conditions that evaluate expressions. */
function mentionsExpression(value: unknown): boolean {
  if (Array.isArray(value)) return value.some(mentionsExpression);
  if (!isPlainObject(value)) return false;
  for (const [key, inner] of Object.entries(value)) {
    if (key === '$expr' || key === '$where' || mentionsExpression(inner)) return true;
  }
  return false;
}

const CREATING_OPERATORS = new Set([
  '$set',
  '$inc',
  '$mul',
  '$min',
  '$max',
  '$push',
  '$addToSet',
  '$currentDate',
]);
const ARRAY_OPERATORS = new Set(['$pull', '$pullAll', '$pop']);

/**
 * The checks mongod makes before it applies a modifier and that mingo leaves out: `_id`
 * is immutable (setting it to its current value is a no-op), arithmetic needs numbers,
 * array operators need arrays, and a path cannot run through a scalar. Returns the
 * modifier without its no-op `_id` assignments.
 */
function checkModifier(doc: Doc, modifier: Doc): Doc {
  const out: Doc = {};
  for (const [op, fields] of Object.entries(modifier)) {
    const kept: Doc = {};
    for (const [path, arg] of Object.entries(fields as Doc)) {
      if (path === '_id' || path.startsWith('_id.')) {
        if (op === '$set' && path === '_id' && keyOf(arg) === keyOf(doc._id)) continue;
        throw immutableId();
      }
      kept[path] = arg;
      // Positional and array-filter paths are resolved by mingo against the query.
      if (path.includes('$')) continue;
      const target = CREATING_OPERATORS.has(op) ? walkCreatablePath(doc, path) : getPath(doc, path);
      const field = path.split('.').pop() as string;
      if (op === '$inc' || op === '$mul') {
        if (!isNumeric(arg)) {
          throw new MongoCommandError(
            'TypeMismatch',
            `Cannot ${op === '$inc' ? 'increment' : 'multiply'} with non-numeric argument: {${path}: ${formatValue(arg)}}`,
          );
        }
        if (target !== undefined && !isNumeric(target)) throw nonNumericTarget(op, doc._id, field, target);
      } else if ((op === '$push' || op === '$addToSet') && target !== undefined && !Array.isArray(target)) {
        throw new MongoCommandError(
          'BadValue',
          `The field '${path}' must be an array but is of type ${bsonTypeName(target)} in document {_id: ${formatValue(doc._id)}}`,
        );
      } else if (
        ARRAY_OPERATORS.has(op) &&
        target !== undefined &&
        target !== null &&
        !Array.isArray(target)
      ) {
        throw new MongoCommandError('BadValue', `Cannot apply ${op} to a non-array value`);
      }
    }
    if (Object.keys(kept).length > 0 || op !== '$set') out[op] = kept;
  }
  return out;
}

/** The value at `path`, failing as PathNotViable when the path would run through a scalar. */
function walkCreatablePath(doc: Doc, path: string): unknown {
  const parts = path.split('.');
  let current: unknown = doc;
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i] as string;
    if (current === undefined) return undefined;
    if (Array.isArray(current)) {
      if (!/^\d+$/.test(part)) {
        throw new MongoCommandError(
          'PathNotViable',
          `Cannot create field '${part}' in element {${parts[i - 1]}: ${formatValue(current)}}`,
        );
      }
      current = current[Number(part)];
    } else if (isPlainObject(current)) {
      current = current[part];
    } else {
      throw new MongoCommandError(
        'PathNotViable',
        `Cannot create field '${part}' in element {${parts[i - 1]}: ${formatValue(current)}}`,
      );
    }
  }
  return current;
}

function getPath(doc: Doc, path: string): unknown {
  let current: unknown = doc;
  for (const part of path.split('.')) {
    if (Array.isArray(current) && /^\d+$/.test(part)) current = current[Number(part)];
    else if (isPlainObject(current)) current = current[part];
    else return undefined;
  }
  return current;
}

/** `$setOnInsert` applies only when the update inserts; then it acts as `$set`. */
function modifierFor(u: Doc, inserting: boolean): Doc {
  const { $setOnInsert, ...rest } = u;
  if (!inserting || !isPlainObject($setOnInsert)) return rest;
  const $set = isPlainObject(rest.$set) ? rest.$set : {};
  for (const path of Object.keys($setOnInsert)) {
    if (path in $set) {
      throw new MongoCommandError(
        'ConflictingUpdateOperators',
        `Updating the path '${path}' would create a conflict at '${path}'`,
      );
    }
  }
  return { ...rest, $set: { ...$set, ...$setOnInsert } };
}

/**
 * The document an upsert inserts: equality fields of the query (for a modifier update),
 * then the update applied with `$setOnInsert`; `_id` first, generated when the query and
 * update give none.
 */
export function buildUpsertDocument(filter: unknown, u: unknown, arrayFilters?: unknown): Doc {
  const kind = classifyUpdate(u);
  const seed = equalitySeed(isPlainObject(filter) ? filter : {});
  let doc: Doc;
  if (kind === 'replacement') {
    const replacement = deepClone(u as Doc);
    doc = '_id' in replacement || !('_id' in seed) ? replacement : { _id: seed._id, ...replacement };
  } else if (kind === 'pipeline') {
    doc = applyUpdate({ ...seed, _id: seed._id ?? new ObjectId() }, u).doc;
  } else {
    const base = '_id' in seed ? seed : { _id: undefined, ...seed };
    const tmpId = base._id === undefined ? new ObjectId() : base._id;
    doc = applyUpdate({ ...base, _id: tmpId }, u, { arrayFilters, inserting: true }).doc;
  }
  if (doc._id === undefined) doc = { ...doc, _id: new ObjectId() };
  return withIdFirst(doc);
}

function equalitySeed(filter: Doc): Doc {
  const seed: Doc = {};
  const visit = (clause: Doc) => {
    for (const [path, cond] of Object.entries(clause)) {
      if (path === '$and' && Array.isArray(cond)) {
        for (const sub of cond) if (isPlainObject(sub)) visit(sub);
        continue;
      }
      if (path.startsWith('$') || cond instanceof RegExp) continue;
      if (isPlainObject(cond) && Object.keys(cond).some((k) => k.startsWith('$'))) {
        if (Object.keys(cond).length === 1 && '$eq' in cond) setPath(seed, path, deepClone(cond.$eq));
        continue;
      }
      setPath(seed, path, deepClone(cond));
    }
  };
  visit(filter);
  return seed;
}

function setPath(doc: Doc, path: string, value: unknown): void {
  const parts = path.split('.');
  let cursor = doc;
  for (const part of parts.slice(0, -1)) {
    if (!isPlainObject(cursor[part])) cursor[part] = {};
    cursor = cursor[part] as Doc;
  }
  cursor[parts[parts.length - 1] as string] = value;
}

/**
 * Whether two documents have the same BSON: the same fields in the same order, each with the
 * same bytes. A field both hold by reference (what a copy-on-write update left alone) is equal
 * without being encoded.
 */
function sameDocument(a: Doc, b: Doc): boolean {
  const keys = Object.keys(a);
  const other = Object.keys(b);
  if (keys.length !== other.length) return false;
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i] as string;
    if (key !== other[i]) return false;
    const x = a[key];
    const y = b[key];
    // Two NaNs may differ in bytes (their payloads), so they are compared encoded.
    if (Object.is(x, y) && !Number.isNaN(x)) continue;
    if (!Buffer.from(serialize({ v: x })).equals(serialize({ v: y }))) return false;
  }
  return true;
}

/**
 * The copy of `doc` that mingo's update operators may change in place: a new top-level object
 * sharing every field the modifier leaves alone (stored documents are frozen, so sharing is
 * safe), and a deep copy of each field it names (the first segment of every path, `$rename`
 * targets too), which is all that mingo walks into. A path that does not start with a field
 * name copies everything.
 */
function copyForModifier(doc: Doc, modifier: Doc): Doc {
  const roots = new Set<string>();
  /** Fields only ever replaced whole (`$set`/`$unset` of the field itself): nothing walks into them. */
  const replaced = new Set<string>();
  const walked = new Set<string>();
  for (const [op, fields] of Object.entries(modifier)) {
    for (const [path, arg] of Object.entries(fields as Doc)) {
      const root = path.split('.')[0] as string;
      roots.add(root);
      if ((op === '$set' || op === '$unset') && path === root) replaced.add(root);
      else walked.add(root);
      if (op === '$rename' && typeof arg === 'string') {
        roots.add(arg.split('.')[0] as string);
        walked.add(arg.split('.')[0] as string);
      }
    }
  }
  for (const root of roots) if (root === '' || root.includes('$')) return deepClone(doc);
  const next: Doc = { ...doc };
  for (const root of roots) {
    // A field the update replaces whole keeps no part of its old value: copying it (an
    // outbox's events, when the relay empties it) would be thrown away.
    if (root in next && (walked.has(root) || !replaced.has(root))) next[root] = deepClone(next[root]);
  }
  return next;
}

/**
 * Whether an update pipeline only sets top-level fields (`$set`/`$addFields` without dotted
 * names). mingo then builds each stage's output as a shallow copy of its input plus the new
 * values, reading the input only, so it can run on the stored (frozen) document itself.
 */
function onlyTopLevelFields(pipeline: Doc[]): boolean {
  return pipeline.every((stage) => {
    const spec = stage.$set ?? stage.$addFields;
    return (
      Object.keys(stage).length === 1 &&
      isPlainObject(spec) &&
      Object.keys(spec).every((field) => !field.includes('.') && !field.startsWith('$'))
    );
  });
}

function immutableId(): MongoCommandError {
  return new MongoCommandError(
    'ImmutableField',
    "Performing an update on the path '_id' would modify the immutable field '_id'",
  );
}

function updateError(err: unknown): MongoCommandError {
  const message = err instanceof Error ? err.message : String(err);
  const conflict = /updating the path '(.+)' would create a conflict at '(.+)'/i.exec(message);
  if (conflict) {
    return new MongoCommandError(
      'ConflictingUpdateOperators',
      `Updating the path '${conflict[1]}' would create a conflict at '${conflict[2]}'`,
    );
  }
  const unknownOp = /Unknown update operator: '(\$\w+)'/.exec(message);
  if (unknownOp) {
    return new MongoCommandError(
      'FailedToParse',
      `Unknown modifier: ${unknownOp[1]}. Expected a valid update modifier or pipeline-style update specified as an array`,
    );
  }
  return asBadValue(err);
}
