/**
 * Instructions per request on a hot path against its design floor (docs/performance.md, "Hot
 * paths against their design floors"): `GET /api/organizations/me` with an API key (the gateway,
 * its floor and the duty floor; the default) or, with `INSTR_PATH=policy`, `GET /api/policies/{id}`
 * (the gateway and the policy service, against the floor's two processes and the duty floor's
 * two). Each server runs under
 * valgrind's callgrind, which counts every instruction the process executes (its JIT's code, its
 * compiler and collector threads included) while counting is switched on, and only then. On
 * these noisy two-core machines a server's CPU per request moves by ±15 % from one round to the
 * next (docs/performance.md, "The key path on a fourth machine"); a warm server's instruction
 * count over a fixed number of requests repeated within 0.2 % (the gateway) to 2.4 % (the floors)
 * from one run to the next, and its areas show where a change of a few per cent went. It is an instrument for comparing code, not a throughput figure: instructions are not
 * time (a cache miss costs more than an add), and under valgrind everything runs 20-50 times
 * slower, so a timer that fires per second weighs more per request than it does at full speed —
 * which is why each server's count at rest is printed beside it.
 *
 *   npm run instructions                                  # 3 rounds of 4,000 requests a side
 *   INSTR_FUNCTIONS=40 npm run instructions               # and where each server's count goes
 *   INSTR_NODE_FLAGS='--max-semi-space-size=32' npm run instructions
 *   INSTR_PATH=policy INSTR_FUNCTIONS=40 npm run instructions   # the policy read
 *
 * Settings: `INSTR_WARM` requests before counting (default 20,000: the first thousands run while
 * V8 still compiles), `INSTR_REQUESTS` per counted round, `INSTR_ROUNDS`, `INSTR_CONNECTIONS`
 * (default 10, as bench/gateway.ts loads), `INSTR_REST_SECONDS` of counting with no load,
 * `INSTR_FUNCTIONS` (default 0): that many functions with the most instructions of their own in
 * each server's last round, the JIT's code named from V8's perf map: the servers then run with
 * `--perf-basic-prof-only-functions`, which makes every young collection report each object it
 * moves (`Heap::OnMoveEvent`, 2 % of the gateway's count), so compare counts from runs alike; the
 * report then also warns of a server still compiling (V8's optimizing compilers above 5 % of its
 * count), whose figure is warm-up, not the path's steady cost.
 * `INSTR_NODE_FLAGS`: node flags for every server beside the services' own (a runtime setting
 * tried on both sides at once). `INSTR_POLICIES` (default 200): the policies the policy read
 * cycles over, bought through the API. Needs `valgrind` (Debian's package) on PATH; the dumps stay in
 * `INSTR_DIR` (default a temporary directory, printed) for `callgrind_annotate`.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  againstFloor,
  areaOf,
  COMPILER_AREA,
  load,
  perfMap,
  printAreas,
  type Server,
  type Setup,
  STILL_COMPILING,
  startHotPath,
} from './support/hot-path-sides';
import { median } from './support/run';

const WARM = Number(process.env.INSTR_WARM ?? 20_000);
const REQUESTS = Number(process.env.INSTR_REQUESTS ?? 4_000);
const ROUNDS = Number(process.env.INSTR_ROUNDS ?? 3);
const CONNECTIONS = Number(process.env.INSTR_CONNECTIONS ?? 10);
const REST_SECONDS = Number(process.env.INSTR_REST_SECONDS ?? 10);
const FUNCTIONS = Number(process.env.INSTR_FUNCTIONS ?? 0);
const POLICIES = Number(process.env.INSTR_POLICIES ?? 200);
const PATH = process.env.INSTR_PATH ?? 'me';
const dir = process.env.INSTR_DIR ?? mkdtempSync(path.join(tmpdir(), 'instructions-'));

/** A count as the tables print it: whole, with thousands separated. */
const n = (x: number) => Math.round(x).toLocaleString('en');

