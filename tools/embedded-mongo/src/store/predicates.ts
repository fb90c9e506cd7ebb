import { Decimal128, Long, ObjectId } from 'bson';
import { toDouble } from '../numeric/numbers';
import { typeRank } from './order';
import type { FieldRange } from './sorted-entries';
import { type Doc, isIndexableScalar, isPlainObject } from './values';

/**
 * What a filter requires of one field, as far as an index can use it. Every part is implied
 * by the filter (its top level and `$and` clauses), so a document the filter matches always
 * satisfies it; the filter itself is still tested on each document found.
 */
export interface FieldPredicate {
  /** The field equals one of these scalars (`v`, `{ $eq: v }`, `{ $in: [...] }`). */
  equals?: unknown[];
  /** From `$gt`/`$gte`/`$lt`/`$lte` with a number, string, date or ObjectId. */
  range?: FieldRange;
  /** `{ $exists: true }`. */
  exists?: boolean;
}

const RANGE_OPERATORS = new Set(['$gt', '$gte', '$lt', '$lte']);

/**
 * Bounds whose matches an index range can enumerate: the comparison operators compare these
 * types with values of the same type only (type bracketing), in the same order as the
 * index. NaN is left out (it sorts below every number but matches no `$gt`/`$lt`).
 */
function isRangeBound(value: unknown): boolean {
  if (typeof value === 'number' || value instanceof Long || value instanceof Decimal128) {
    return !Number.isNaN(toDouble(value));
  }
  if (value instanceof Date) return !Number.isNaN(value.getTime());
  return typeof value === 'string' || value instanceof ObjectId;
}

/** The fields a filter constrains, from its top level and its `$and` clauses. */
export function fieldPredicates(filter: Doc): Map<string, FieldPredicate> {
  const out = new Map<string, FieldPredicate>();
  const visit = (clause: Doc) => {
    for (const [field, cond] of Object.entries(clause)) {
      if (field === '$and' && Array.isArray(cond)) {
        for (const sub of cond) if (isPlainObject(sub)) visit(sub);
        continue;
      }
      if (field.startsWith('$')) continue;
      const predicate = predicateOf(cond);
      if (!predicate) continue;
      // Two clauses on one field must both hold; keeping either one is still implied.
      const existing = out.get(field);
      out.set(field, existing ? { ...predicate, ...existing } : predicate);
    }
  };
  visit(filter);
  return out;
}

function predicateOf(cond: unknown): FieldPredicate | undefined {
  if (isIndexableScalar(cond)) return { equals: [cond] };
  if (!isPlainObject(cond)) return undefined;
  const ops = Object.keys(cond);
  if (ops.length === 0 || !ops.every((op) => op.startsWith('$'))) return undefined;
  const out: FieldPredicate = {};
  if (isIndexableScalar(cond.$eq)) out.equals = [cond.$eq];
  else if (Array.isArray(cond.$in) && cond.$in.length > 0 && cond.$in.every(isIndexableScalar))
    out.equals = cond.$in;
  if (cond.$exists === true || cond.$exists === 1) out.exists = true;
  const range = rangeOf(cond);
  if (range) out.range = range;
  return out.equals || out.range || out.exists ? out : undefined;
}

function rangeOf(cond: Doc): FieldRange | undefined {
  let range: FieldRange | undefined;
  for (const op of Object.keys(cond)) {
    if (!RANGE_OPERATORS.has(op)) continue;
    const value = cond[op];
    if (!isRangeBound(value)) continue;
    const rank = typeRank(value);
    // Bounds of two types cannot both hold for one value; the first one found is kept.
    if (range && range.rank !== rank) continue;
    range ??= { rank };
    const bound = { value, inclusive: op === '$gte' || op === '$lte' };
    if (op === '$gt' || op === '$gte') range.lower = bound;
    else range.upper = bound;
  }
  return range;
}
