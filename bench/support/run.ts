// What every benchmark shares: service processes it starts and stops, and the median it reports.
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { appendFileSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import path from 'node:path';
import { serviceNodeArgs } from '@parametric/topology';

const root = path.resolve(__dirname, '..', '..');

/** The median of several rounds: these machines are noisy, so no single run is quoted. */
export function median(values: number[]): number {
  return [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;
}

/**
 * A TypeScript entry point (e.g. `services/gateway/src/main.ts`) as its own process, with the
 * flags `npm start` and the images give every service's node (tools/topology
 * `SERVICE_NODE_FLAGS`): the services as they run, and the floors and bare express beside them on
 * the same runtime settings, so a ratio measures code, not flags.
 * `BENCH_CPU_PROF=policy` (any part of the script's path; several separated by commas, e.g.
 * `policy,gateway` for both sides of the policy read) runs the matching processes with
 * `--cpu-prof`, writing profiles to `BENCH_CPU_PROF_DIR` (default `bench/profiles`) as they exit.
 */
export function startProcess(
  script: string,
  env: NodeJS.ProcessEnv,
  /** A command the node process runs under (e.g. `valgrind` and its options, bench/instructions.ts). */
  under: readonly string[] = [],
  /** Node flags beside the service flags (e.g. `--perf-basic-prof-only-functions`). */
  nodeFlags: readonly string[] = [],
): ChildProcess {
  const profiled = process.env.BENCH_CPU_PROF;
  const profile = profiled?.split(',').some((part) => part !== '' && script.includes(part))
    ? [
        '--cpu-prof',
        `--cpu-prof-dir=${process.env.BENCH_CPU_PROF_DIR ?? path.join(root, 'bench', 'profiles')}`,
      ]
    : [];
  const [command, ...args] = [
    ...under,
    process.execPath,
    ...serviceNodeArgs(script, [...profile, ...nodeFlags]),
  ];
  return spawn(command as string, args, {
    cwd: root,
    env,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

/** How a named process runs: under a command, with extra node flags (both none by default). */
export type Wrap = (name: string) => { under?: readonly string[]; nodeFlags?: readonly string[] };

/** Every process as the platform runs it. */
export const unwrapped: Wrap = () => ({});

/** `startProcess` with what `wrap` gives the process called `name`. */
export function startNamed(
  script: string,
  name: string,
  env: NodeJS.ProcessEnv,
  wrap: Wrap = unwrapped,
): ChildProcess {
  const { under = [], nodeFlags = [] } = wrap(name);
  return startProcess(script, env, under, nodeFlags);
}

/** SIGTERM to each, waiting for each to exit (graceful shutdown is part of the platform). */
export async function stopProcesses(children: ChildProcess[]): Promise<void> {
  for (const child of children) {
    if (child.exitCode !== null || child.signalCode !== null) continue;
    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    await exited;
  }
}

/** A JSON request; the envelope's `data`, or an error naming the route and the answer. */
export async function json<T = unknown>(url: string, init: RequestInit & { body?: string } = {}): Promise<T> {
  const res = await fetch(url, {
    ...init,
    headers: { 'content-type': 'application/json', ...(init.headers ?? {}) },
  });
  const body = (await res.json()) as { data: T };
  if (!res.ok)
    throw new Error(`${init.method ?? 'GET'} ${url}: ${res.status} ${JSON.stringify(body).slice(0, 500)}`);
  return body.data;
}

/** Waits until every local port answers `/readyz` (`seconds`, 60 by default, at most). */
export async function waitReady(ports: ReadonlyArray<number | undefined>, seconds = 60): Promise<void> {
  for (let i = 0; i < seconds * 10; i++) {
    const ready = await Promise.all(
      ports.map((port) =>
        fetch(`http://127.0.0.1:${port}/readyz`)
          .then((r) => r.ok)
          .catch(() => false),
      ),
    );
    if (ready.every(Boolean)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('the platform did not become ready');
}

/**
 * One figure a benchmark measured, as `npm run bench` collects them: the figure, the bare
 * baseline measured in the same run, their ratio, and the target it is held to.
 */
export interface BenchFigure {
  /** Which benchmark (`gateway`, `policy`, `webhooks`, `mongo`, …). */
  benchmark: string;
  /** What was measured, e.g. `GET /api/organizations/me, 10 connections`. */
  figure: string;
  value: number;
  unit: string;
  /** The bare baseline of the same run, in the same unit, where there is one. */
  baseline?: number;
  /** `value / baseline`, or what the target compares (e.g. p99 / bare p99). */
  ratio?: number;
  /** The target as the issue states it, e.g. `>= 0.50 of bare`. */
  target?: string;
  met?: boolean;
}

/**
 * Prints the figures as Markdown rows and, when `BENCH_RESULTS_FILE` is set (`npm run bench`
 * sets it), appends them there as JSON lines for the report.
 */
export function report(figures: BenchFigure[]): void {
  for (const f of figures) {
    const cells = [
      f.benchmark,
      f.figure,
      `${Number(f.value.toFixed(2))} ${f.unit}`,
      f.baseline === undefined ? '' : `${Number(f.baseline.toFixed(2))} ${f.unit}`,
      f.ratio === undefined ? '' : f.ratio.toFixed(3),
      f.target ?? '',
      f.met === undefined ? '' : f.met ? 'met' : 'NOT met',
    ];
    console.log(`| ${cells.join(' | ')} |`);
  }
  const file = process.env.BENCH_RESULTS_FILE;
  if (file) appendFileSync(file, figures.map((f) => `${JSON.stringify(f)}\n`).join(''));
}

/**
 * CPU time a process has used so far, all its threads, in µs, from Linux's per-thread
 * scheduler statistics (nanoseconds); undefined where /proc is not there.
 */
export function processCpuMicros(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    let ns = 0;
    for (const task of readdirSync(`/proc/${pid}/task`)) {
      ns += Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, 'utf8').split(' ')[0]);
    }
    return ns / 1e3;
  } catch {
    return undefined;
  }
}

/** The process listening on a local TCP port (Linux only): how a benchmark finds a server it did not spawn. */
export function pidListeningOn(port: number): number | undefined {
  try {
    const hex = port.toString(16).toUpperCase().padStart(4, '0');
    const inodes = new Set<string>();
    for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
      for (const line of readFileSync(table, 'utf8').split('\n').slice(1)) {
        const cols = line.trim().split(/\s+/);
        // state 0A is LISTEN
        if (cols[1]?.endsWith(`:${hex}`) && cols[3] === '0A' && cols[9]) inodes.add(cols[9]);
      }
    }
    for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
      try {
        for (const fd of readdirSync(`/proc/${pid}/fd`)) {
          const target = readlinkSync(`/proc/${pid}/fd/${fd}`);
          const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
          if (inode && inodes.has(inode)) return Number(pid);
        }
      } catch {}
    }
  } catch {}
  return undefined;
}

/**
 * Where the CPU of a measured phase went, per process, in µs per request: on a machine shared
 * with other work the throughput moves with the load, the CPU each request costs much less.
 */
export async function cpuPerRequest<T extends { requests: number }>(
  processes: Record<string, number | undefined>,
  phase: () => Promise<T>,
): Promise<{ result: T; perRequest: Record<string, number> }> {
  const before = Object.fromEntries(Object.entries(processes).map(([k, pid]) => [k, processCpuMicros(pid)]));
  const result = await phase();
  const perRequest: Record<string, number> = {};
  for (const [name, pid] of Object.entries(processes)) {
    const start = before[name];
    const end = processCpuMicros(pid);
    if (start !== undefined && end !== undefined && result.requests > 0) {
      perRequest[name] = Math.round((end - start) / result.requests);
    }
  }
  return { result, perRequest };
}

/** Each process's median of `cpuPerRequest` figures over several rounds. */
function cpuMedians(rounds: Array<Record<string, number>>): Array<readonly [string, number]> {
  const names = Object.keys(rounds[0] ?? {});
  return names.map((name) => [name, median(rounds.map((r) => r[name] ?? 0))] as const);
}

/** The CPU a request cost all the processes measured, in µs: the sum of their medians. */
export function cpuTotal(rounds: Array<Record<string, number>>): number {
  return cpuMedians(rounds).reduce((sum, [, v]) => sum + v, 0);
}

/** `cpuPerRequest` figures of several rounds as one line: each process's median, and their sum. */
export function cpuSplit(rounds: Array<Record<string, number>>): string {
  const medians = cpuMedians(rounds);
  return `${medians.map(([name, v]) => `${name} ${v}`).join(', ')} (total ${cpuTotal(rounds)})`;
}
