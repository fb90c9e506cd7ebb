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

/** Entries per block at most; a fuller block splits in two. */
const MAX_BLOCK = 512;

/** Where an entry is: its block and its index in that block. */
interface Position {
  block: number;
  index: number;
}

/**
 * An index's entries in value order, for scans by range or by a prefix of the fields: sorted
 * blocks of at most MAX_BLOCK entries, so adding or removing a key moves at most one block's
 * worth of entries, however large the index. Two entries may compare equal with different
 * keys (a string and a symbol), so removal looks for the entry itself among its equals.
 */
export class SortedEntries {
  private readonly blocks: IndexEntry[][] = [];

  /** `maxBlock` is there for tests, to make blocks split often. */
  constructor(
    entries: Iterable<IndexEntry>,
    private readonly maxBlock = MAX_BLOCK,
  ) {
    const half = Math.max(1, maxBlock >> 1);
    const sorted = [...entries].sort((a, b) => comparePrefix(a.values, b.values, a.values.length));
    for (let i = 0; i < sorted.length; i += half) this.blocks.push(sorted.slice(i, i + half));
  }

  /**
   * The first entry for which `before` is false, in value order; `before` must hold for a
   * leading run of the entries only. Past the end: the last block's length (or block 0).
   */
  private firstNot(before: (entry: IndexEntry) => boolean): Position {
    let lo = 0;
    let hi = this.blocks.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const block = this.blocks[mid] as IndexEntry[];
      if (before(block[block.length - 1] as IndexEntry)) lo = mid + 1;
      else hi = mid;
    }
    if (lo === this.blocks.length) {
      const last = this.blocks.length - 1;
      return last < 0
        ? { block: 0, index: 0 }
        : { block: last, index: (this.blocks[last] as IndexEntry[]).length };
    }
    const block = this.blocks[lo] as IndexEntry[];
    let from = 0;
    let to = block.length;
    while (from < to) {
      const mid = (from + to) >>> 1;
      if (before(block[mid] as IndexEntry)) from = mid + 1;
      else to = mid;
    }
    return { block: lo, index: from };
  }

  insert(entry: IndexEntry): void {
    const n = entry.values.length;
    const at = this.firstNot((e) => comparePrefix(e.values, entry.values, n) <= 0);
    if (this.blocks.length === 0) this.blocks.push([]);
    const block = this.blocks[at.block] as IndexEntry[];
    block.splice(at.index, 0, entry);
    if (block.length > this.maxBlock) this.blocks.splice(at.block + 1, 0, block.splice(block.length >> 1));
  }

  remove(entry: IndexEntry): void {
    const n = entry.values.length;
    const from = this.firstNot((e) => comparePrefix(e.values, entry.values, n) < 0);
    for (let b = from.block; b < this.blocks.length; b++) {
      const block = this.blocks[b] as IndexEntry[];
      for (let i = b === from.block ? from.index : 0; i < block.length; i++) {
        const candidate = block[i] as IndexEntry;
        if (candidate === entry) {
          block.splice(i, 1);
          if (block.length === 0) this.blocks.splice(b, 1);
          return;
        }
        if (comparePrefix(candidate.values, entry.values, n) !== 0) return;
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
    for (let b = start.block; b < this.blocks.length; b++) {
      const block = this.blocks[b] as IndexEntry[];
      for (let i = b === start.block ? start.index : 0; i < block.length; i++) {
        const entry = block[i] as IndexEntry;
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
}
