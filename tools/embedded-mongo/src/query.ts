import { asBadValue, MongoCommandError } from './errors';
import { Aggregator, MINGO_COMPILED, MINGO_OPTIONS, Query } from './mingo/context';
import { sortDocs } from './sort';
import type { Collection } from './store/collection';
import { type AccessPlan, planAccess } from './store/planner';
import {
  type Doc,
  deepClone,
  indexValuesAtPath,
  isIndexableScalar,
  isPlainObject,
  keyOf,
  withIdFirst,
} from './store/values';

const LOGICAL_OPERATORS = new Set(['$and', '$or', '$nor']);
const OPAQUE_TOP_LEVEL = new Set([
  '$expr',
  '$where',
  '$comment',
  '$jsonSchema',
  '$text',
  '$alwaysTrue',
  '$alwaysFalse',
]);
const FIELD_OPERATORS = new Set([
  '$eq',
  '$ne',
  '$gt',
  '$gte',
  '$lt',
  '$lte',
  '$in',
  '$nin',
  '$exists',
  '$type',
  '$regex',
  '$options',
  '$not',
  '$elemMatch',
  '$size',
  '$all',
  '$mod',
  '$bitsAllSet',
  '$bitsAnySet',
  '$bitsAllClear',
  '$bitsAnyClear',
  '$geoWithin',
  '$geoIntersects',
  '$near',
  '$nearSphere',
  '$comment',
]);

/**
 * The parse-time checks mongod makes and mingo either skips or words differently, so that
 * a bad filter fails with the real code and message.
 */
export function validateFilter(filter: Doc): void {
  for (const [key, value] of Object.entries(filter)) {
    if (key.startsWith('$')) {
      if (LOGICAL_OPERATORS.has(key)) {
        if (!Array.isArray(value) || value.length === 0) {
          throw new MongoCommandError('BadValue', `${key} must be a nonempty array`);
        }
        for (const clause of value) {
          if (!isPlainObject(clause))
            throw new MongoCommandError('BadValue', `${key} argument's entries must be objects`);
          validateFilter(clause);
        }
      } else if (!OPAQUE_TOP_LEVEL.has(key)) {
        throw new MongoCommandError(
          'BadValue',
          `unknown top level operator: ${key}. If you have a field name that starts with a '$' symbol, consider using $getField or $setField.`,
        );
      }
      continue;
    }
    if (!isPlainObject(value) || !Object.keys(value)[0]?.startsWith('$')) continue;
    for (const [op, arg] of Object.entries(value)) {
      if (!FIELD_OPERATORS.has(op)) throw new MongoCommandError('BadValue', `unknown operator: ${op}`);
      if ((op === '$in' || op === '$nin' || op === '$all') && !Array.isArray(arg)) {
        throw new MongoCommandError('BadValue', `${op} needs an array`);
      }
      if (op === '$regex' && typeof arg === 'string') {
        try {
          new RegExp(
            arg,
            typeof value.$options === 'string' ? value.$options.replace(/[^imsu]/g, '') : undefined,
          );
        } catch (err) {
          throw new MongoCommandError(
            'Location51091',
            `Regular expression is invalid: ${(err as Error).message}`,
          );
        }
      }
      if (op === '$not' && isPlainObject(arg)) validateFilter({ [key]: arg });
    }
  }
}

/** Checks a sort specification the way find and $sort do. */
export function validateSort(sort: Doc): void {
  for (const direction of Object.values(sort)) {
    const isMeta = isPlainObject(direction) && '$meta' in direction;
    if (direction !== 1 && direction !== -1 && !isMeta) {
      throw new MongoCommandError(
        'Location15975',
        '$sort key ordering must be 1 (for ascending) or -1 (for descending)',
      );
    }
  }
}

/** Compiles a filter; a malformed one is the caller's BadValue, as on the real server. */
export function compileFilter(filter: unknown, field = 'filter'): Query {
  if (filter === undefined || filter === null) return new Query({}, MINGO_COMPILED);
  if (!isPlainObject(filter)) {
    throw new MongoCommandError(
      'TypeMismatch',
      `BSON field '${field}' is the wrong type, expected type 'object'`,
    );
  }
  validateFilter(filter);
  try {
    return new Query(filter, MINGO_COMPILED);
  } catch (err) {
    throw asBadValue(err);
  }
}

