/**
 * CPU per request at full speed on a hot path against its design floor, each server split into
 * the areas bench/instructions.ts counts (docs/performance.md, "The policy read as one find
 * command"): `GET /api/organizations/me` with an API key (the default) or, with
 * `CPU_PATH=policy`, `GET /api/policies/{id}`. The servers run as the platform runs them, with
 * V8's perf map; while `CPU_SECONDS` of load run against one side, `perf record` samples every
 * server of that side (its threads included: the collector's and the compilers'), and the load
 * generator counts the requests. A sample is charged to the first JavaScript function on its
 * stack — the code that called the builtin, the inline cache or the native code at the top — or,
 * with no JavaScript on the stack, to the native code at the top; the kernel (system calls, the
 * network, scheduling) and the collector have areas of their own. µs per request = samples ×
 * (1,000,000 ÷ `CPU_HZ`) ÷ requests, of one core. The report warns of a server still compiling
 * (V8's optimizing compilers above 5 % of its samples): its figure is warm-up, not the path's cost.
 *
 * What it is for: a per-request split at full speed that two processes can be compared by. The
 * instruction counts are steady but run 20-50 times slower, so a path that keeps compiling for
 * tens of thousands of requests (the policy read) shows its warm-up there; `--cpu-prof` charges
 * a process for the time it spent preempted, so it ranks functions within one process only.
 * Sampling has its own noise (a sample is 0.5 ms at the default rate; 5 s of load gives a server
 * some thousands) and its own cost: the policy read's servers came out 8 % (the platform's) and
 * 14 % (the floor's) above the CPU `npm run bench:policy` read from /proc for them in another run
 * of the same hour, so its ratios are a little below the throughput bench's CPU ratios.
 *
 *   npm run cpu-areas                                   # the key path, 3 rounds of 5 s a side
 *   CPU_PATH=policy npm run cpu-areas                   # the policy read
 *
 * Settings: `CPU_PATH` (`me` or `policy`), `CPU_WARM_SECONDS` of load on each side before
 * sampling (default 20), `CPU_SECONDS` a sampled round (default 5), `CPU_ROUNDS` (default 3,
 * alternating the sides), `CPU_CONNECTIONS` (default 10), `CPU_HZ` samples a second (default
 * 1999), `CPU_FUNCTIONS` (default 15): that many functions with the most samples in each server,
 * `CPU_POLICIES` (default 200) the policy read cycles over, `CPU_DIR` for the recordings (default
 * a temporary directory, printed; `perf report -i` reads them). Needs `perf` (Debian's
 * `linux-perf`) and the right to sample other processes (root, or `kernel.perf_event_paranoid`
 * at most 1).
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import {
  againstFloor,
  areaOf,
  COMPILER_AREA,
  load,
  perfMap,
  printAreas,
  type Server,
  type Side,
  STILL_COMPILING,
  startHotPath,
} from './support/hot-path-sides';

const PATH = process.env.CPU_PATH ?? 'me';
const WARM_SECONDS = Number(process.env.CPU_WARM_SECONDS ?? 20);
const SECONDS = Number(process.env.CPU_SECONDS ?? 5);
const ROUNDS = Number(process.env.CPU_ROUNDS ?? 3);
const CONNECTIONS = Number(process.env.CPU_CONNECTIONS ?? 10);
const HZ = Number(process.env.CPU_HZ ?? 1999);
const FUNCTIONS = Number(process.env.CPU_FUNCTIONS ?? 15);
const POLICIES = Number(process.env.CPU_POLICIES ?? 200);
const dir = process.env.CPU_DIR ?? mkdtempSync(path.join(tmpdir(), 'cpu-areas-'));

const KERNEL_AREA = 'kernel (system calls, network, scheduling)';
/** µs of one core a sample stands for. */
const SAMPLE_US = 1_000_000 / HZ;

/** Samples of one server over one or more rounds: by area and by function. */
interface Samples {
  total: number;
  areas: Map<string, number>;
  functions: Map<string, number>;
}

