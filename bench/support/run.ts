// What every benchmark shares: service processes it starts and stops, and the median it reports.
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { appendFileSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(__dirname, '..', '..');

/** The median of several rounds: these machines are noisy, so no single run is quoted. */
export function median(values: number[]): number {
  return [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;
}

/** A TypeScript entry point (e.g. `services/gateway/src/main.ts`) as its own process. */
export function startProcess(script: string, env: NodeJS.ProcessEnv): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', script], {
    cwd: root,
    env,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
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

/** Waits until every local port answers `/readyz` (60 s at most). */
export async function waitReady(ports: ReadonlyArray<number | undefined>): Promise<void> {
  for (let i = 0; i < 600; i++) {
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
