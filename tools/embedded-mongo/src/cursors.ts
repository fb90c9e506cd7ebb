import { randomBytes } from 'node:crypto';
import { Long } from 'bson';
import { MongoCommandError } from './errors';
import type { Doc } from './store/values';
import { documentBytes } from './wire/encoded';

const DEFAULT_FIRST_BATCH = 101;
/** A reply must stay under the 16 MiB document limit; leave room for the envelope. */
const MAX_BATCH_BYTES = 16 * 1024 * 1024 - 64 * 1024;
/** mongod's cursorTimeoutMillis default. */
export const CURSOR_IDLE_MS = 10 * 60 * 1000;

interface OpenCursor {
  ns: string;
  docs: Doc[];
  position: number;
  lastUsed: number;
}

/** One batch of a cursor, its documents already in BSON; `id` 0 when the cursor is done. */
export interface Batch {
  batch: Uint8Array[];
  id: Long;
}

/** Server-side cursors: results are materialised once, then handed out batch by batch. */
export class CursorRegistry {
  private readonly cursors = new Map<string, OpenCursor>();

  /** The first batch; a cursor stays open only when documents remain. */
  open(ns: string, docs: Doc[], batchSize: number | undefined, singleBatch = false): Batch {
    const cursor: OpenCursor = { ns, docs, position: 0, lastUsed: Date.now() };
    const batch = takeBatch(cursor, batchSize ?? DEFAULT_FIRST_BATCH);
    if (singleBatch || cursor.position >= docs.length) return { batch, id: Long.ZERO };
    const id = newCursorId();
    this.cursors.set(id.toString(), cursor);
    return { batch, id };
  }

  getMore(id: Long, ns: string, batchSize: number | undefined): Batch {
    const key = id.toString();
    const cursor = this.cursors.get(key);
    if (!cursor) throw new MongoCommandError('CursorNotFound', `cursor id ${key} not found`);
    if (cursor.ns !== ns) {
      throw new MongoCommandError(
        'Unauthorized',
        `Requested getMore on namespace '${ns}', but cursor belongs to a different namespace ${cursor.ns}`,
      );
    }
    cursor.lastUsed = Date.now();
    const batch = takeBatch(cursor, batchSize ?? Number.MAX_SAFE_INTEGER);
    if (cursor.position >= cursor.docs.length) {
      this.cursors.delete(key);
      return { batch, id: Long.ZERO };
    }
    return { batch, id };
  }

  kill(ids: Long[]): { killed: Long[]; notFound: Long[] } {
    const killed: Long[] = [];
    const notFound: Long[] = [];
    for (const id of ids) {
      if (this.cursors.delete(id.toString())) killed.push(id);
      else notFound.push(id);
    }
    return { killed, notFound };
  }

  /** Closes cursors nobody asked for within the idle timeout, as mongod does. */
  sweepIdle(now = Date.now()): void {
    for (const [key, cursor] of this.cursors) {
      if (now - cursor.lastUsed > CURSOR_IDLE_MS) this.cursors.delete(key);
    }
  }

  get size(): number {
    return this.cursors.size;
  }

  clear(): void {
    this.cursors.clear();
  }
}

function takeBatch(cursor: OpenCursor, batchSize: number): Uint8Array[] {
  const batch: Uint8Array[] = [];
  let bytes = 0;
  while (cursor.position < cursor.docs.length && batch.length < batchSize) {
    const encoded = documentBytes(cursor.docs[cursor.position] as Doc);
    bytes += encoded.length;
    if (batch.length > 0 && bytes > MAX_BATCH_BYTES) break;
    batch.push(encoded);
    cursor.position++;
  }
  return batch;
}

function newCursorId(): Long {
  // Positive, non-zero, random 63-bit ids, like mongod's.
  const bytes = randomBytes(8);
  bytes[7] = (bytes[7] as number) & 0x7f;
  const id = Long.fromBytesLE([...bytes]);
  return id.isZero() ? Long.ONE : id;
}
