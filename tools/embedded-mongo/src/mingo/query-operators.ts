import { Decimal128, Long } from 'bson';
import * as builtin from 'mingo/operators/query';
import { ensureArray, flatten, isNil, resolve } from 'mingo/util';
import { type BsonNumber, compareNumbers, isInt32, isNumeric, toDouble } from '../numeric/numbers';
import { containsNumber, isPlainObject, keyOf } from '../store/values';

type Predicate = (value: unknown) => boolean;
type QueryOperator = (selector: string, value: unknown, options: object) => (obj: unknown) => boolean;

/**
 * Field operators that treat every numeric BSON type as a number. Where the query value
 * involves no number they hand over to mingo unchanged, so only numeric matching changes.
 */
function fieldOperator(
  original: unknown,
  applies: (value: unknown) => boolean,
  matcher: (value: unknown) => (candidates: unknown[], raw: unknown) => boolean,
): QueryOperator {
  const fallback = original as QueryOperator;
  return (selector, value, options) => {
    if (!applies(value)) return fallback(selector, value, options);
    const depth = selector.split('.').length - 1;
    const matches = matcher(value);
    return (obj) => {
      const raw = resolve(obj as Record<string, unknown>, selector, { unwrapArray: true });
      // A path through arrays yields nested arrays; mongod compares the leaves.
      const candidates = ensureArray(raw);
      return matches(depth > 0 ? [...candidates, ...flatten(candidates, depth)] : candidates, raw);
    };
  };
}

const isNumberBound = (value: unknown) => isNumeric(value);
const isNumericList = (value: unknown) => Array.isArray(value) && value.some(containsNumber);

/**
 * mongod compares a number only with numbers (type bracketing), and NaN only equals NaN:
 * `$gt`/`$lt` never match it, `$gte`/`$lte` only when both sides are NaN.
 */
function range(test: (order: number) => boolean, nanMatchesNaN: boolean) {
  return (value: unknown) => {
    const bound = value as BsonNumber;
    const boundIsNaN = Number.isNaN(toDouble(bound));
    return (candidates: unknown[]) =>
      candidates.some((v) => {
        if (!isNumeric(v)) return false;
        const valueIsNaN = Number.isNaN(toDouble(v));
        if (boundIsNaN || valueIsNaN) return nanMatchesNaN && boundIsNaN && valueIsNaN;
        return test(compareNumbers(v, bound));
      });
  };
}

function equality(target: unknown): (candidates: unknown[], raw: unknown) => boolean {
  const key = keyOf(target);
  return (candidates, raw) => keyOf(raw) === key || candidates.some((v) => keyOf(v) === key);
}

function membership(list: unknown): (candidates: unknown[], raw: unknown) => boolean {
  const values = list as unknown[];
  const keys = new Set(values.filter((v) => !(v instanceof RegExp)).map(keyOf));
  const patterns = values.filter((v): v is RegExp => v instanceof RegExp);
  const matchesNull = values.some((v) => v === null);
  return (candidates, raw) => {
    if (isNil(raw)) return matchesNull;
    if (keys.has(keyOf(raw))) return true;
    return candidates.some(
      (v) => keys.has(keyOf(v)) || (typeof v === 'string' && patterns.some((re) => re.test(v))),
    );
  };
}

/** `$all` of plain values is `$and` of equalities; lists with `$elemMatch` stay mingo's. */
function allOf(list: unknown): (candidates: unknown[], raw: unknown) => boolean {
  const values = list as unknown[];
  const tests = values.map((v) =>
    v instanceof RegExp
      ? (candidates: unknown[]) => candidates.some((c) => typeof c === 'string' && v.test(c))
      : equality(v),
  );
  return (candidates, raw) => values.length > 0 && tests.every((test) => test(candidates, raw));
}

const isPlainNumericList = (value: unknown) =>
  isNumericList(value) && !(value as unknown[]).some((v) => isPlainObject(v) && '$elemMatch' in v);

const negate =
  (make: (value: unknown) => (candidates: unknown[], raw: unknown) => boolean) => (value: unknown) => {
    const matches = make(value);
    return (candidates: unknown[], raw: unknown) => !matches(candidates, raw);
  };

const TYPE_TESTS: Record<string, Predicate> = {
  int: (v) => typeof v === 'number' && isInt32(v),
  long: (v) => v instanceof Long,
  double: (v) => typeof v === 'number' && !isInt32(v),
  decimal: (v) => v instanceof Decimal128,
  number: isNumeric,
};
const TYPE_CODES: Record<number, string> = { 1: 'double', 16: 'int', 18: 'long', 19: 'decimal' };

function typeTest(type: unknown): Predicate | undefined {
  const name = typeof type === 'number' ? TYPE_CODES[type] : type;
  return typeof name === 'string' ? TYPE_TESTS[name] : undefined;
}

/** `$type` with the numeric aliases answered from the value's actual BSON type. */
const $type: QueryOperator = (selector, value, options) => {
  const types = Array.isArray(value) ? value : [value];
  const numeric = types.map(typeTest);
  if (numeric.every((t) => t === undefined))
    return (builtin.$type as QueryOperator)(selector, value, options);
  const others = types.filter((_, i) => numeric[i] === undefined);
  const rest = others.length > 0 ? (builtin.$type as QueryOperator)(selector, others, options) : () => false;
  const tests = numeric.filter((t): t is Predicate => t !== undefined);
  return (obj) => {
    const raw = resolve(obj as Record<string, unknown>, selector, { unwrapArray: true });
    return ensureArray(raw).some((v) => tests.some((t) => t(v))) || rest(obj);
  };
};

export const queryOperators = {
  $eq: fieldOperator(builtin.$eq, containsNumber, equality),
  $ne: fieldOperator(builtin.$ne, containsNumber, negate(equality)),
  $in: fieldOperator(builtin.$in, isNumericList, membership),
  $nin: fieldOperator(builtin.$nin, isNumericList, negate(membership)),
  $all: fieldOperator(builtin.$all, isPlainNumericList, allOf),
  $gt: fieldOperator(
    builtin.$gt,
    isNumberBound,
    range((o) => o > 0, false),
  ),
  $gte: fieldOperator(
    builtin.$gte,
    isNumberBound,
    range((o) => o >= 0, true),
  ),
  $lt: fieldOperator(
    builtin.$lt,
    isNumberBound,
    range((o) => o < 0, false),
  ),
  $lte: fieldOperator(
    builtin.$lte,
    isNumberBound,
    range((o) => o <= 0, true),
  ),
  $type,
};
