import fc from 'fast-check';
import { compareValues } from '../src/store/order';
import { type FieldRange, type IndexEntry, SortedEntries } from '../src/store/sorted-entries';
import { keyOf } from '../src/store/values';

/**
 * The sorted blocks behind index range scans, against the obvious answer: every entry
 * filtered by the same prefix and range, in value order. Blocks of at most 4 entries, so
 * inserts and removals split and empty blocks all the time.
 */

const value = fc.oneof(fc.integer({ min: 0, max: 20 }), fc.constantFrom('a', 'b', 'c', null));
const entryOf = (values: unknown[]): IndexEntry => ({
  key: JSON.stringify(values.map(keyOf)),
  values,
  ids: new Set([JSON.stringify(values)]),
});
const bound = fc.record({ value: fc.integer({ min: 0, max: 20 }), inclusive: fc.boolean() });
const rangeArb = fc.option(
  fc
    .record({ lower: bound, upper: bound }, { requiredKeys: [], noNullPrototype: true })
    .map((r): FieldRange => ({ ...r, rank: 10 })),
  { nil: undefined },
);

function inRange(v: unknown, range: FieldRange): boolean {
  if (typeof v !== 'number') return false;
  if (range.lower) {
    const order = compareValues(v, range.lower.value);
    if (order < 0 || (order === 0 && !range.lower.inclusive)) return false;
  }
  if (range.upper) {
    const order = compareValues(v, range.upper.value);
    if (order > 0 || (order === 0 && !range.upper.inclusive)) return false;
  }
  return true;
}

describe('SortedEntries', () => {
  it('scans exactly the entries with the prefix and in the range, in order, through inserts and removals', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.boolean(), value, value), { maxLength: 200 }),
        fc.option(value, { nil: undefined }),
        rangeArb,
        (operations, first, range) => {
          const live = new Map<string, IndexEntry>();
          const sorted = new SortedEntries([], 4);
          for (const [add, a, b] of operations) {
            const entry = entryOf([a, b]);
            const existing = live.get(entry.key);
            if (add && !existing) {
              live.set(entry.key, entry);
              sorted.insert(entry);
            } else if (!add && existing) {
              live.delete(entry.key);
              sorted.remove(existing);
            }
          }
          const prefix = first === undefined ? [] : [first];
          const seen: IndexEntry[] = [];
          sorted.scan(prefix, range, (entry) => seen.push(entry));
          const expected = [...live.values()]
            .filter((e) => prefix.length === 0 || compareValues(e.values[0], prefix[0]) === 0)
            .filter((e) => !range || inRange(e.values[prefix.length], range))
            .sort(
              (x, y) => compareValues(x.values[0], y.values[0]) || compareValues(x.values[1], y.values[1]),
            );
          expect(seen.map((e) => e.key)).toEqual(expected.map((e) => e.key));
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('starts from entries given up front, split into blocks', () => {
    const entries = Array.from({ length: 50 }, (_, i) => entryOf([i % 10, i]));
    const sorted = new SortedEntries(entries, 4);
    const seen: unknown[] = [];
    sorted.scan([3], undefined, (entry) => seen.push(entry.values[1]));
    expect(seen).toEqual([3, 13, 23, 33, 43]);
  });
});
