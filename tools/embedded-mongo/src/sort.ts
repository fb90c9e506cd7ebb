import type { Iterator } from 'mingo/lazy';
import { Lazy } from 'mingo/lazy';
import { compareValues } from './store/order';
import { type Doc, isPlainObject } from './store/values';

/**
 * mongod's sort: numbers of every type by value and other types in canonical BSON order; a
 * missing field sorts as null, an array by its smallest element ascending (largest
 * descending), an empty array below null. Equal keys keep their input order.
 */
export function sortDocs<T extends Doc>(docs: readonly T[], spec: Record<string, unknown>): T[] {
  const fields = Object.entries(spec)
    .filter(([, direction]) => direction === 1 || direction === -1)
    .map(([path, direction]) => ({ parts: path.split('.'), direction: direction as 1 | -1 }));
  if (fields.length === 0) return [...docs];
  const keyed = docs.map((doc, index) => ({
    doc,
    index,
    keys: fields.map(({ parts, direction }) => sortKey(doc, parts, direction)),
  }));
  keyed.sort((a, b) => {
    for (let f = 0; f < fields.length; f++) {
      const order = compareValues(a.keys[f], b.keys[f]) * (fields[f] as { direction: number }).direction;
      if (order !== 0) return order;
    }
    return a.index - b.index;
  });
  return keyed.map((k) => k.doc);
}

function sortKey(doc: Doc, parts: string[], direction: 1 | -1): unknown {
  const values: unknown[] = [];
  collect(doc, parts, 0, values);
  let key = values[0];
  for (let i = 1; i < values.length; i++) {
    if (compareValues(values[i], key) * direction < 0) key = values[i];
  }
  return key;
}

/** The values a path yields, descending through arrays like a multikey index; `undefined` stands for `[]`. */
function collect(value: unknown, parts: string[], i: number, out: unknown[]): void {
  if (i === parts.length) {
    if (!Array.isArray(value)) out.push(value === undefined ? null : value);
    else if (value.length === 0) out.push(undefined);
    else out.push(...value);
    return;
  }
  const part = parts[i] as string;
  if (Array.isArray(value)) {
    if (value.length === 0) out.push(null);
    if (/^\d+$/.test(part) && Number(part) < value.length) collect(value[Number(part)], parts, i + 1, out);
    for (const item of value) {
      if (isPlainObject(item)) collect(item, parts, i, out);
      else out.push(null);
    }
  } else if (isPlainObject(value)) collect(value[part], parts, i + 1, out);
  else out.push(null);
}

/** The aggregation `$sort` stage with the same order as find's sort. */
export function $sort(collection: Iterator, spec: unknown): Iterator {
  if (!isPlainObject(spec) || Object.keys(spec).length === 0)
    throw new Error('$sort specification is invalid');
  return collection.transform((items) => Lazy(sortDocs(items as Doc[], spec)));
}
