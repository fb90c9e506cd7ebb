import { Binary, BSONRegExp, BSONSymbol, Code, DBRef, MaxKey, MinKey, ObjectId, Timestamp } from 'bson';
import { compareNumbers, isNumeric } from '../numeric/numbers';
import { isPlainObject } from './values';

/**
 * mongod's canonical order of BSON values (`woCompare`): first by type class (all numbers
 * are one class), then by value. Used for sorts, `$min`/`$max` and aggregation comparisons,
 * where values of different types are compared rather than skipped.
 */
export function typeRank(value: unknown): number {
  if (value === undefined) return 0;
  if (value === null) return 5;
  switch (typeof value) {
    case 'number':
      return 10;
    case 'string':
      return 15;
    case 'boolean':
      return 40;
    default:
      break;
  }
  if (isNumeric(value)) return 10;
  if (Array.isArray(value)) return 25;
  if (isPlainObject(value)) return 20;
  if (value instanceof Date) return 45;
  if (value instanceof ObjectId) return 35;
  if (value instanceof Binary || value instanceof Uint8Array) return 30;
  if (value instanceof BSONSymbol) return 15;
  if (value instanceof Timestamp) return 47;
  if (value instanceof RegExp || value instanceof BSONRegExp) return 50;
  if (value instanceof DBRef) return 55;
  if (value instanceof Code) return value.scope ? 65 : 60;
  if (value instanceof MinKey) return -1;
  if (value instanceof MaxKey) return 127;
  return 20;
}

const sign = (a: number | string | bigint, b: number | string | bigint) => (a < b ? -1 : a > b ? 1 : 0);

export function compareValues(a: unknown, b: unknown): number {
  // The common same-type cases first, as the general path below would order them.
  if (typeof a === 'number' && typeof b === 'number' && !Number.isNaN(a) && !Number.isNaN(b))
    return sign(a, b);
  if (typeof a === 'string' && typeof b === 'string') return sign(a, b);
  if (a instanceof Date && b instanceof Date) return sign(a.getTime(), b.getTime());
  const rank = typeRank(a);
  const other = typeRank(b);
  if (rank !== other) return sign(rank, other);
  switch (rank) {
    case 10:
      return compareNumbers(a as number, b as number);
    case 15:
      return sign(String(a), String(b));
    case 20:
      return compareEntries(Object.entries(a as object), Object.entries(b as object));
    case 25:
      return compareEntries(Object.entries(a as unknown[]), Object.entries(b as unknown[]));
    case 30:
      return compareBinary(a as Binary | Uint8Array, b as Binary | Uint8Array);
    case 35:
      return sign((a as ObjectId).toHexString(), (b as ObjectId).toHexString());
    case 40:
      return sign(Number(a), Number(b));
    case 45:
      return sign((a as Date).getTime(), (b as Date).getTime());
    case 47:
      return (a as Timestamp).compare(b as Timestamp);
    case 50:
      return compareRegExp(a as RegExp | BSONRegExp, b as RegExp | BSONRegExp);
    default:
      return sign(String(a), String(b));
  }
}

function compareEntries(a: Array<[string, unknown]>, b: Array<[string, unknown]>): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const [ka, va] = a[i] as [string, unknown];
    const [kb, vb] = b[i] as [string, unknown];
    const byType = sign(typeRank(va), typeRank(vb));
    if (byType !== 0) return byType;
    const byName = sign(ka, kb);
    if (byName !== 0) return byName;
    const byValue = compareValues(va, vb);
    if (byValue !== 0) return byValue;
  }
  return sign(a.length, b.length);
}

function bytesOf(value: Binary | Uint8Array): { bytes: Uint8Array; subType: number } {
  return value instanceof Binary
    ? { bytes: value.buffer, subType: value.sub_type }
    : { bytes: value, subType: 0 };
}

function compareBinary(a: Binary | Uint8Array, b: Binary | Uint8Array): number {
  const x = bytesOf(a);
  const y = bytesOf(b);
  if (x.bytes.length !== y.bytes.length) return sign(x.bytes.length, y.bytes.length);
  if (x.subType !== y.subType) return sign(x.subType, y.subType);
  return Buffer.compare(Buffer.from(x.bytes), Buffer.from(y.bytes));
}

function compareRegExp(a: RegExp | BSONRegExp, b: RegExp | BSONRegExp): number {
  const parts = (r: RegExp | BSONRegExp) =>
    r instanceof RegExp ? [r.source, r.flags] : [r.pattern, r.options];
  const [pa, fa] = parts(a) as [string, string];
  const [pb, fb] = parts(b) as [string, string];
  return sign(pa, pb) || sign(fa, fb);
}

export function valuesEqual(a: unknown, b: unknown): boolean {
  return compareValues(a, b) === 0;
}
