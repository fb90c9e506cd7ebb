import { evalExpr } from 'mingo/core';
import type { Iterator } from 'mingo/lazy';
import { $group as builtinGroup } from 'mingo/operators/pipeline';
import { containsNumber, isPlainObject, keyOf } from '../store/values';

/**
 * Group keys that are equal numbers of different types (5, int64 5, decimal 5.0) form one
 * group on mongod, keyed by the first value seen. mingo compares keys by JS identity and
 * class, so each key is swapped for the first numerically equal key of this stage.
 */
class GroupKeys {
  private readonly seen = new Map<string, unknown>();

  canonical(value: unknown): unknown {
    if (!containsNumber(value)) return value;
    const key = keyOf(value);
    if (!this.seen.has(key)) this.seen.set(key, value);
    return this.seen.get(key);
  }
}

/** The expression the rewritten `_id` runs: the original key expression, made canonical. */
export const $groupKey = (obj: unknown, expr: unknown, options: object): unknown => {
  const [idExpression, keys] = expr as [unknown, GroupKeys];
  return keys.canonical(evalExpr(obj, idExpression, options as never));
};

export function $group(collection: Iterator, spec: unknown, options: object): Iterator {
  const group = builtinGroup as (c: Iterator, s: unknown, o: object) => Iterator;
  if (!isPlainObject(spec) || !('_id' in spec)) return group(collection, spec, options);
  // The GroupKeys instance is not a plain object, so mingo passes it through as a literal.
  return group(collection, { ...spec, _id: { $groupKey: [spec._id, new GroupKeys()] } }, options);
}