function optionalObject(value: unknown, field: string): Doc | undefined {
  if (value === undefined || value === null) return undefined;
  if (!isPlainObject(value)) {
    throw new MongoCommandError(
      'TypeMismatch',
      `BSON field '${field}' is the wrong type, expected type 'object'`,
    );
  }
  return Object.keys(value).length > 0 ? value : undefined;
}

/** What a query read to find its matches (for `explain`). */
export interface Selection {
  docs: Doc[];
  plan: AccessPlan;
  keysExamined: number;
  docsExamined: number;
}

/** The stored documents matching `filter`, in natural order (shared, frozen references). */
export function matchingDocs(collection: Collection | undefined, filter: unknown): Doc[] {
  return selectDocs(collection, filter).docs;
}

/** `matchingDocs` with the plan that found them and what it examined. */
export function selectDocs(collection: Collection | undefined, filter: unknown): Selection {
  if (!collection) return { docs: [], plan: { stage: 'COLLSCAN' }, keysExamined: 0, docsExamined: 0 };
  const plan = planAccess(filter, collection.secondaryIndexes());
  const { docs: source, keysExamined } = collection.fetch(plan);
  const selected = (docs: Doc[]): Selection => ({ docs, plan, keysExamined, docsExamined: source.length });
  if (plan.stage !== 'COLLSCAN' && plan.exact) return selected(source);
  const simple = isPlainObject(filter) ? scalarEqualityMatcher(filter) : undefined;
  if (simple) return selected(source.filter(simple));
  const query = compileFilter(filter);
  try {
    return selected(source.filter((doc) => query.test(doc)));
  } catch (err) {
    throw asBadValue(err);
  }
}

/**
 * A matcher for the most common filters, equality on scalar values (`{ _id: x, orgId: y }`)
 * and `$in` lists of them (`{ _id: { $in: ids } }`), and a top-level `$or` of such filters,
 * without compiling a mingo query (which
 * costs more than the lookup it serves, and tests `$in` against each element of its list in
 * turn). Equality on a scalar matches when any value at the path, or any element of an array
 * there, is equal; `$in` of scalars is equality with any one of them. Anything else
 * (operators, null, regexes, documents, arrays) goes to mingo.
 */
function scalarEqualityMatcher(filter: Doc): ((doc: Doc) => boolean) | undefined {
  const wanted: Array<[string, Set<string>]> = [];
  const alternatives: Array<Array<(doc: Doc) => boolean>> = [];
  for (const [path, cond] of Object.entries(filter)) {
    if (path === '$or' && Array.isArray(cond) && cond.length > 0) {
      // Any one of its clauses, each of them such a filter (the policy look-up of a batch).
      const clauses = cond.map((clause) =>
        isPlainObject(clause) ? scalarEqualityMatcher(clause) : undefined,
      );
      if (clauses.some((clause) => clause === undefined)) return undefined;
      alternatives.push(clauses as Array<(doc: Doc) => boolean>);
      continue;
    }
    if (path.startsWith('$')) return undefined;
    const values = scalarsWanted(cond);
    // `$in` through a dotted path stays with mingo (how it walks nested arrays is its own).
    if (!values || (values.length > 1 && path.includes('.'))) return undefined;
    wanted.push([path, new Set(values.map(keyOf))]);
  }
  return (doc) =>
    wanted.every(([path, keys]) => {
      if (!path.includes('.')) {
        const value = doc[path];
        return Array.isArray(value) ? value.some((v) => keys.has(keyOf(v))) : keys.has(keyOf(value));
      }
      return indexValuesAtPath(doc, path).some((v) => keys.has(keyOf(v)));
    }) && alternatives.every((clauses) => clauses.some((matches) => matches(doc)));
}

/** The scalars a condition is equality with: `v`, `{ $eq: v }`, `{ $in: [v, …] }`; else undefined. */
function scalarsWanted(cond: unknown): unknown[] | undefined {
  if (isIndexableScalar(cond)) return [cond];
  if (!isPlainObject(cond) || Object.keys(cond).length !== 1) return undefined;
  if ('$eq' in cond) return isIndexableScalar(cond.$eq) ? [cond.$eq] : undefined;
  const list = cond.$in;
  return Array.isArray(list) && list.length > 0 && list.every(isIndexableScalar) ? list : undefined;
}

