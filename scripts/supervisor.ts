import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { type ProcessName, usersOf } from '@parametric/topology';

/**
 * The platform process's half of `npm start` (./foreground.ts is the launcher's): the processes
 * it started, and how they stop. A graceful stop stops each process once everything that uses it
 * (tools/topology: `usersOf`) has stopped, so a service drains while what it calls still answers,
 * and the stores go last; each process gets one SIGTERM, and prints one line when it is gone.
 */

/**
 * How long a process may take to stop gracefully before it is killed. A service gives itself
 * 8 s (libs/runtime's SHUTDOWN_DEADLINE_MS) and ends itself then; this only catches a process
 * that does not.
 */
export const STOP_DEADLINE_MS = 10_000;

/** Preloaded into the stand-ins: they stop (SIGTERM) when this process is gone. */
const STOP_WITH_PARENT = path.join(__dirname, 'stop-with-parent.cjs');

interface Member {
  name: ProcessName;
  /** For the stop line: `gateway`, `Redis`. */
  label: string;
  /** Stops it gracefully; resolves with its exit (a code, or the signal that ended it). */
  stop(): Promise<string>;
}

const took = (since: number) => `${Date.now() - since} ms`;

/** Resolves after `ms`, or never when `ms` is Infinity; the timer does not hold the process up. */
const after = <T>(ms: number, value: T) =>
  new Promise<T>((resolve) => setTimeout(() => resolve(value), ms).unref());

export class Supervisor {
  private readonly members = new Map<ProcessName, Member>();
  private readonly pending = new Set<Promise<unknown>>();
  private stopping: Promise<boolean> | undefined;
  /** Exit codes other than 0 seen while stopping. */
  private failed = false;

  constructor(
    private readonly options: {
      /** Where a child's stdout goes: ours as is, or through `pipe` (pretty logs). */
      pipe?: (child: ChildProcess) => void;
      /** A process ended while nobody asked it to stop. */
      onUnexpectedExit: (name: ProcessName, how: string) => void;
    },
  ) {}

  get isStopping(): boolean {
    return this.stopping !== undefined;
  }

  /**
   * A Node process of the platform: `node <args>`, with `stopWithParent` preloading the hook that
   * stops it if this process dies (for programs that do not watch for that themselves; the
   * services do, through libs/runtime). It gets an IPC channel: the only way for it to notice a
   * parent killed outright.
   */
  spawnNode(
    name: ProcessName,
    args: string[],
    options: { env: NodeJS.ProcessEnv; stopWithParent?: boolean },
  ): ChildProcess {
    if (this.stopping) throw new Error(`not starting ${name}: the platform is stopping`);
    const preload = options.stopWithParent ? ['--require', STOP_WITH_PARENT] : [];
    const child = spawn(process.execPath, [...preload, ...args], {
      env: options.env,
      stdio: ['ignore', this.options.pipe ? 'pipe' : 'inherit', 'inherit', 'ipc'],
    });
    // The channel is for the child to notice us gone; it must not keep us alive.
    child.channel?.unref();
    if (this.options.pipe) this.options.pipe(child);
    let asked = false;
    child.on('exit', (code, signal) => {
      if (!asked && !this.stopping) this.options.onUnexpectedExit(name, String(signal ?? code));
    });
    this.members.set(name, {
      name,
      label: name,
      stop: async () => {
        asked = true;
        if (child.exitCode !== null || child.signalCode !== null) return exitOf(child);
        const exited = once(child, 'exit');
        child.kill('SIGTERM');
        const done = await Promise.race([exited.then(() => true), after(STOP_DEADLINE_MS, false)]);
        if (!done) {
          console.error(`[start] ${name} did not stop within ${STOP_DEADLINE_MS / 1000} s; killing it`);
          child.kill('SIGKILL');
          await exited;
        }
        return exitOf(child);
      },
    });
    return child;
  }

  /** A process started elsewhere (the stores' libraries), with the `stop` they give. */
  add(name: ProcessName, label: string, stop: () => Promise<void>): void {
    this.members.set(name, {
      name,
      label,
      stop: async () => {
        const done = await Promise.race([stop().then(() => true), after(STOP_DEADLINE_MS, false)]);
        return done ? '0' : `still running after ${STOP_DEADLINE_MS / 1000} s`;
      },
    });
    // Registered after the stop began (it was still starting): stop it now, like the rest.
    if (this.stopping) void this.stopOne(name);
  }

  /** Something still starting: a stop waits for it (bounded) so that nothing it starts is left behind. */
  starting<T>(work: Promise<T>): Promise<T> {
    this.pending.add(work);
    const settle = () => this.pending.delete(work);
    work.then(settle, settle);
    return work;
  }

  /**
   * Stops every process: each once all its users (tools/topology) are stopped, one SIGTERM
   * each, one line each. Answers whether all of them stopped cleanly (exit 0). Idempotent.
   */
  stopAll(): Promise<boolean> {
    this.stopping ??= (async () => {
      await Promise.race([Promise.allSettled([...this.pending]), after(STOP_DEADLINE_MS, undefined)]);
      await Promise.all([...this.members.keys()].map((name) => this.stopOne(name)));
      return !this.failed;
    })();
    return this.stopping;
  }

  private readonly stops = new Map<ProcessName, Promise<void>>();

  private stopOne(name: ProcessName): Promise<void> {
    let stopped = this.stops.get(name);
    if (!stopped) {
      stopped = (async () => {
        const users = usersOf(name).filter((user) => this.members.has(user));
        await Promise.all(users.map((user) => this.stopOne(user)));
        const member = this.members.get(name) as Member;
        const since = Date.now();
        const exit = await member.stop().catch((err: unknown) => `failed: ${(err as Error).message}`);
        if (exit === '0') console.log(`[start] ${member.label} stopped (${took(since)})`);
        else {
          this.failed = true;
          console.error(`[start] ${member.label} stopped: ${exit} (${took(since)})`);
        }
      })();
      this.stops.set(name, stopped);
    }
    return stopped;
  }
}

function exitOf(child: ChildProcess): string {
  if (child.signalCode) return `ended by ${child.signalCode}`;
  return child.exitCode === 0 ? '0' : `exit ${child.exitCode}`;
}
