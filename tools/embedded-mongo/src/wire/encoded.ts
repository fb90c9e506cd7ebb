import { type Document, type Long, serialize } from 'bson';

export const BSON_WRITE_OPTIONS = { checkKeys: false, ignoreUndefined: false } as const;

/** A reply already encoded as one BSON document, sent as it is. */
export class EncodedReply {
  constructor(readonly bytes: Uint8Array) {}
}

/** What a command answers: a document to encode, or one already encoded. */
export type Reply = Document | EncodedReply;

export function replyBytes(reply: Reply): Uint8Array {
  return reply instanceof EncodedReply ? reply.bytes : serialize(reply, BSON_WRITE_OPTIONS);
}

/**
 * Stored documents are frozen and replaced, never changed, so each one's BSON is computed
 * once, on its first read, and kept with it (dropped with the document). Every later read
 * copies bytes instead of walking the document again.
 */
const storedBytes = new WeakMap<object, Uint8Array>();

export function documentBytes(doc: Document): Uint8Array {
  if (!Object.isFrozen(doc)) return serialize(doc, BSON_WRITE_OPTIONS);
  let bytes = storedBytes.get(doc);
  if (!bytes) {
    bytes = serialize(doc, BSON_WRITE_OPTIONS);
    storedBytes.set(doc, bytes);
  }
  return bytes;
}

const EMBEDDED_DOCUMENT = 0x03;
const ARRAY = 0x04;
const STRING = 0x02;
const INT32 = 0x10;
const INT64 = 0x12;

/** Writes BSON pieces into a buffer of known size (no closures: this runs for every read). */
class BsonWriter {
  readonly out: Buffer;
  at = 0;

  constructor(size: number) {
    this.out = Buffer.allocUnsafe(size);
  }

  int32(value: number): void {
    this.out.writeInt32LE(value, this.at);
    this.at += 4;
  }

  /** An element's type byte and its name (ASCII here). */
  element(type: number, name: string): void {
    this.out[this.at++] = type;
    this.at += this.out.write(name, this.at, 'latin1');
    this.out[this.at++] = 0;
  }

  bytes(value: Uint8Array): void {
    this.out.set(value, this.at);
    this.at += value.length;
  }

  string(value: string, byteLength: number): void {
    this.int32(byteLength + 1);
    this.at += this.out.write(value, this.at, 'utf8');
    this.out[this.at++] = 0;
  }

  end(): void {
    this.out[this.at++] = 0;
  }
}

/**
 * `{ cursor: { <batchKey>: [docs], id, ns }, ok: 1 }` around documents already in BSON: the
 * bytes `serialize` gives for that reply, without decoding and re-encoding the documents.
 */
export function encodeCursorReply(
  batchKey: 'firstBatch' | 'nextBatch',
  docs: readonly Uint8Array[],
  id: Long,
  ns: string,
): EncodedReply {
  let arraySize = 4 + 1;
  for (let i = 0; i < docs.length; i++) {
    arraySize += 1 + String(i).length + 1 + (docs[i] as Uint8Array).length;
  }
  const nsBytes = Buffer.byteLength(ns, 'utf8');
  const cursorSize = 4 + (1 + batchKey.length + 1 + arraySize) + (1 + 3 + 8) + (1 + 3 + 4 + nsBytes + 1) + 1;
  const total = 4 + (1 + 7 + cursorSize) + (1 + 3 + 4) + 1;
  const w = new BsonWriter(total);
  w.int32(total);
  w.element(EMBEDDED_DOCUMENT, 'cursor');
  w.int32(cursorSize);
  w.element(ARRAY, batchKey);
  w.int32(arraySize);
  for (let i = 0; i < docs.length; i++) {
    w.element(EMBEDDED_DOCUMENT, String(i));
    w.bytes(docs[i] as Uint8Array);
  }
  w.end();
  w.element(INT64, 'id');
  w.int32(id.low);
  w.int32(id.high);
  w.element(STRING, 'ns');
  w.string(ns, nsBytes);
  w.end();
  w.element(INT32, 'ok');
  w.int32(1);
  w.end();
  if (w.at !== total) throw new Error(`cursor reply encoded ${w.at} of ${total} bytes`);
  return new EncodedReply(w.out);
}
