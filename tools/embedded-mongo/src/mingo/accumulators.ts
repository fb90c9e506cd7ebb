import { evalExpr } from 'mingo/core';
import { $push } from 'mingo/operators/accumulator';
import { isNil } from 'mingo/util';
import { SumState } from '../numeric/arithmetic';
import { isNumeric } from '../numeric/numbers';
import { compareValues } from '../store/order';

type Accumulator = (collection: unknown[], expr: unknown, options: object) => unknown;

function inputs(collection: unknown[], expr: unknown, options: object): unknown[] {
  return ($push as (c: unknown[], e: unknown, o: object) => unknown[])(collection, expr, options);
}

function summed(collection: unknown[], expr: unknown, options: object): SumState {
  const state = new SumState();
  for (const value of inputs(collection, expr, options)) if (isNumeric(value)) state.add(value);
  return state;
}

function extreme(direction: 1 | -1): Accumulator {
  return (collection, expr, options) => {
    let best: unknown = null;
    for (const value of inputs(collection, expr, options)) {
      if (isNil(value)) continue;
      if (best === null || compareValues(value, best) * direction > 0) best = value;
    }
    return best;
  };
}

/** `$sum`, `$avg`, `$min` and `$max` over every numeric BSON type. */
export const accumulators: Record<string, Accumulator> = {
  $sum: (collection, expr, options) => summed(collection, expr, options).sum(),
  $avg: (collection, expr, options) => summed(collection, expr, options).average(),
  $max: extreme(1),
  $min: extreme(-1),
};

/**
 * The expression forms (`{ $sum: ['$a', '$b'] }`, `{ $max: '$arr' }`): a single operand that
 * is an array is traversed, a single scalar counts as one value, as on mongod. Registered as
 * expressions so mingo does not insist on an array first.
 */
export const accumulatorExpressions = Object.fromEntries(
  Object.entries(accumulators).map(([name, accumulate]) => [
    name,
    (obj: unknown, expr: unknown, options: object) => {
      // mingo's $group hands over the group's documents; that is the accumulator proper.
      if (Array.isArray(obj)) return accumulate(obj, expr, options);
      const value = evalExpr(obj, expr, options as never);
      const single = Array.isArray(expr) ? (expr.length === 1 ? (value as unknown[])[0] : undefined) : value;
      const operands = Array.isArray(expr) && expr.length !== 1 ? (value as unknown[]) : single;
      return accumulate(Array.isArray(operands) ? operands : [operands], null, options);
    },
  ]),
);