const emptySamples = (): Samples => ({ total: 0, areas: new Map(), functions: new Map() });
const add = (map: Map<string, number>, key: string, n = 1) => map.set(key, (map.get(key) ?? 0) + n);

/** perf attaches after it has written its file's header; a side's load starts only then. */
async function attached(file: string, perf: ChildProcess): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(existsSync(file) && statSync(file).size > 0)) {
    if (perf.exitCode !== null) throw new Error(`perf record exited (${perf.exitCode}) before sampling`);
    if (Date.now() > deadline) throw new Error(`perf record wrote nothing to ${file} within 10 s`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Samples every server of `side` while `SECONDS` of load run against it; answers the requests made. */
async function sampleRound(side: Side, key: string, file: string): Promise<number> {
  const pids = side.servers.map((server) => server.child.pid).join(',');
  const perf = spawn(
    'perf',
    ['record', '-q', '-g', '-e', 'cpu-clock', '-F', String(HZ), '-p', pids, '-o', file],
    { stdio: ['ignore', 'ignore', 'inherit'] },
  );
  const exited = once(perf, 'exit');
  try {
    await attached(file, perf);
    return await load(side.urls, key, CONNECTIONS, { seconds: SECONDS });
  } finally {
    perf.kill('SIGINT');
    const timer = setTimeout(() => perf.kill('SIGKILL'), 30_000);
    await exited;
    clearTimeout(timer);
  }
}

/**
 * Reads a recording's samples (`perf script`), charging each to an area and a function of the
 * server whose process it was taken in. JIT code is named from the process's own perf map, the
 * newest entry at an address winning (`perf` may name it by an older one).
 */
async function readSamples(file: string, side: Side, into: Map<number, Samples>): Promise<void> {
  const names = new Map(
    side.servers.map((server) => [server.child.pid as number, perfMap(server.child.pid)]),
  );
  const script = spawn('perf', ['script', '-i', file, '-F', 'pid,ip,sym,dso'], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const exited = once(script, 'exit');
  let pid: number | undefined;
  let frames: Array<{ name: string; kernel: boolean }> = [];
  const charge = () => {
    if (pid === undefined || frames.length === 0) return;
    const samples = into.get(pid);
    if (!samples) return;
    const top = frames[0] as { name: string; kernel: boolean };
    const js = frames.find((frame) => frame.name.startsWith('JS:'));
    const topArea = areaOf(top.name);
    const area = top.kernel
      ? KERNEL_AREA
      : topArea === 'V8: garbage collection' || !js
        ? topArea
        : areaOf(js.name);
    samples.total++;
    add(samples.areas, area);
    add(samples.functions, top.kernel ? `${KERNEL_AREA}${js ? ` < ${js.name}` : ''}` : (js ?? top).name);
  };
  for await (const line of createInterface({ input: script.stdout })) {
    const header = /^\s*(\d+)\s*$/.exec(line);
    if (header) {
      charge();
      pid = Number(header[1]);
      frames = [];
      continue;
    }
    const frame = /^\s*([0-9a-f]+) (.*) \((.*)\)$/.exec(line);
    if (!frame) continue;
    const [, ip, sym, dso] = frame as unknown as [string, string, string, string];
    const jit = /perf-\d+\.map|\[JIT\]/.test(dso);
    const name = (jit ? names.get(pid as number)?.(BigInt(`0x${ip}`)) : undefined) ?? sym;
    frames.push({ name, kernel: dso === '[kernel.kallsyms]' });
  }
  charge();
  const [code] = (await exited) as [number | null];
  if (code !== 0) throw new Error(`perf script -i ${file} exited ${code}`);
}

/** A figure as the tables print it: µs with one decimal. */
const us = (x: number) => x.toFixed(1);

async function main(): Promise<void> {
  execFileSync('perf', ['--version'], { stdio: 'ignore' });
  if (PATH !== 'me' && PATH !== 'policy') throw new Error(`CPU_PATH must be me or policy, not ${PATH}`);
  // The perf map names the JIT's code; the V8 log the flag also writes goes beside the recordings
  // (by default it lands in the working directory, the repository's root).
  const nodeFlags = ['--perf-basic-prof-only-functions', `--logfile=${path.join(dir, 'v8.log')}`];
  const { setup, stop } = await startHotPath(
    PATH,
    { wrap: () => ({ nodeFlags }), readySeconds: 60 },
    POLICIES,
  );
  try {
    const { sides, key } = setup;
    const servers = sides.flatMap((side) => side.servers);
    console.log(
      `CPU at full speed, ${setup.figure}: ${ROUNDS} rounds x ${SECONDS} s a side after ${WARM_SECONDS} s to warm, ${CONNECTIONS} connections, ${HZ} samples a second; recordings in ${dir}`,
    );
    for (const side of sides) await load(side.urls, key, CONNECTIONS, { seconds: WARM_SECONDS });
    const all = new Map(servers.map((server) => [server.child.pid as number, emptySamples()]));
    const perRequest = new Map<string, number[]>(servers.map((server) => [server.name, []]));
    const requests = new Map<string, number>(sides.map((side) => [side.name, 0]));
    for (let round = 0; round < ROUNDS; round++) {
      for (const side of sides) {
        const file = path.join(dir, `${side.name}.${round}.data`);
        const made = await sampleRound(side, key, file);
        const roundSamples = new Map(
          side.servers.map((server) => [server.child.pid as number, emptySamples()]),
        );
        await readSamples(file, side, roundSamples);
        requests.set(side.name, (requests.get(side.name) ?? 0) + made);
        for (const server of side.servers) {
          const got = roundSamples.get(server.child.pid as number) ?? emptySamples();
          perRequest.get(server.name)?.push((got.total * SAMPLE_US) / made);
          const total = all.get(server.child.pid as number) as Samples;
          total.total += got.total;
          for (const [area, n] of got.areas) add(total.areas, area, n);
          for (const [name, n] of got.functions) add(total.functions, name, n);
        }
      }
    }

    const { printSides, report } = againstFloor(setup, perRequest, ROUNDS);
    printSides('CPU µs per request', us);

    // By area, over every round: each server's samples ÷ its side's requests.
    const sideOf = new Map(sides.flatMap((side) => side.servers.map((server) => [server.name, side])));
    const perRequestOf = (server: Server, n: number) =>
      (n * SAMPLE_US) / (requests.get(sideOf.get(server.name)?.name ?? '') || 1);
    printAreas({
      setup,
      perRequest: (server, area) =>
        perRequestOf(server, all.get(server.child.pid as number)?.areas.get(area) ?? 0),
      areas: [...all.values()].flatMap((samples) => [...samples.areas.keys()]),
      what: 'CPU goes, µs per request over every round',
      least: 0.5,
      format: us,
    });
    for (const server of servers) {
      const samples = all.get(server.child.pid as number) as Samples;
      const compiling = (samples.areas.get(COMPILER_AREA) ?? 0) / samples.total;
      if (compiling > STILL_COMPILING)
        console.log(
          `\nWARNING: ${server.name} spent ${(compiling * 100).toFixed(0)} % of its samples in V8's optimizing compilers: still warming up, so its figure is not the path's steady cost (a longer CPU_WARM_SECONDS).`,
        );
    }
    for (const server of servers) {
      const samples = all.get(server.child.pid as number) as Samples;
      console.log(`\n${server.name}: the ${FUNCTIONS} functions charged the most, µs per request:`);
      for (const [name, n] of [...samples.functions.entries()]
        .sort((a, b) => b[1] - a[1])
        .slice(0, FUNCTIONS))
        console.log(`${us(perRequestOf(server, n)).padStart(7)}  ${name.slice(0, 160)}`);
    }
    report('cpu-areas', `${CONNECTIONS} connections, CPU per request at full speed (perf samples)`, 'µs');
  } finally {
    await stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
