import { type Document, deserialize } from 'bson';
import { type Reply, replyBytes } from './encoded';

export const OP_REPLY = 1;
export const OP_QUERY = 2004;
export const OP_COMPRESSED = 2012;
export const OP_MSG = 2013;

export const HEADER_SIZE = 16;
/** mongod's maxMessageSizeBytes. */
export const MAX_MESSAGE_SIZE = 48_000_000;
export const MAX_BSON_OBJECT_SIZE = 16 * 1024 * 1024;

export const MSG_CHECKSUM_PRESENT = 1 << 0;
export const MSG_MORE_TO_COME = 1 << 1;
export const MSG_EXHAUST_ALLOWED = 1 << 16;
/** Bits 0-15 are "required": a receiver must reject a message with one it does not know. */
const MSG_KNOWN_REQUIRED_BITS = MSG_CHECKSUM_PRESENT | MSG_MORE_TO_COME;

export interface MessageHeader {
  messageLength: number;
  requestId: number;
  responseTo: number;
  opCode: number;
}

/** A malformed message: the connection that sent it cannot be trusted to stay in frame. */
export class ProtocolError extends Error {}

export function readHeader(buf: Buffer): MessageHeader {
  return {
    messageLength: buf.readInt32LE(0),
    requestId: buf.readInt32LE(4),
    responseTo: buf.readInt32LE(8),
    opCode: buf.readInt32LE(12),
  };
}

/**
 * int64 stays a `Long` (by default bson turns one within 2^53 into a JS number, which would
 * come back as int32 or double and lose exactness past 2^53 in arithmetic).
 */
export const BSON_READ_OPTIONS = { validation: { utf8: true }, promoteLongs: false } as const;

/** Reads one BSON document at `offset`, checking that its declared size fits in `end`. */
function readDocument(buf: Buffer, offset: number, end: number): { doc: Document; size: number } {
  if (offset + 5 > end) throw new ProtocolError('truncated BSON document');
  const size = buf.readInt32LE(offset);
  if (size < 5 || offset + size > end) throw new ProtocolError(`invalid BSON document size ${size}`);
  return { doc: deserialize(buf.subarray(offset, offset + size), BSON_READ_OPTIONS), size };
}

export interface OpMsgRequest {
  flags: number;
  body: Document;
  /** Kind-1 document sequences by identifier (e.g. `documents`, `updates`, `deletes`). */
  sequences: Map<string, Document[]>;
}

export function parseOpMsg(buf: Buffer): OpMsgRequest {
  const flags = buf.readUInt32LE(HEADER_SIZE);
  if ((flags & 0xffff & ~MSG_KNOWN_REQUIRED_BITS) !== 0) {
    throw new ProtocolError(`unknown required OP_MSG flag bits ${flags.toString(16)}`);
  }
  const end = buf.length - (flags & MSG_CHECKSUM_PRESENT ? 4 : 0);
  let offset = HEADER_SIZE + 4;
  let body: Document | undefined;
  const sequences = new Map<string, Document[]>();
  while (offset < end) {
    const kind = buf[offset];
    offset += 1;
    if (kind === 0) {
      if (body) throw new ProtocolError('OP_MSG has more than one body section');
      const { doc, size } = readDocument(buf, offset, end);
      body = doc;
      offset += size;
    } else if (kind === 1) {
      if (offset + 4 > end) throw new ProtocolError('truncated document sequence');
      const size = buf.readInt32LE(offset);
      const sectionEnd = offset + size;
      if (size < 5 || sectionEnd > end) throw new ProtocolError(`invalid document sequence size ${size}`);
      const nul = buf.indexOf(0, offset + 4);
      if (nul < 0 || nul >= sectionEnd) throw new ProtocolError('unterminated document sequence identifier');
      const identifier = buf.toString('utf8', offset + 4, nul);
      const docs: Document[] = [];
      let at = nul + 1;
      while (at < sectionEnd) {
        const { doc, size: docSize } = readDocument(buf, at, sectionEnd);
        docs.push(doc);
        at += docSize;
      }
      if (sequences.has(identifier)) throw new ProtocolError(`duplicate document sequence ${identifier}`);
      sequences.set(identifier, docs);
      offset = sectionEnd;
    } else {
      throw new ProtocolError(`unknown OP_MSG section kind ${kind}`);
    }
  }
  if (!body) throw new ProtocolError('OP_MSG has no body section');
  return { flags, body, sequences };
}

export interface OpQueryRequest {
  fullCollectionName: string;
  query: Document;
}

export function parseOpQuery(buf: Buffer): OpQueryRequest {
  let offset = HEADER_SIZE + 4; // flags
  const nul = buf.indexOf(0, offset);
  if (nul < 0) throw new ProtocolError('unterminated collection name');
  const fullCollectionName = buf.toString('utf8', offset, nul);
  offset = nul + 1 + 8; // numberToSkip, numberToReturn
  const { doc } = readDocument(buf, offset, buf.length);
  return { fullCollectionName, query: doc };
}

function writeHeader(message: Buffer, requestId: number, responseTo: number, opCode: number): void {
  message.writeInt32LE(message.length, 0);
  message.writeInt32LE(requestId, 4);
  message.writeInt32LE(responseTo, 8);
  message.writeInt32LE(opCode, 12);
}

/** An OP_MSG with one kind-0 section, built in one buffer. */
export function encodeOpMsg(requestId: number, responseTo: number, body: Reply): Buffer {
  const payload = replyBytes(body);
  const message = Buffer.allocUnsafe(HEADER_SIZE + 5 + payload.length);
  writeHeader(message, requestId, responseTo, OP_MSG);
  message.writeUInt32LE(0, HEADER_SIZE); // flags
  message[HEADER_SIZE + 4] = 0; // kind-0 body
  message.set(payload, HEADER_SIZE + 5);
  return message;
}

export function encodeOpReply(requestId: number, responseTo: number, doc: Reply): Buffer {
  const payload = replyBytes(doc);
  const message = Buffer.alloc(HEADER_SIZE + 20 + payload.length);
  writeHeader(message, requestId, responseTo, OP_REPLY);
  // responseFlags 0, cursorID 0, startingFrom 0 (zero-filled), numberReturned 1.
  message.writeInt32LE(1, HEADER_SIZE + 16);
  message.set(payload, HEADER_SIZE + 20);
  return message;
}
