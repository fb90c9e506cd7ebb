import { closeSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import path from 'node:path';
import { DataDirError } from './errors';

export const LOCK_FILE = 'embedded-mongod.lock';

/**
 * Takes the data directory for this process: a lock file holding our pid (and, on Linux, the
 * process's start time, so that a recycled pid, common when a container restarts, is not
 * mistaken for the old owner). A lock whose process is gone was left by a kill and is taken
 * over. Two processes taking over the same stale lock in the same instant could both win;
 * starting one server per directory at a time is the caller's job.
 * Returns the release function.
 */
export function acquireLock(dir: string): () => void {
  const file = path.join(dir, LOCK_FILE);
  const mine = `${process.pid} ${startTime(process.pid) ?? ''}`.trim();
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fd = openSync(file, 'wx');
      try {
        writeSync(fd, `${mine}\n`);
      } finally {
        closeSync(fd);
      }
      return () => release(file, mine);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const holder = readHolder(file);
    if (holder && holder.pid !== process.pid && isAlive(holder.pid, holder.startTime)) {
      throw new DataDirError(
        'DBPathInUse',
        `Unable to lock the lock file: ${file}. Another embedded-mongod (pid ${holder.pid}) is already running on the dbpath ${dir}.`,
      );
    }
    try {
      unlinkSync(file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
  }
  throw new DataDirError('DBPathInUse', `Unable to lock the lock file: ${file}`);
}

function release(file: string, mine: string): void {
  // Only our own lock: if it was taken over (we were thought dead), it is not ours to remove.
  try {
    if (readFileSync(file, 'utf8').trim() === mine) unlinkSync(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
}

function readHolder(file: string): { pid: number; startTime?: string } | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
  const [pid, startTime] = text.trim().split(/\s+/);
  const n = Number(pid);
  return Number.isInteger(n) && n > 0 ? { pid: n, startTime } : undefined;
}

function isAlive(pid: number, recordedStart: string | undefined): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  const current = startTime(pid);
  return recordedStart === undefined || current === undefined || current === recordedStart;
}

/** Field 22 of /proc/<pid>/stat (clock ticks since boot); undefined off Linux. */
function startTime(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses; fields after it are plain.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}