export interface FindOptions {
  sort?: unknown;
  skip?: number;
  limit?: number;
  projection?: unknown;
}

/** find semantics: filter, then sort, skip, limit, and projection last. */
export function runFind(
  collection: Collection | undefined,
  filter: unknown,
  options: FindOptions = {},
): Doc[] {
  return shapeFound(matchingDocs(collection, filter), filter, options);
}

/** What find does after filtering: sort, skip, limit, then projection. */
export function shapeFound(matches: Doc[], filter: unknown, options: FindOptions): Doc[] {
  let docs = matches;
  const sort = optionalObject(options.sort, 'sort');
  const projection = optionalObject(options.projection, 'projection');
  if (sort) validateSort(sort);
  try {
    if (sort) docs = sortDocs(docs, sort);
    const skip = options.skip ?? 0;
    const end = options.limit ? skip + options.limit : undefined;
    if (skip > 0 || end !== undefined) docs = docs.slice(skip, end);
    if (projection) docs = project(docs, projection, filter);
  } catch (err) {
    throw asBadValue(err);
  }
  return docs;
}

const isExclusion = (v: unknown) => v === 0 || v === false;
const isSlice = (v: unknown) => isPlainObject(v) && Object.keys(v).length === 1 && '$slice' in v;

/**
 * Applies a find projection; results are new objects with `_id` first. `$slice` is done
 * here because it keeps the other fields (mingo would treat it as an inclusion).
 */
export function project(docs: Doc[], projection: Doc, filter?: unknown): Doc[] {
  let mode: 'inclusion' | 'exclusion' | undefined;
  for (const [field, value] of Object.entries(projection)) {
    if (field === '_id' || isSlice(value)) continue;
    const kind = isExclusion(value) ? 'exclusion' : 'inclusion';
    if (mode && kind !== mode) {
      throw new MongoCommandError(
        kind === 'exclusion' ? 'Location31254' : 'Location31253',
        `Cannot do ${kind} on field ${field} in ${mode} projection`,
      );
    }
    mode = kind;
  }
  const slices = Object.entries(projection).filter(([, v]) => isSlice(v)) as Array<
    [string, { $slice: unknown }]
  >;
  const rest: Doc = Object.fromEntries(Object.entries(projection).filter(([, v]) => !isSlice(v)));
  if (mode === 'inclusion') for (const [field] of slices) rest[field] = 1;
  // The filter matters only for positional projections (`arr.$`).
  const condition =
    Object.keys(projection).some((k) => k.endsWith('.$')) && isPlainObject(filter) ? filter : {};
  try {
    let out =
      Object.keys(rest).length > 0
        ? (new Query(condition, MINGO_COMPILED).find(docs, rest).all() as Doc[])
        : docs;
    if (slices.length > 0)
      out = out.map((doc) =>
        slices.reduce((d, [path, { $slice }]) => sliceAt(d, path.split('.'), $slice), doc),
      );
    return out.map(withIdFirst);
  } catch (err) {
    throw asBadValue(err);
  }
}

/** A copy of `doc` with the array at `parts` sliced; objects along the path are copied, never changed. */
function sliceAt(doc: Doc, parts: string[], spec: unknown): Doc {
  const [head, ...tail] = parts as [string, ...string[]];
  const value = doc[head];
  if (tail.length > 0) return isPlainObject(value) ? { ...doc, [head]: sliceAt(value, tail, spec) } : doc;
  if (!Array.isArray(value)) return doc;
  let sliced: unknown[];
  if (typeof spec === 'number') sliced = spec >= 0 ? value.slice(0, spec) : value.slice(spec);
  else if (Array.isArray(spec) && typeof spec[0] === 'number' && typeof spec[1] === 'number') {
    const start = spec[0] >= 0 ? spec[0] : Math.max(0, value.length + spec[0]);
    sliced = value.slice(start, start + spec[1]);
  } else throw new MongoCommandError('BadValue', '$slice only supports numbers and [skip, limit] arrays');
  return { ...doc, [head]: sliced };
}

