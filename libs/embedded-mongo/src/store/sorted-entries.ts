import { compareValues, typeRank } from './order';

/** One key of an index: its value per indexed field and the ids of the documents holding it. */
export interface IndexEntry {
  key: string;
  /** Per field, in index field order; a missing field is `null` (both index as null). */
  values: unknown[];
  ids: Set<string>;
}

/** A range on one field, from `$gt`/`$gte`/`$lt`/`$lte`; values outside `rank`'s type never match. */
export interface FieldRange {
  lower?: { value: unknown; inclusive: boolean };
  upper?: { value: unknown; inclusive: boolean };
  /** The canonical type class of the bounds (`typeRank`): mongod compares within one type only. */
  rank: number;
}

/** Field-by-field canonical order of the first `n` values. */
function comparePrefix(a: readonly unknown[], b: readonly unknown[], n: number): number {
  for (let i = 0; i < n; i++) {
    const order = compareValues(a[i], b[i]);
    if (order !== 0) return order;
  }
  return 0;
}

/**
 * An index's entries in value order, for scans by range or by a prefix of the fields. Two
 * entries may compare equal with different keys (a string and a symbol), so removal looks
 * for the entry itself among its equals.
 */
export class SortedEntries {
  private readonly items: IndexEntry[];

  constructor(entries: Iterable<IndexEntry>) {
    this.items = [...entries].sort((a, b) => comparePrefix(a.values, b.values, a.values.length));
  }

  /** Position of the first item for which `before` is false; `before` must hold for a leading run only. */
  private firstNot(before: (entry: IndexEntry) => boolean): number {
    let lo = 0;
    let hi = this.items.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (before(this.items[mid] as IndexEntry)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  insert(entry: IndexEntry): void {
    const n = entry.values.length;
    const at = this.firstNot((e) => comparePrefix(e.values, entry.values, n) <= 0);
    this.items.splice(at, 0, entry);
  }

  remove(entry: IndexEntry): void {
    const n = entry.values.length;
    for (
      let i = this.firstNot((e) => comparePrefix(e.values, entry.values, n) < 0);
      i < this.items.length;
      i++
    ) {
      if (this.items[i] === entry) {
        this.items.splice(i, 1);
        return;
      }
    }
  }

  /**
   * Calls `visit` for each entry whose first fields equal `prefix` and, when `range` is given,
   * whose next field lies in it; in value order.
   */
  scan(prefix: readonly unknown[], range: FieldRange | undefined, visit: (entry: IndexEntry) => void): void {
    const n = prefix.length;
    const start = this.firstNot((e) => {
      const order = comparePrefix(e.values, prefix, n);
      if (order !== 0) return order < 0;
      if (!range) return false;
      const value = e.values[n];
      if (!range.lower) return typeRank(value) < range.rank;
      const toLower = compareValues(value, range.lower.value);
      return toLower < 0 || (toLower === 0 && !range.lower.inclusive);
    });
    for (let i = start; i < this.items.length; i++) {
      const entry = this.items[i] as IndexEntry;
      if (comparePrefix(entry.values, prefix, n) !== 0) return;
      if (range) {
        const value = entry.values[n];
        if (typeRank(value) !== range.rank) return;
        if (range.upper) {
          const toUpper = compareValues(value, range.upper.value);
          if (toUpper > 0 || (toUpper === 0 && !range.upper.inclusive)) return;
        }
      }
      visit(entry);
    }
  }
}
