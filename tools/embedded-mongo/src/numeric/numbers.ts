import { Decimal128, Long } from 'bson';
import * as dec from './decimal';

/**
 * The BSON numbers as this server holds them: int32 and double arrive as JS numbers (an
 * integral number in int32 range is what the driver sends, and re-encodes, as int32), int64
 * as `Long` (the wire is read with `promoteLongs: false`) and decimal as `Decimal128`.
 */
export type BsonNumber = number | Long | Decimal128;
export type NumericKind = 'int' | 'long' | 'double' | 'decimal';

export const INT64_MIN = -(2n ** 63n);
export const INT64_MAX = 2n ** 63n - 1n;
const INT32_MIN = -2147483648;
const INT32_MAX = 2147483647;

export function isNumeric(value: unknown): value is BsonNumber {
  return typeof value === 'number' || value instanceof Long || value instanceof Decimal128;
}

/** Long or Decimal128: the values the generic (JS number) code paths would get wrong. */
export function isWideNumber(value: unknown): value is Long | Decimal128 {
  return value instanceof Long || value instanceof Decimal128;
}

export function isInt32(n: number): boolean {
  return Number.isInteger(n) && n >= INT32_MIN && n <= INT32_MAX && !Object.is(n, -0);
}

export function numericKind(value: BsonNumber): NumericKind {
  if (typeof value === 'number') return isInt32(value) ? 'int' : 'double';
  return value instanceof Long ? 'long' : 'decimal';
}

const WIDTH: Record<NumericKind, number> = { int: 0, long: 1, double: 2, decimal: 3 };

export function widest(a: NumericKind, b: NumericKind): NumericKind {
  return WIDTH[a] >= WIDTH[b] ? a : b;
}

export function toDouble(value: BsonNumber): number {
  if (typeof value === 'number') return value;
  return value instanceof Long ? value.toNumber() : Number(value.toString());
}

/** The integer behind an int or long. */
export function toBigInt(value: number | Long): bigint {
  return typeof value === 'number' ? BigInt(value) : value.toBigInt();
}

export function fitsInt64(value: bigint): boolean {
  return value >= INT64_MIN && value <= INT64_MAX;
}

export function longOf(value: bigint): Long {
  return Long.fromBigInt(value);
}

/** mongod's `createIntOrLong`: int32 when it fits, else int64. */
export function intOrLong(value: bigint): number | Long {
  return value >= BigInt(INT32_MIN) && value <= BigInt(INT32_MAX) ? Number(value) : Long.fromBigInt(value);
}

/** The decimal mongod converts a number to; doubles take `doubleDigits` significant digits. */
export function toDec(value: BsonNumber, doubleDigits: 15 | 34 = 15): dec.Dec {
  if (value instanceof Decimal128) return dec.fromDecimal128(value);
  if (value instanceof Long) return dec.fromBigInt(value.toBigInt());
  return isInt32(value) ? dec.fromBigInt(BigInt(value)) : dec.fromDouble(value, doubleDigits);
}

function exact(value: BsonNumber): dec.Dec {
  if (value instanceof Decimal128) return dec.fromDecimal128(value);
  if (value instanceof Long) return dec.fromBigInt(value.toBigInt());
  return dec.exactDouble(value);
}

/**
 * Numeric order across types by exact value, NaN below every number. Rounding to double is
 * monotonic, so differing doubles already decide; only ties need the exact values.
 */
export function compareNumbers(a: BsonNumber, b: BsonNumber): number {
  const x = toDouble(a);
  const y = toDouble(b);
  if (x < y) return -1;
  if (x > y) return 1;
  const nanX = Number.isNaN(x);
  const nanY = Number.isNaN(y);
  if (nanX || nanY) return nanX === nanY ? 0 : nanX ? -1 : 1;
  if (typeof a === 'number' && typeof b === 'number') return 0;
  return dec.compare(exact(a), exact(b));
}

/**
 * A string equal for two numbers exactly when they are numerically equal: the double's
 * text when the value is exactly a double (so plain numbers keep their cheap key), else
 * the exact decimal digits under another prefix.
 */
export function numericKey(value: BsonNumber): string {
  if (typeof value === 'number') return `d${Object.is(value, -0) ? 0 : value}`;
  const x = toDouble(value);
  if (value instanceof Long) {
    if (Number.isSafeInteger(x)) return `d${x}`;
    const big = value.toBigInt();
    return BigInt(x) === big ? `d${x}` : `D${dec.canonicalText(dec.fromBigInt(big))}`;
  }
  const d = dec.fromDecimal128(value);
  if (d.kind !== 'finite') return `d${x}`;
  if (Number.isFinite(x) && dec.compare(dec.exactDouble(x), d) === 0) return `d${x === 0 ? 0 : x}`;
  return `D${dec.canonicalText(d)}`;
}

/** Same BSON type and value: mongod's test for an update that changes nothing. */
export function identicalNumbers(a: BsonNumber, b: BsonNumber): boolean {
  const kind = numericKind(a);
  if (kind !== numericKind(b)) return false;
  if (kind === 'long') return (a as Long).equals(b as Long);
  if (kind === 'decimal') return compareNumbers(a, b) === 0 && !Number.isNaN(toDouble(a));
  return a === b;
}

/** The integer part of a number (toward zero), or undefined for NaN and infinities. */
export function truncatedBigInt(value: BsonNumber): bigint | undefined {
  if (value instanceof Long) return value.toBigInt();
  const d = value instanceof Decimal128 ? dec.fromDecimal128(value) : dec.exactDouble(value);
  return d.kind === 'finite' ? dec.truncateToBigInt(d) : undefined;
}