const PIPELINE_STAGES = new Set([
  '$addFields',
  '$bucket',
  '$bucketAuto',
  '$count',
  '$densify',
  '$documents',
  '$facet',
  '$fill',
  '$graphLookup',
  '$group',
  '$limit',
  '$lookup',
  '$match',
  '$project',
  '$redact',
  '$replaceRoot',
  '$replaceWith',
  '$sample',
  '$set',
  '$setWindowFields',
  '$skip',
  '$sort',
  '$sortByCount',
  '$unionWith',
  '$unset',
  '$unwind',
]);

/** Checks every stage name; writing stages are refused so an aggregate never changes data. */
export function validatePipeline(pipeline: unknown, allowed = PIPELINE_STAGES): Doc[] {
  if (!Array.isArray(pipeline)) {
    throw new MongoCommandError(
      'TypeMismatch',
      "BSON field 'pipeline' is the wrong type, expected type 'array'",
    );
  }
  for (const stage of pipeline) {
    if (!isPlainObject(stage) || Object.keys(stage).length !== 1) {
      throw new MongoCommandError(
        'Location40323',
        'A pipeline stage specification object must contain exactly one field.',
      );
    }
    const name = Object.keys(stage)[0] as string;
    if (name === '$merge') {
      throw new MongoCommandError('CommandNotSupported', '$merge is not supported by embedded-mongod');
    }
    if (name === '$out') {
      if (stage !== pipeline[pipeline.length - 1] || !allowed.has('$match')) {
        throw new MongoCommandError('Location40601', '$out can only be the final stage in the pipeline');
      }
      continue;
    }
    if (!allowed.has(name)) {
      throw new MongoCommandError('Location40324', `Unrecognized pipeline stage name: '${name}'`);
    }
  }
  return pipeline as Doc[];
}

/**
 * `$count: name` is defined as `$group` by null + `$project` without `_id`, which yields no
 * document at all for empty input; mingo's own `$count` yields `{ name: 0 }`. Sub-pipelines
 * (`$facet`, `$lookup`, `$unionWith`) are rewritten too.
 */
function rewriteCount(pipeline: Doc[]): Doc[] {
  return pipeline.flatMap((stage): Doc[] => {
    if (typeof stage.$count === 'string') {
      return [{ $group: { _id: null, [stage.$count]: { $sum: 1 } } }, { $project: { _id: 0 } }];
    }
    if (isPlainObject(stage.$facet)) {
      const facets = Object.entries(stage.$facet).map(([k, v]) => [
        k,
        Array.isArray(v) ? rewriteCount(v as Doc[]) : v,
      ]);
      return [{ $facet: Object.fromEntries(facets) }];
    }
    for (const name of ['$lookup', '$unionWith']) {
      const spec = stage[name];
      if (isPlainObject(spec) && Array.isArray(spec.pipeline)) {
        return [{ [name]: { ...spec, pipeline: rewriteCount(spec.pipeline as Doc[]) } }];
      }
    }
    return [stage];
  });
}

/**
 * Runs an aggregation. mingo may write into its input documents, so it works on clones;
 * a leading `$match` is applied first (through the indexes) so only survivors are cloned.
 */
export function runAggregate(
  collection: Collection | undefined,
  pipeline: Doc[],
  resolveCollection: (name: string) => Doc[],
  variables?: Doc,
): Doc[] {
  let stages = pipeline;
  let input: Doc[];
  const first = stages[0];
  if (first && '$match' in first) {
    input = matchingDocs(collection, first.$match);
    stages = stages.slice(1);
  } else {
    input = collection?.all() ?? [];
  }
  const cache = new Map<string, Doc[]>();
  const collectionResolver = (name: string) => {
    let docs = cache.get(name);
    if (!docs) {
      docs = resolveCollection(name).map(deepClone);
      cache.set(name, docs);
    }
    return docs;
  };
  try {
    const out = new Aggregator(rewriteCount(stages), { ...MINGO_OPTIONS, collectionResolver, variables }).run(
      input.map(deepClone),
    );
    return (out as Doc[]).map(withIdFirst);
  } catch (err) {
    throw asBadValue(err);
  }
}
