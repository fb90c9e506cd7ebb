import { closeSync, existsSync, fsyncSync, openSync, renameSync, truncateSync, writeSync } from 'node:fs';
import path from 'node:path';
import { DataDirError } from './errors';
import { fileHeader, frame, readGeneration, scanFrames } from './frames';
import type { Replayer } from './replay';
import { applyOrFail, decodeOrFail, fsyncDir } from './snapshot';

export const JOURNAL_FILE = 'journal.bson';

/**
 * The append-only log of committed changes since the snapshot of the same generation.
 * `append` is one write(2) on an O_APPEND descriptor and no fsync: once it returns, the
 * frame is in the kernel's page cache and survives the process dying (kill -9); only a
 * machine crash or power cut can lose it, up to the kernel's writeback delay (~30 s).
 */
export class Journal {
  private constructor(
    private fd: number | undefined,
    public size: number,
  ) {}

  /** A new, empty journal for `generation`, made durable (file and directory entry). */
  static create(dir: string, generation: number): Journal {
    const file = path.join(dir, JOURNAL_FILE);
    const tmp = `${file}.tmp`;
    const header = fileHeader('journal', generation);
    const fd = openSync(tmp, 'w');
    try {
      writeAll(fd, header);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, file);
    fsyncDir(dir);
    return new Journal(openSync(file, 'a'), header.length);
  }

  /** Appends one frame made of `records` (encoded, `length` bytes in all). */
  append(records: readonly Buffer[], length: number): void {
    if (this.fd === undefined) throw new Error('journal is closed');
    const bytes = frame(records, length);
    writeAll(this.fd, bytes);
    this.size += bytes.length;
  }

  close(): void {
    if (this.fd === undefined) return;
    closeSync(this.fd);
    this.fd = undefined;
  }
}

function writeAll(fd: number, buf: Buffer): void {
  let done = 0;
  while (done < buf.length) done += writeSync(fd, buf, done);
}

export interface JournalReplay {
  frames: number;
  records: number;
  /** Bytes of a frame cut short at the end, dropped (the file is truncated before them). */
  tornBytes: number;
  /** The journal belonged to an older snapshot (a compaction stopped between its steps). */
  stale: boolean;
}

/** Replays the journal written after the snapshot of `generation`, frame by frame. */
export function replayJournal(dir: string, generation: number, replayer: Replayer): JournalReplay {
  const file = path.join(dir, JOURNAL_FILE);
  const none: JournalReplay = { frames: 0, records: 0, tornBytes: 0, stale: false };
  if (!existsSync(file)) return none;
  if (generation === 0) {
    throw new DataDirError('CorruptData', `${file} exists but the snapshot it follows is missing`);
  }
  const journalGeneration = readGeneration(file, 'journal');
  // Older: a compaction stopped after its snapshot was in place, so all of it is in there.
  if (journalGeneration < generation) return { ...none, stale: true };
  if (journalGeneration > generation) {
    throw new DataDirError(
      'CorruptData',
      `${file} is of generation ${journalGeneration} but the snapshot is of generation ${generation}`,
    );
  }
  const before = replayer.applied;
  const result = scanFrames(file, 'journal', true, (payload, offset) => {
    const records = decodeOrFail(file, payload, offset);
    applyOrFail(file, offset, () => {
      for (const record of records) replayer.apply(record);
      replayer.endOfFrame();
    });
  });
  if (result.tornBytes > 0) truncateSync(file, result.validLength);
  return {
    frames: result.frames,
    records: replayer.applied - before,
    tornBytes: result.tornBytes,
    stale: false,
  };
}