/** A server run under callgrind with counting off until asked. */
function callgrind(name: string): string[] {
  return [
    'valgrind',
    '--tool=callgrind',
    '--instr-atstart=no',
    '--dump-instr=no',
    `--callgrind-out-file=${path.join(dir, `${name}.%p`)}`,
    `--log-file=${path.join(dir, `${name}.valgrind.log`)}`,
  ];
}

/** `callgrind_control`: it waits for the process to act on the command. */
function control(server: Server, ...args: string[]): void {
  execFileSync('callgrind_control', [...args, String(server.child.pid)], { stdio: 'ignore' });
}

/** The newest dump of a server (callgrind numbers them `<name>.<pid>.<n>`). */
function lastDump(server: Server): string {
  const prefix = `${server.name}.${server.child.pid}.`;
  const parts = readdirSync(dir)
    .filter((f) => f.startsWith(prefix))
    .map((f) => Number(f.slice(prefix.length)))
    .filter(Number.isInteger);
  if (parts.length === 0) throw new Error(`no callgrind dump of ${server.name} in ${dir}`);
  return path.join(dir, `${prefix}${Math.max(...parts)}`);
}

/** Instructions the servers executed while `phase` ran (counting on, then off, then dumped), each. */
async function count(servers: Server[], phase: () => Promise<unknown>): Promise<number[]> {
  for (const server of servers) {
    control(server, '-z');
    control(server, '-i', 'on');
  }
  await phase();
  return servers.map((server) => {
    control(server, '-i', 'off');
    control(server, '-d');
    const totals = /^totals: (\d+)/m.exec(readFileSync(lastDump(server), 'utf8'));
    if (!totals?.[1]) throw new Error(`${server.name}: no totals in ${lastDump(server)}`);
    return Number(totals[1]);
  });
}

