import { Binary, BSONRegExp, Decimal128, Double, Int32, Long, ObjectId, Timestamp } from 'bson';
import { isInt32, isNumeric, numericKey } from '../numeric/numbers';

export type Doc = Record<string, unknown>;

/** Plain data objects (documents and sub-documents), as opposed to BSON value classes. */
export function isPlainObject(value: unknown): value is Doc {
  if (value === null || typeof value !== 'object') return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/**
 * Stored documents are frozen so that no code path (ours or mingo's) can change a
 * document in place; every write builds a new document, copying what it changes.
 */
export function deepFreeze<T>(value: T): T {
  // A frozen object or array here is part of a stored document (a copy-on-write update
  // shares what it left alone), frozen to the bottom already.
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return value;
  if (Array.isArray(value)) {
    Object.freeze(value);
    for (const item of value) deepFreeze(item);
  } else if (isPlainObject(value)) {
    Object.freeze(value);
    for (const item of Object.values(value)) deepFreeze(item);
  }
  return value;
}

/** Copies plain objects and arrays; BSON value objects are immutable and shared. Dates are copied. */
export function deepClone<T>(value: T): T {
  if (Array.isArray(value)) return value.map(deepClone) as T;
  if (value instanceof Date) return new Date(value.getTime()) as T;
  if (isPlainObject(value)) {
    const out: Doc = {};
    for (const [k, v] of Object.entries(value)) out[k] = deepClone(v);
    return out as T;
  }
  return value;
}

/** Returns the document with `_id` as its first field, as the server always stores it. */
export function withIdFirst(doc: Doc): Doc {
  const keys = Object.keys(doc);
  if (keys[0] === '_id' || !('_id' in doc)) return doc;
  const out: Doc = { _id: doc._id };
  for (const k of keys) if (k !== '_id') out[k] = doc[k];
  return out;
}

/**
 * A string that is equal for two values exactly when MongoDB's index comparison treats
 * them as equal (numbers of any BSON type by exact value, dates by instant, ObjectIds by bytes).
 */
export function keyOf(value: unknown): string {
  if (value === undefined || value === null) return 'n';
  switch (typeof value) {
    case 'number':
      return `d${Object.is(value, -0) ? 0 : value}`;
    case 'string':
      return `s${value}`;
    case 'boolean':
      return value ? 'bt' : 'bf';
    case 'bigint':
      return `d${value}`;
    default:
      break;
  }
  if (value instanceof Date) return `t${value.getTime()}`;
  if (value instanceof ObjectId) return `o${value.toHexString()}`;
  if (value instanceof Int32 || value instanceof Double) return `d${value.valueOf()}`;
  if (value instanceof Long || value instanceof Decimal128) return numericKey(value);
  if (value instanceof Binary) return `x${value.sub_type}:${Buffer.from(value.buffer).toString('base64')}`;
  if (value instanceof RegExp) return `r/${value.source}/${value.flags}`;
  if (value instanceof BSONRegExp) return `r/${value.pattern}/${value.options}`;
  if (value instanceof Timestamp) return `T${value.toString()}`;
  if (Array.isArray(value)) return `a[${value.map(keyOf).join(',')}]`;
  if (isPlainObject(value)) {
    return `O{${Object.entries(value)
      .map(([k, v]) => `${JSON.stringify(k)}:${keyOf(v)}`)
      .join(',')}}`;
  }
  return `?${String(value)}`;
}

/**
 * Scalars that an equality lookup can find through an index entry. `null` is left out on
 * purpose: `{ f: null }` also matches documents where `f` is missing at any depth, which an
 * index answer would have to reproduce exactly; a scan is always right.
 */
export function isIndexableScalar(value: unknown): boolean {
  const t = typeof value;
  if (t === 'string' || t === 'number' || t === 'boolean') return true;
  return (
    value instanceof Date ||
    value instanceof ObjectId ||
    value instanceof Binary ||
    value instanceof Long ||
    value instanceof Decimal128
  );
}

/**
 * Every value reachable at a dotted path, descending through arrays the way MongoDB's
 * multikey indexes and `distinct` do. A missing value yields `undefined` once.
 */
export function valuesAtPath(value: unknown, parts: readonly string[], index = 0): unknown[] {
  if (index === parts.length) return [value];
  const part = parts[index] as string;
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    if (/^\d+$/.test(part)) out.push(...valuesAtPath(value[Number(part)], parts, index + 1));
    for (const item of value) {
      if (isPlainObject(item)) out.push(...valuesAtPath(item, parts, index));
    }
    return out.length > 0 ? out : [undefined];
  }
  if (isPlainObject(value)) return valuesAtPath(value[part], parts, index + 1);
  return [undefined];
}

