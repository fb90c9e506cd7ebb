import { statSync } from 'node:fs';
import type { ServerState } from '../state';
import type { Mutation } from '../store/mutations';
import { DataDirError } from './errors';
import { Journal, replayJournal } from './journal';
import { acquireLock } from './lock';
import { encodeRecord } from './records';
import { Replayer } from './replay';
import { loadSnapshot, writeSnapshot } from './snapshot';

export { DataDirError } from './errors';

export interface PersistenceOptions {
  /** Compact (new snapshot, empty journal) once the journal grows past this; 64 MB by default. */
  compactAtBytes?: number;
  log?: (message: string, attr?: Record<string, unknown>) => void;
  /** The journal could not be written: memory now holds changes the disk does not. */
  onFailure?: (err: Error) => void;
}

const DEFAULT_COMPACT_AT = 64 * 1024 * 1024;

/**
 * Keeps a server's catalogue in a directory: a snapshot plus a journal of the changes made
 * since. Every command's changes become one journal frame, written before its reply is sent.
 */
export class Persistence {
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private journal: Journal;
  private compactAt: number;
  private compactionScheduled = false;
  private failed?: Error;

  private constructor(
    private readonly dir: string,
    private readonly state: ServerState,
    private readonly releaseLock: () => void,
    private generation: number,
    private readonly options: PersistenceOptions,
  ) {
    this.compactAt = options.compactAtBytes ?? DEFAULT_COMPACT_AT;
    // Starting from a fresh snapshot bounds the next start's replay, and drops a torn tail for good.
    this.journal = this.compactNow();
    state.catalog.sink = (mutation) => this.record(mutation);
    state.commitMutations = () => this.commit();
  }

  /**
   * Takes the directory, rebuilds the catalogue from it and starts a new generation. Throws
   * `DataDirError` (and holds nothing) when the directory is in use or its files are damaged.
   */
  static open(dir: string, state: ServerState, options: PersistenceOptions = {}): Persistence {
    if (!statSync(dir, { throwIfNoEntry: false })?.isDirectory()) {
      throw new DataDirError('IOError', `Data directory ${dir} not found.`);
    }
    const release = acquireLock(dir);
    try {
      const replayer = new Replayer(state.catalog);
      const snapshot = loadSnapshot(dir, replayer);
      const journal = replayJournal(dir, snapshot.generation, replayer);
      options.log?.('Recovered data', {
        dir,
        generation: snapshot.generation,
        snapshotDocuments: snapshot.docs,
        journalFrames: journal.frames,
        journalRecords: journal.records,
        ...(journal.tornBytes > 0 ? { tornTailBytesDropped: journal.tornBytes } : {}),
        ...(journal.stale ? { staleJournalIgnored: true } : {}),
      });
      return new Persistence(dir, state, release, snapshot.generation, options);
    } catch (err) {
      release();
      throw err;
    }
  }

  private record(mutation: Mutation): void {
    const encoded = encodeRecord(mutation);
    this.pending.push(encoded);
    this.pendingBytes += encoded.length;
  }

  /** Writes the changes made since the last commit as one frame. */
  commit(): void {
    if (this.pending.length === 0) return;
    const records = this.pending;
    const length = this.pendingBytes;
    this.pending = [];
    this.pendingBytes = 0;
    if (this.failed) throw this.failed;
    try {
      this.journal.append(records, length);
    } catch (err) {
      throw this.fail(`journal write failed, changes are no longer persisted: ${(err as Error).message}`);
    }
    if (this.journal.size >= this.compactAt && !this.compactionScheduled) {
      this.compactionScheduled = true;
      // After the reply is on its way, between two commands: the snapshot blocks the event
      // loop while it is written (0.5-1 s per 200,000 small documents on our machines).
      setImmediate(() => this.compactInBackground());
    }
  }

  private compactInBackground(): void {
    this.compactionScheduled = false;
    if (this.failed) return;
    try {
      this.journal = this.compactNow();
      this.compactAt = this.options.compactAtBytes ?? DEFAULT_COMPACT_AT;
    } catch (err) {
      // Failed before its snapshot was in place (else `fail` has reported it): the old pair
      // is still whole, so carry on and retry at twice the size.
      this.compactAt *= 2;
      this.options.log?.('Compaction failed; the journal keeps growing', { error: (err as Error).message });
    }
  }

  /** Snapshot of generation n+1, then an empty journal of n+1 (the order recovery relies on). */
  private compactNow(): Journal {
    const next = this.generation + 1;
    // A failure here changes nothing on disk that recovery reads: the old pair stays whole.
    const written = writeSnapshot(this.dir, this.state.catalog, next);
    this.generation = next;
    let journal: Journal;
    try {
      journal = Journal.create(this.dir, next);
    } catch (err) {
      // The new snapshot is in place, so recovery would now skip the old journal as stale:
      // appending to it would be appending to nothing.
      throw this.fail(
        `no journal after a snapshot, changes are no longer persisted: ${(err as Error).message}`,
      );
    }
    // `this.journal` is unset only while the constructor runs.
    (this.journal as Journal | undefined)?.close();
    this.options.log?.('Wrote snapshot', { generation: next, documents: written.docs, bytes: written.bytes });
    return journal;
  }

  private fail(message: string): Error {
    this.failed = new Error(message);
    this.options.onFailure?.(this.failed);
    return this.failed;
  }

  /** Compacts (so the next start replays nothing) and lets go of the directory. */
  close(): void {
    this.state.catalog.sink = undefined;
    this.state.commitMutations = () => {};
    try {
      if (!this.failed) this.journal = this.compactNow();
    } finally {
      this.journal.close();
      this.releaseLock();
    }
  }
}