/** Instructions of each function's own (not its callees') in the server's last dump. */
function ownInstructions(server: Server): Map<string, number> {
  const named = perfMap(server.child.pid);
  const nameOf = (address: bigint) => named(address) ?? `(JIT code, unnamed) 0x${address.toString(16)}`;
  const annotated = execFileSync(
    'callgrind_annotate',
    ['--inclusive=no', '--threshold=100', lastDump(server)],
    { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 },
  );
  const byName = new Map<string, number>();
  for (const line of annotated.split('\n')) {
    const m = /^\s*([\d,]+) \([\s\d.]+%\)\s+(.*)$/.exec(line);
    if (!m?.[1] || !m[2] || m[2].startsWith('PROGRAM TOTALS')) continue;
    const ir = Number(m[1].replaceAll(',', ''));
    // Code without a symbol is named by its address (`'2` and so on: a recursion level).
    const jit = /^(?:\?\?\?:)?0x([0-9a-f]+)(?:'\d+)? \[\?\?\?\]$|^0x([0-9a-f]+)(?:'\d+)?$/.exec(m[2]);
    const address = jit?.[1] ?? jit?.[2];
    const name = address
      ? nameOf(BigInt(`0x${address}`))
      : m[2]
          .replace(/^\?\?\?:/, '')
          .replace(/ \[.*\]$/, '')
          .replace(/'\d+$/, '');
    byName.set(name, (byName.get(name) ?? 0) + ir);
  }
  return byName;
}

/** Under valgrind a service starts 10-20 times slower than it does alone. */
const READY_SECONDS = 600;

async function main(): Promise<void> {
  execFileSync('valgrind', ['--version'], { stdio: 'ignore' });
  if (PATH !== 'me' && PATH !== 'policy') throw new Error(`INSTR_PATH must be me or policy, not ${PATH}`);
  const nodeFlags = [
    // The perf map names the JIT's code; the V8 log that flag also writes goes beside the dumps
    // (by default it lands in the working directory, the repository's root).
    ...(FUNCTIONS > 0 ? ['--perf-basic-prof-only-functions', `--logfile=${path.join(dir, 'v8.log')}`] : []),
    ...(process.env.INSTR_NODE_FLAGS?.split(' ').filter(Boolean) ?? []),
  ];
  const { setup, stop } = await startHotPath(
    PATH,
    { wrap: (name) => ({ under: callgrind(name), nodeFlags }), readySeconds: READY_SECONDS },
    POLICIES,
  );
  try {
    const { sides, key } = setup;
    const servers = sides.flatMap((side) => side.servers);
    console.log(
      `instructions, ${setup.figure}: ${ROUNDS} rounds x ${REQUESTS} requests a side after ${WARM} to warm, ${CONNECTIONS} connections; dumps in ${dir}`,
    );
    for (const side of sides) await load(side.urls, key, CONNECTIONS, { amount: WARM });
    const rest = await count(servers, () => new Promise((r) => setTimeout(r, REST_SECONDS * 1000)));
    const restRate = new Map(servers.map((server, i) => [server.name, (rest[i] ?? 0) / REST_SECONDS]));
    const perRequest = new Map<string, number[]>(servers.map((server) => [server.name, []]));
    const seconds = new Map<string, number[]>(sides.map((side) => [side.name, []]));
    for (let round = 0; round < ROUNDS; round++) {
      // Alternating, as the throughput benchmarks do, though counts do not feel the machine's noise.
      for (const side of sides) {
        const started = performance.now();
        const totals = await count(side.servers, () =>
          load(side.urls, key, CONNECTIONS, { amount: REQUESTS }),
        );
        seconds.get(side.name)?.push((performance.now() - started) / 1000);
        side.servers.forEach((server, i) => {
          perRequest.get(server.name)?.push((totals[i] ?? 0) / REQUESTS);
        });
      }
    }
    const { printSides, report } = againstFloor(setup, perRequest, ROUNDS);
    printSides('instructions per request', n, {
      headings: ['at rest, per second', 'of which at rest (a round lasted)'],
      cells: (server, side) => {
        const window = median(seconds.get(side.name) ?? []);
        const atRest = restRate.get(server.name) ?? 0;
        return [n(atRest), `${n((atRest * window) / REQUESTS)} (${window.toFixed(1)} s)`];
      },
    });
    if (FUNCTIONS > 0) printWhere(setup);
    report('instructions', `${CONNECTIONS} connections, instructions per request`, 'instructions');
  } finally {
    await stop();
  }
}

/** Where each server's instructions went in its last round: by area, side by side, then its top functions. */
function printWhere(setup: Setup): void {
  const servers = setup.sides.flatMap((side) => side.servers);
  const own = servers.map((server) => ownInstructions(server));
  const areas = own.map((functions) => {
    const byArea = new Map<string, number>();
    for (const [name, ir] of functions) byArea.set(areaOf(name), (byArea.get(areaOf(name)) ?? 0) + ir);
    return byArea;
  });
  printAreas({
    setup,
    perRequest: (server, area) => (areas[servers.indexOf(server)]?.get(area) ?? 0) / REQUESTS,
    areas: areas.flatMap((byArea) => [...byArea.keys()]),
    what: 'instructions go, per request, last round',
    least: 500,
    format: n,
  });
  servers.forEach((server, i) => {
    const byArea = areas[i] ?? new Map<string, number>();
    const total = [...byArea.values()].reduce((sum, ir) => sum + ir, 0);
    const compiling = (byArea.get(COMPILER_AREA) ?? 0) / total;
    if (compiling > STILL_COMPILING)
      console.log(
        `\nWARNING: ${server.name} spent ${(compiling * 100).toFixed(0)} % of its count in V8's optimizing compilers: still warming up, so its figure is not the path's steady cost (a larger INSTR_WARM).`,
      );
  });
  servers.forEach((server, i) => {
    console.log(
      `\n${server.name}: the ${FUNCTIONS} functions with most instructions of their own, per request:`,
    );
    for (const [name, ir] of [...(own[i] ?? new Map<string, number>()).entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, FUNCTIONS))
      console.log(`${n(ir / REQUESTS).padStart(8)}  ${name.slice(0, 160)}`);
  });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
