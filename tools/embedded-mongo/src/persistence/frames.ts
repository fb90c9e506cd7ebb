import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { crc32 } from 'node:zlib';
import { DataDirError } from './errors';

/**
 * The on-disk framing shared by the journal and the snapshot:
 *
 *   file  := magic(8) generation(u32 LE) crc32(magic+generation)(u32 LE) frame*
 *   frame := length(u32 LE) crc32(payload)(u32 LE) crc32(length+crc)(u32 LE) payload
 *
 * A frame is the unit of atomicity: one command's changes, written with one write(2). The
 * header has its own checksum so that a damaged length is told apart from a frame that was
 * cut short (a damaged length could otherwise pass for a torn tail and hide the frames after it).
 */
export const FILE_HEADER_SIZE = 16;
export const FRAME_HEADER_SIZE = 12;

export type FileKind = 'journal' | 'snapshot';
const MAGIC: Record<FileKind, Buffer> = {
  journal: Buffer.from('EMJRNL01', 'latin1'),
  snapshot: Buffer.from('EMSNAP01', 'latin1'),
};

export function fileHeader(kind: FileKind, generation: number): Buffer {
  const header = Buffer.alloc(FILE_HEADER_SIZE);
  MAGIC[kind].copy(header, 0);
  header.writeUInt32LE(generation, 8);
  header.writeUInt32LE(crc32(header.subarray(0, 12)), 12);
  return header;
}

/** One frame holding `parts` back to back, built in a single allocation. */
export function frame(parts: readonly Buffer[], payloadLength: number): Buffer {
  const out = Buffer.allocUnsafe(FRAME_HEADER_SIZE + payloadLength);
  let offset = FRAME_HEADER_SIZE;
  for (const part of parts) offset += part.copy(out, offset);
  out.writeUInt32LE(payloadLength, 0);
  out.writeUInt32LE(crc32(out.subarray(FRAME_HEADER_SIZE)), 4);
  out.writeUInt32LE(crc32(out.subarray(0, 8)), 8);
  return out;
}

export interface ScanResult {
  generation: number;
  /** Bytes of whole, valid frames (including the file header): where a torn tail starts. */
  validLength: number;
  /** Bytes after `validLength` that belong to a frame cut short (0 when none). */
  tornBytes: number;
  frames: number;
}

/**
 * Reads every frame of `file` in order, handing each payload to `visit`. A last frame that is
 * incomplete (or, at the very end, fails its payload checksum, or is all zeros as a file
 * extended by a power cut can be) is reported as torn when `tolerateTornTail`; any other
 * damage throws, naming the offset, since skipping it would silently lose committed data.
 */
export function scanFrames(
  file: string,
  kind: FileKind,
  tolerateTornTail: boolean,
  visit: (payload: Buffer, offset: number) => void,
): ScanResult {
  const fd = openSync(file, 'r');
  try {
    const size = fstatSync(fd).size;
    const read = (offset: number, length: number): Buffer => {
      const buf = Buffer.allocUnsafe(length);
      let done = 0;
      while (done < length) {
        const n = readSync(fd, buf, done, length - done, offset + done);
        if (n === 0) throw new DataDirError('IOError', `${file}: unexpected end of file at ${offset + done}`);
        done += n;
      }
      return buf;
    };
    const corrupt = (offset: number, why: string): never => {
      throw new DataDirError(
        'CorruptData',
        `${file} is damaged at byte ${offset} of ${size} (${why}); refusing to start on partial data. ` +
          'Restore the directory from a backup, or truncate the file at that byte to keep what precedes it.',
      );
    };
    const generation = checkFileHeader(file, kind, size, read(0, Math.min(size, FILE_HEADER_SIZE)));

    let offset = FILE_HEADER_SIZE;
    let frames = 0;
    const torn = (): ScanResult => {
      if (!tolerateTornTail) return corrupt(offset, 'incomplete last frame');
      return { generation, validLength: offset, tornBytes: size - offset, frames };
    };
    while (offset < size) {
      const remaining = size - offset;
      if (remaining < FRAME_HEADER_SIZE) return torn();
      const head = read(offset, FRAME_HEADER_SIZE);
      if (head.readUInt32LE(8) !== crc32(head.subarray(0, 8))) {
        if (isZero(read(offset, remaining))) return torn();
        return corrupt(offset, 'bad frame header checksum');
      }
      const length = head.readUInt32LE(0);
      if (length > remaining - FRAME_HEADER_SIZE) return torn();
      const payload = read(offset + FRAME_HEADER_SIZE, length);
      if (head.readUInt32LE(4) !== crc32(payload)) {
        if (offset + FRAME_HEADER_SIZE + length === size) return torn();
        return corrupt(offset, 'bad frame checksum');
      }
      visit(payload, offset);
      offset += FRAME_HEADER_SIZE + length;
      frames++;
    }
    return { generation, validLength: offset, tornBytes: 0, frames };
  } finally {
    closeSync(fd);
  }
}

/** The generation in the file's header, which is checked first (before any frame is read). */
export function readGeneration(file: string, kind: FileKind): number {
  const fd = openSync(file, 'r');
  try {
    const size = fstatSync(fd).size;
    const header = Buffer.alloc(Math.min(size, FILE_HEADER_SIZE));
    readSync(fd, header, 0, header.length, 0);
    return checkFileHeader(file, kind, size, header);
  } finally {
    closeSync(fd);
  }
}

function checkFileHeader(file: string, kind: FileKind, size: number, header: Buffer): number {
  const bad = (why: string): never => {
    throw new DataDirError('CorruptData', `${file}: ${why}; refusing to start on partial data`);
  };
  if (size < FILE_HEADER_SIZE) return bad('shorter than its header');
  if (!header.subarray(0, 8).equals(MAGIC[kind])) return bad(`not an embedded-mongod ${kind} file`);
  if (header.readUInt32LE(12) !== crc32(header.subarray(0, 12))) return bad('bad header checksum');
  return header.readUInt32LE(8);
}

function isZero(buf: Buffer): boolean {
  for (const byte of buf) if (byte !== 0) return false;
  return true;
}
