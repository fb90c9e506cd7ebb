import type { Index } from './indexes';
import { impliesPartialFilter } from './partial-filter';
import { type FieldPredicate, fieldPredicates } from './predicates';
import type { FieldRange } from './sorted-entries';
import { type Doc, isIndexableScalar, isPlainObject } from './values';

/** Beyond this many `$in` combinations over an index's fields, one scan is cheaper. */
const MAX_LOOKUP_COMBINATIONS = 1000;

/**
 * How a query reaches the documents it then tests (stage names as in mongod's explain):
 * every document, the `_id` map, or one index read by equality on its leading fields
 * (`prefix`: the values allowed per field) and optionally a range on the next one.
 * `exact`: the filter is nothing but those equalities, so every document reached matches
 * and testing it again would only repeat the lookup.
 */
export type AccessPlan =
  | { stage: 'COLLSCAN' }
  | { stage: 'IDHACK'; ids: unknown[]; exact: boolean }
  | { stage: 'IXSCAN'; index: Index; prefix: unknown[][]; range?: FieldRange; exact: boolean }
  /** A top-level `$or` whose every clause has an access of its own: the union of what they reach. */
  | { stage: 'OR'; plans: AccessPlan[]; exact: false };

const COLLSCAN: AccessPlan = { stage: 'COLLSCAN' };

/**
 * Picks the access for a filter: `_id` equality first; else the index that pins the most
 * leading fields by equality (a unique index pinned on every field wins outright), then one
 * with a range on the field after them; else a scan. A sparse index serves only what its
 * pinned fields imply exists, which every usable plan does; a partial index only a query
 * that implies its filter.
 */
export function planAccess(filter: unknown, indexes: Iterable<Index>): AccessPlan {
  if (!isPlainObject(filter)) return COLLSCAN;
  const predicates = fieldPredicates(filter);
  if (predicates.size === 0) return orPlan(filter, indexes);
  const ids = predicates.get('_id')?.equals;
  if (ids) return { stage: 'IDHACK', ids, exact: onlyEqualityOn(filter, ['_id']) };
  let best: { plan: AccessPlan; score: number[] } | undefined;
  for (const index of indexes) {
    const candidate = indexPlan(index, predicates, filter);
    if (candidate && (!best || isBetter(candidate.score, best.score))) best = candidate;
  }
  return best?.plan ?? orPlan(filter, indexes);
}

/**
 * A filter with a top-level `$or` (`{ $or: [{ _id: { $in: ids } }, { policyNumber: { $in:
 * numbers } }] }`) reaches through each clause's own access when every clause has one: a
 * document the filter matches matches some clause, which that clause's access reaches. The
 * union is a superset of the matches, so each document is still tested (never exact).
 */
function orPlan(filter: Doc, indexes: Iterable<Index>): AccessPlan {
  const clauses = filter.$or;
  if (!Array.isArray(clauses) || clauses.length === 0) return COLLSCAN;
  const available = [...indexes];
  const plans: AccessPlan[] = [];
  for (const clause of clauses) {
    const plan = planAccess(clause, available);
    if (plan.stage === 'COLLSCAN') return COLLSCAN;
    plans.push(plan);
  }
  return { stage: 'OR', plans, exact: false };
}

function indexPlan(
  index: Index,
  predicates: Map<string, FieldPredicate>,
  filter: Doc,
): { plan: AccessPlan; score: number[] } | undefined {
  if (index.special) return undefined;
  const prefix: unknown[][] = [];
  for (const field of index.fields) {
    const equals = predicates.get(field)?.equals;
    if (!equals) break;
    prefix.push(equals);
  }
  const next = index.fields[prefix.length];
  let range = next === undefined ? undefined : predicates.get(next)?.range;
  if (prefix.length === 0 && !range) return undefined;
  const partial = index.spec.partialFilterExpression;
  if (partial && !impliesPartialFilter(predicates, partial)) return undefined;
  if (prefix.reduce((n, values) => n * values.length, 1) > MAX_LOOKUP_COMBINATIONS) return undefined;
  // On a field that has held arrays, `$gt` and `$lt` may each be met by a different element
  // of one document: only one bound may narrow the scan.
  if (range?.lower && range.upper && index.isMultikeyField(prefix.length)) {
    range = { rank: range.rank, lower: range.lower };
  }
  const pinned = prefix.length === index.fields.length;
  // Exact only for key-map lookups (every field pinned): a scan of a prefix compares in
  // canonical order, where a few distinct keys (a string and a symbol) compare equal.
  const exact = pinned && !range && onlyEqualityOn(filter, index.fields);
  const plan: AccessPlan = range
    ? { stage: 'IXSCAN', index, prefix, range, exact }
    : { stage: 'IXSCAN', index, prefix, exact };
  return { plan, score: [pinned && index.unique ? 1 : 0, prefix.length, range ? 1 : 0] };
}

/**
 * Whether the filter is only equality (`v` or `{ $eq: v }`, a non-null scalar) on these
 * fields. The index holds a document under each value at the field's path (array elements
 * included) by `keyOf`, exactly what `scalarEqualityMatcher` (query.ts) tests for such a
 * filter, so the documents a lookup returns are its matches. (`$in` goes to mingo, whose
 * paths through nested arrays differ, so its matches are tested.)
 */
function onlyEqualityOn(filter: Doc, fields: readonly string[]): boolean {
  let count = 0;
  for (const [field, cond] of Object.entries(filter)) {
    if (!fields.includes(field)) return false;
    count++;
    if (isIndexableScalar(cond)) continue;
    if (!isPlainObject(cond)) return false;
    const ops = Object.keys(cond);
    if (ops.length !== 1 || ops[0] !== '$eq' || !isIndexableScalar(cond.$eq)) return false;
  }
  return count === fields.length;
}

function isBetter(score: number[], than: number[]): boolean {
  for (let i = 0; i < score.length; i++) {
    if ((score[i] as number) !== (than[i] as number)) return (score[i] as number) > (than[i] as number);
  }
  return false;
}
