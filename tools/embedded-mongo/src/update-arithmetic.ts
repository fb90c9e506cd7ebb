import { MongoCommandError } from './errors';
import { safeAdd, safeMultiply } from './numeric/arithmetic';
import { type BsonNumber, identicalNumbers, isNumeric, numericKind } from './numeric/numbers';
import { compareValues } from './store/order';
import { bsonTypeName, type Doc, formatValue, isPlainObject } from './store/values';

const ARITHMETIC_OPERATORS = ['$inc', '$mul', '$min', '$max'] as const;
type ArithmeticOperator = (typeof ARITHMETIC_OPERATORS)[number];

/** Where an arithmetic operator will write; mingo puts it there as it would a `$set` value. */
class Pending {
  constructor(
    readonly op: ArithmeticOperator,
    readonly arg: unknown,
  ) {}
}

/**
 * mingo's `$inc`/`$mul`/`$min`/`$max` know only JS numbers and mingo's own order. They are
 * turned into `$set`s of `Pending` markers, so mingo resolves every path (positional `$`,
 * `$[]`, array filters, missing parents) exactly as it does for `$set`; `settleArithmetic`
 * then computes each marked value from the one it displaced. Returns the rewritten
 * modifier and the mingo selectors the markers occupy.
 */
export function deferArithmetic(modifier: Doc): { modifier: Doc; selectors: Set<string> } {
  const selectors = new Set<string>();
  if (!ARITHMETIC_OPERATORS.some((op) => op in modifier)) return { modifier, selectors };
  const $set: Doc = isPlainObject(modifier.$set) ? { ...modifier.$set } : {};
  const out: Doc = {};
  for (const [op, fields] of Object.entries(modifier)) {
    if (!(ARITHMETIC_OPERATORS as readonly string[]).includes(op)) {
      if (op !== '$set') out[op] = fields;
      continue;
    }
    for (const [path, arg] of Object.entries(fields as Doc)) {
      // Two operators on one path would silently merge into one `$set` key.
      if (path in $set) {
        throw new MongoCommandError(
          'ConflictingUpdateOperators',
          `Updating the path '${path}' would create a conflict at '${path}'`,
        );
      }
      $set[path] = new Pending(op as ArithmeticOperator, arg);
      selectors.add(mingoSelector(path));
    }
  }
  out.$set = $set;
  return { modifier: out, selectors };
}

/** The part of a path before its first positional segment, which mingo reports as modified. */
function mingoSelector(path: string): string {
  const parts = path.split('.');
  const positional = parts.findIndex((p) => p.startsWith('$'));
  return (positional === -1 ? parts : parts.slice(0, positional)).join('.');
}

/** Replaces the markers in `next` by their results; returns whether any value changed. */
export function settleArithmetic(next: Doc, previous: Doc, selectors: Set<string>): boolean {
  let changed = false;
  const settle = (container: Record<string, unknown>, key: string, before: unknown) => {
    const value = container[key];
    if (value instanceof Pending) {
      const result = compute(value, before, key, previous._id);
      container[key] = result;
      changed ||= before === undefined || !sameValue(result, before);
    } else if (Array.isArray(value) || isPlainObject(value)) {
      const old = Array.isArray(before) || isPlainObject(before) ? (before as Record<string, unknown>) : {};
      for (const k of Object.keys(value)) settle(value as Record<string, unknown>, k, old[k]);
    }
  };
  const roots = new Set([...selectors].map((s) => s.split('.')[0] as string));
  for (const root of roots) settle(next, root, previous[root]);
  return changed;
}

function sameValue(a: unknown, b: unknown): boolean {
  if (isNumeric(a) && isNumeric(b)) return identicalNumbers(a, b);
  return a === b;
}

function compute(pending: Pending, before: unknown, field: string, id: unknown): unknown {
  const { op, arg } = pending;
  if (op === '$min' || op === '$max') {
    if (before === undefined) return arg;
    const order = compareValues(arg, before);
    return (op === '$min' ? order < 0 : order > 0) ? arg : before;
  }
  const operand = arg as BsonNumber;
  if (before === undefined) return op === '$inc' ? operand : safeMultiply(0, operand);
  if (!isNumeric(before)) throw nonNumericTarget(op, id, field, before);
  const result = op === '$inc' ? safeAdd(before, operand) : safeMultiply(before, operand);
  if (result === undefined) {
    throw new MongoCommandError(
      'BadValue',
      `Failed to apply ${op} operations to current value (${debugString(before)}) for document {_id: ${formatValue(id)}}`,
    );
  }
  return result;
}

const DEBUG_TYPE = { int: 'NumberInt', long: 'NumberLong', double: 'NumberDouble', decimal: 'NumberDecimal' };

function debugString(value: BsonNumber): string {
  return `(${DEBUG_TYPE[numericKind(value)]})${value.toString()}`;
}

export function nonNumericTarget(op: string, id: unknown, field: string, target: unknown): MongoCommandError {
  return new MongoCommandError(
    'TypeMismatch',
    `Cannot apply ${op} to a value of non-numeric type. {_id: ${formatValue(id)}} has the field '${field}' of non-numeric type ${bsonTypeName(target)}`,
  );
}