/** Like `valuesAtPath`, with terminal arrays expanded into their elements. */
export function indexValuesAtPath(doc: Doc, path: string): unknown[] {
  return indexValuesAt(doc, path.split('.'));
}

/** `indexValuesAtPath` of a path already split into its segments. */
export function indexValuesAt(doc: Doc, parts: readonly string[]): unknown[] {
  // A field holding a scalar (most indexed fields): that value, without the general walk.
  if (parts.length === 1) {
    const value = doc[parts[0] as string];
    if (!Array.isArray(value)) return [value];
  }
  const out: unknown[] = [];
  for (const v of valuesAtPath(doc, parts)) {
    if (Array.isArray(v)) {
      if (v.length === 0) out.push(undefined);
      else out.push(...v);
    } else out.push(v);
  }
  return out.length > 0 ? out : [undefined];
}

/** Whether the path meets an array anywhere along it (a multikey path for an index). */
export function crossesArray(doc: Doc, parts: readonly string[]): boolean {
  let value: unknown = doc;
  for (const part of parts) {
    if (Array.isArray(value)) return true;
    if (!isPlainObject(value)) return false;
    value = value[part];
  }
  return Array.isArray(value);
}

/** Renders a value the way the server prints it inside `dup key: { ... }`. */
export function formatValue(value: unknown): string {
  if (value === undefined || value === null) return 'null';
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint')
    return String(value);
  if (value instanceof ObjectId) return `ObjectId('${value.toHexString()}')`;
  if (value instanceof Date) return `new Date(${value.getTime()})`;
  if (value instanceof Binary && value.sub_type === 4) return `UUID("${value.toUUID().toHexString()}")`;
  if (value instanceof Decimal128) return `NumberDecimal("${value.toString()}")`;
  if (Array.isArray(value)) return `[ ${value.map(formatValue).join(', ')} ]`;
  if (isPlainObject(value)) {
    const fields = Object.entries(value).map(([k, v]) => `${k}: ${formatValue(v)}`);
    return fields.length ? `{ ${fields.join(', ')} }` : '{}';
  }
  return String(value);
}

/** The BSON type name mongod uses in messages. */
export function bsonTypeName(value: unknown): string {
  if (value === null) return 'null';
  if (value === undefined) return 'missing';
  if (Array.isArray(value)) return 'array';
  if (value instanceof Date) return 'date';
  if (value instanceof ObjectId) return 'objectId';
  if (value instanceof Long) return 'long';
  if (value instanceof Decimal128) return 'decimal';
  if (value instanceof Binary) return 'binData';
  if (value instanceof RegExp || value instanceof BSONRegExp) return 'regex';
  if (value instanceof Timestamp) return 'timestamp';
  if (typeof value === 'boolean') return 'bool';
  if (typeof value === 'number') return isInt32(value) ? 'int' : 'double';
  if (typeof value === 'string') return 'string';
  return isPlainObject(value) ? 'object' : typeof value;
}

/**
 * A command option that may arrive as int64 (now that the wire keeps `Long`s) as a JS
 * number, for the checks and arithmetic that options get.
 */
export function optionNumber(value: unknown): unknown {
  return value instanceof Long ? value.toNumber() : value;
}

/** Whether a value is, or holds at any depth, a number of any BSON numeric type. */
export function containsNumber(value: unknown): boolean {
  if (isNumeric(value)) return true;
  if (Array.isArray(value)) return value.some(containsNumber);
  return isPlainObject(value) && Object.values(value).some(containsNumber);
}
