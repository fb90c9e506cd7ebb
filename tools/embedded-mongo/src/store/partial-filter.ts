import { isNumeric, toDouble } from '../numeric/numbers';
import { compareValues, typeRank } from './order';
import type { FieldPredicate } from './predicates';
import { type Doc, isIndexableScalar, isPlainObject } from './values';

/**
 * Whether every document matching a query with these field predicates also matches a
 * partial index's `partialFilterExpression`, so the index holds all of the query's matches
 * (mongod's rule for using a partial index). Understood: equality, `$eq`, `$in`, `$gt`,
 * `$gte`, `$lt`, `$lte`, `$exists: true` on fields, and `$and` of those; anything else
 * answers false and the query scans, which is always correct.
 *
 * Each of these conditions holds for a document when one value at its path satisfies it, so
 * a query value satisfying it is enough.
 */
export function impliesPartialFilter(predicates: Map<string, FieldPredicate>, filter: Doc): boolean {
  for (const [field, cond] of Object.entries(filter)) {
    if (field === '$and') {
      if (!Array.isArray(cond)) return false;
      if (!cond.every((clause) => isPlainObject(clause) && impliesPartialFilter(predicates, clause)))
        return false;
      continue;
    }
    if (field.startsWith('$')) return false;
    const predicate = predicates.get(field);
    if (!predicate) return false;
    const conditions: Array<[string, unknown]> = isPlainObject(cond) ? Object.entries(cond) : [['$eq', cond]];
    if (conditions.length === 0) return false;
    for (const [op, arg] of conditions) {
      if (!implies(predicate, op, arg)) return false;
    }
  }
  return true;
}

function implies(predicate: FieldPredicate, op: string, arg: unknown): boolean {
  if (predicate.equals) return predicate.equals.every((value) => satisfies(value, op, arg));
  const { range } = predicate;
  switch (op) {
    case '$exists':
      return (arg === true || arg === 1) && (predicate.exists === true || range !== undefined);
    case '$gt':
    case '$gte': {
      const lower = range?.lower;
      if (!lower || !isComparable(arg) || typeRank(arg) !== range.rank) return false;
      const order = compareValues(lower.value, arg);
      return order > 0 || (order === 0 && (op === '$gte' || !lower.inclusive));
    }
    case '$lt':
    case '$lte': {
      const upper = range?.upper;
      if (!upper || !isComparable(arg) || typeRank(arg) !== range.rank) return false;
      const order = compareValues(upper.value, arg);
      return order < 0 || (order === 0 && (op === '$lte' || !upper.inclusive));
    }
    default:
      return false;
  }
}

/**
 * Scalars the range operators order like the index does. NaN is not: it sorts below every
 * number, yet `$gt`/`$lt` never match it and a NaN bound matches nothing.
 */
function isComparable(value: unknown): boolean {
  if (!isIndexableScalar(value)) return false;
  return !isNumeric(value) || !Number.isNaN(toDouble(value));
}

/** Whether a field holding exactly `value` (a non-null scalar) satisfies `{ [op]: arg }`. */
function satisfies(value: unknown, op: string, arg: unknown): boolean {
  switch (op) {
    case '$eq':
      return isIndexableScalar(arg) && compareValues(value, arg) === 0;
    case '$in':
      return (
        Array.isArray(arg) && arg.some((item) => isIndexableScalar(item) && compareValues(value, item) === 0)
      );
    case '$exists':
      return arg === true || arg === 1;
    case '$gt':
    case '$gte':
    case '$lt':
    case '$lte': {
      if (!isComparable(arg) || !isComparable(value) || typeRank(arg) !== typeRank(value)) return false;
      const order = compareValues(value, arg);
      if (op === '$gt') return order > 0;
      if (op === '$gte') return order >= 0;
      if (op === '$lt') return order < 0;
      return order <= 0;
    }
    default:
      return false;
  }
}
