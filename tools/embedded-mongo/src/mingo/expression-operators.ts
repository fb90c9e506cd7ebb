import { Decimal128, Long } from 'bson';
import { evalExpr } from 'mingo/core';
import * as builtin from 'mingo/operators/expression';
import { isNil } from 'mingo/util';
import { AddState, divideNumbers, MultiplyState, subtractNumbers } from '../numeric/arithmetic';
import * as dec from '../numeric/decimal';
import {
  fitsInt64,
  INT64_MIN,
  isInt32,
  isNumeric,
  isWideNumber,
  toDec,
  toDouble,
  truncatedBigInt,
} from '../numeric/numbers';
import { compareValues } from '../store/order';
import { bsonTypeName } from '../store/values';

type ExpressionOperator = (obj: unknown, expr: unknown, options: object) => unknown;

/**
 * Aggregation expressions with mongod's numeric rules (see `numeric/arithmetic`) and its
 * total order for comparisons. Each evaluates its arguments once with mingo's `evalExpr`.
 */
const evaluate = (obj: unknown, expr: unknown, options: object) => evalExpr(obj, expr, options as never);

function argumentList(name: string, obj: unknown, expr: unknown, options: object): unknown[] {
  const args = evaluate(obj, expr, options);
  if (!Array.isArray(args)) throw new Error(`${name} expression must resolve to an array`);
  return args;
}

function pair(name: string, obj: unknown, expr: unknown, options: object): [unknown, unknown] {
  const args = argumentList(name, obj, expr, options);
  if (args.length !== 2)
    throw new Error(`Expression ${name} takes exactly 2 arguments. ${args.length} were passed in.`);
  return [args[0], args[1]];
}

function singleArgument(obj: unknown, expr: unknown, options: object): unknown {
  const value = evaluate(obj, expr, options);
  return Array.isArray(expr) && expr.length === 1 && Array.isArray(value) ? value[0] : value;
}

const $add: ExpressionOperator = (obj, expr, options) => {
  const state = new AddState();
  let date: Date | undefined;
  for (const value of argumentList('$add', obj, expr, options)) {
    if (isNil(value)) return null;
    if (value instanceof Date) {
      if (date) throw new Error('only one date allowed in an $add expression');
      date = value;
    } else if (isNumeric(value)) state.add(value);
    else throw new Error(`$add only supports numeric or date types, not ${bsonTypeName(value)}`);
  }
  const total = state.value();
  return date ? new Date(date.getTime() + Math.round(toDouble(total))) : total;
};

const $multiply: ExpressionOperator = (obj, expr, options) => {
  const state = new MultiplyState();
  for (const value of argumentList('$multiply', obj, expr, options)) {
    if (isNil(value)) return null;
    if (!isNumeric(value))
      throw new Error(`$multiply only supports numeric types, not ${bsonTypeName(value)}`);
    state.multiply(value);
  }
  return state.value();
};

const $subtract: ExpressionOperator = (obj, expr, options) => {
  const [a, b] = pair('$subtract', obj, expr, options);
  if (isNil(a) || isNil(b)) return null;
  if (isNumeric(a) && isNumeric(b)) return subtractNumbers(a, b);
  // date - date is a number of milliseconds, as an int64.
  if (a instanceof Date && b instanceof Date) return Long.fromNumber(a.getTime() - b.getTime());
  if (a instanceof Date && isNumeric(b)) return new Date(a.getTime() - Math.round(toDouble(b)));
  throw new Error(`can't $subtract ${bsonTypeName(b)} from ${bsonTypeName(a)}`);
};

const $divide: ExpressionOperator = (obj, expr, options) => {
  const [a, b] = pair('$divide', obj, expr, options);
  if (isNumeric(a) && isNumeric(b)) {
    const quotient = divideNumbers(a, b);
    if (quotient === undefined) throw new Error("can't $divide by zero");
    return quotient;
  }
  if (isNil(a) || isNil(b)) return null;
  throw new Error(`$divide only supports numeric types, not ${bsonTypeName(a)} and ${bsonTypeName(b)}`);
};

const $abs: ExpressionOperator = (obj, expr, options) => {
  const arg = singleArgument(obj, expr, options);
  if (isNil(arg)) return null;
  if (arg instanceof Long) {
    if (arg.toBigInt() === INT64_MIN) throw new Error("can't take $abs of long long min");
    return arg.isNegative() ? arg.negate() : arg;
  }
  if (arg instanceof Decimal128) {
    const d = dec.fromDecimal128(arg);
    return d.kind === 'nan' ? arg : dec.toDecimal128({ ...d, neg: false });
  }
  if (typeof arg === 'number') return Math.abs(arg);
  throw new Error(`$abs only supports numeric types, not ${bsonTypeName(arg)}`);
};

