import { closeSync, existsSync, fsyncSync, openSync, renameSync, writeSync } from 'node:fs';
import path from 'node:path';
import type { Catalog } from '../store/catalog';
import type { Mutation } from '../store/mutations';
import { DataDirError } from './errors';
import { fileHeader, frame, scanFrames } from './frames';
import { decodeRecords, encodeRecord } from './records';
import type { Replayer } from './replay';

export const SNAPSHOT_FILE = 'snapshot.bson';
/** Frames of about this size keep memory flat while a large catalogue is written. */
const FRAME_TARGET_BYTES = 1 << 20;

/**
 * Writes the whole catalogue as the records that would rebuild it (create, createIndex,
 * insert in natural order), ending with an `end` record, to a temporary file; fsyncs it and
 * renames it over the old snapshot, then fsyncs the directory. A crash at any point leaves
 * either the old snapshot or the new one, never a mixture.
 */
export function writeSnapshot(
  dir: string,
  catalog: Catalog,
  generation: number,
): { docs: number; bytes: number } {
  const tmp = path.join(dir, `${SNAPSHOT_FILE}.tmp`);
  const fd = openSync(tmp, 'w');
  let bytes = 0;
  let docs = 0;
  try {
    const put = (buf: Buffer) => {
      let done = 0;
      while (done < buf.length) done += writeSync(fd, buf, done);
      bytes += buf.length;
    };
    put(fileHeader('snapshot', generation));
    let chunk: Buffer[] = [];
    let chunkBytes = 0;
    const add = (record: Mutation | { op: 'end'; docs: number }) => {
      const encoded = encodeRecord(record);
      chunk.push(encoded);
      chunkBytes += encoded.length;
      if (chunkBytes >= FRAME_TARGET_BYTES) flush();
    };
    const flush = () => {
      if (chunk.length === 0) return;
      put(frame(chunk, chunkBytes));
      chunk = [];
      chunkBytes = 0;
    };
    for (const collection of catalog.allCollections()) {
      const { dbName: db, name: coll } = collection;
      add({ op: 'create', db, coll, options: collection.options, uuid: collection.uuid });
      for (const spec of collection.indexSpecs().slice(1)) add({ op: 'createIndex', db, coll, spec });
      for (const doc of collection.all()) {
        add({ op: 'insert', db, coll, doc });
        docs++;
      }
    }
    add({ op: 'end', docs });
    flush();
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path.join(dir, SNAPSHOT_FILE));
  fsyncDir(dir);
  return { docs, bytes };
}

/** Loads the snapshot into the replayer's catalogue; its generation (0 when there is none). */
export function loadSnapshot(dir: string, replayer: Replayer): { generation: number; docs: number } {
  const file = path.join(dir, SNAPSHOT_FILE);
  if (!existsSync(file)) return { generation: 0, docs: 0 };
  let ended: number | undefined;
  const { generation } = scanFrames(file, 'snapshot', false, (payload, offset) => {
    for (const record of decodeOrFail(file, payload, offset)) {
      if (ended !== undefined) throw new DataDirError('CorruptData', `${file}: records after the end marker`);
      if (record.op === 'end') {
        ended = record.docs as number;
        continue;
      }
      applyOrFail(file, offset, () => replayer.apply(record));
    }
  });
  if (ended === undefined)
    throw new DataDirError('CorruptData', `${file} has no end marker (incomplete snapshot)`);
  return { generation, docs: ended };
}

export function decodeOrFail(file: string, payload: Buffer, offset: number) {
  try {
    return decodeRecords(payload);
  } catch (err) {
    throw new DataDirError('CorruptData', `${file}: frame at byte ${offset}: ${(err as Error).message}`);
  }
}

export function applyOrFail(file: string, offset: number, apply: () => void): void {
  try {
    apply();
  } catch (err) {
    throw new DataDirError(
      'CorruptData',
      `${file}: frame at byte ${offset} does not apply: ${(err as Error).message}`,
    );
  }
}

/** Makes a rename or a new file in `dir` itself durable. */
export function fsyncDir(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
