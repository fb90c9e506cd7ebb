import { Binary, type Document, deserialize, serialize, UUID } from 'bson';
import type { Mutation } from '../store/mutations';
import { BSON_READ_OPTIONS } from '../wire/protocol';

/** Records are plain BSON documents, one after another in a frame's payload. */
export function encodeRecord(record: Mutation | Document): Buffer {
  const bytes = serialize(record);
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/**
 * The records of one payload. They are read with the wire layer's own options, so a replayed
 * document holds exactly the values (int64 as `Long`, int32/double as numbers, Decimal128,
 * Binary…) a client's insert put in memory.
 */
export function decodeRecords(payload: Buffer): Document[] {
  const out: Document[] = [];
  let offset = 0;
  while (offset < payload.length) {
    if (offset + 5 > payload.length) throw new Error(`record at ${offset} is cut short`);
    const size = payload.readInt32LE(offset);
    if (size < 5 || offset + size > payload.length)
      throw new Error(`record at ${offset} has bad size ${size}`);
    out.push(deserialize(payload.subarray(offset, offset + size), BSON_READ_OPTIONS));
    offset += size;
  }
  return out;
}

/** A collection UUID as stored: BSON gives it back as a subtype-4 `Binary`. */
export function asUuid(value: unknown): UUID | undefined {
  if (value instanceof UUID) return value;
  if (value instanceof Binary && value.sub_type === Binary.SUBTYPE_UUID) return value.toUUID();
  return undefined;
}