function comparison(name: string, test: (order: number) => unknown): ExpressionOperator {
  return (obj, expr, options) => {
    const [a, b] = pair(name, obj, expr, options);
    return test(compareValues(a, b));
  };
}

const $in: ExpressionOperator = (obj, expr, options) => {
  const [item, list] = pair('$in', obj, expr, options);
  if (!Array.isArray(list))
    throw new Error(`$in requires an array as a second argument, found: ${bsonTypeName(list)}`);
  return list.some((v) => compareValues(v, item) === 0);
};

const $type: ExpressionOperator = (obj, expr, options) => {
  const arg = singleArgument(obj, expr, options);
  if (typeof arg === 'number') return isInt32(arg) ? 'int' : 'double';
  if (arg instanceof Long) return 'long';
  if (arg instanceof Decimal128) return 'decimal';
  return (builtin.$type as ExpressionOperator)(obj, { $literal: arg }, options);
};

const $toLong: ExpressionOperator = (obj, expr, options) => {
  const value = singleArgument(obj, expr, options);
  if (isNil(value)) return null;
  if (value instanceof Long) return value;
  let integer: bigint | undefined;
  if (isNumeric(value)) integer = truncatedBigInt(value);
  else if (value instanceof Date) integer = BigInt(value.getTime());
  else if (typeof value === 'boolean') integer = value ? 1n : 0n;
  else if (typeof value === 'string' && /^\s*[-+]?\d+\s*$/.test(value)) integer = BigInt(value.trim());
  if (integer === undefined || !fitsInt64(integer)) {
    throw new Error(`Failed to parse number '${String(value)}' in $convert with no onError value`);
  }
  return Long.fromBigInt(integer);
};

const $toDecimal: ExpressionOperator = (obj, expr, options) => {
  const value = singleArgument(obj, expr, options);
  if (isNil(value)) return null;
  if (value instanceof Decimal128) return value;
  if (isNumeric(value)) return dec.toDecimal128(toDec(value));
  if (value instanceof Date) return Decimal128.fromString(String(value.getTime()));
  if (typeof value === 'boolean') return Decimal128.fromString(value ? '1' : '0');
  if (typeof value === 'string') return Decimal128.fromStringWithRounding(value.trim());
  throw new Error(
    `Unsupported conversion from ${bsonTypeName(value)} to decimal in $convert with no onError value`,
  );
};

const $isNumber: ExpressionOperator = (obj, expr, options) => isNumeric(singleArgument(obj, expr, options));

/**
 * The remaining numeric operators take JS numbers; an int64 or decimal argument is passed
 * as the nearest double (exact up to 2^53), which is what they computed before.
 */
function asDoubles(original: unknown): ExpressionOperator {
  const op = original as ExpressionOperator;
  return (obj, expr, options) => {
    const value = evaluate(obj, expr, options);
    const plain = (v: unknown) => ({ $literal: isWideNumber(v) ? toDouble(v) : v });
    return op(obj, Array.isArray(value) ? value.map(plain) : plain(value), options);
  };
}

const DOUBLE_OPERATORS = [
  '$ceil',
  '$floor',
  '$round',
  '$trunc',
  '$exp',
  '$ln',
  '$log',
  '$log10',
  '$pow',
  '$sqrt',
  '$mod',
  '$toDouble',
  '$toInt',
] as const;

export const expressionOperators: Record<string, ExpressionOperator> = {
  $add,
  $subtract,
  $multiply,
  $divide,
  $abs,
  $cmp: comparison('$cmp', (o) => Math.sign(o)),
  $eq: comparison('$eq', (o) => o === 0),
  $ne: comparison('$ne', (o) => o !== 0),
  $gt: comparison('$gt', (o) => o > 0),
  $gte: comparison('$gte', (o) => o >= 0),
  $lt: comparison('$lt', (o) => o < 0),
  $lte: comparison('$lte', (o) => o <= 0),
  $in,
  $type,
  $isNumber,
  $toLong,
  $toDecimal,
  ...Object.fromEntries(
    DOUBLE_OPERATORS.map((name) => [name, asDoubles((builtin as Record<string, unknown>)[name])]),
  ),
};
