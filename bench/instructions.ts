/**
 * Instructions per request on the gateway's key path (`GET /api/organizations/me` with an API
 * key), the gateway against its design floor and the duty floor: each server runs under
 * valgrind's callgrind, which counts every instruction the process executes (its JIT's code, its
 * compiler and collector threads included) while counting is switched on, and only then. On
 * these noisy two-core machines a server's CPU per request moves by ±15 % from one round to the
 * next (docs/performance.md, "The key path on a fourth machine"); a warm server's instruction
 * count over a fixed number of requests repeats to a fraction of a per cent, so a change worth
 * 2 % shows. It is an instrument for comparing code, not a throughput figure: instructions are not
 * time (a cache miss costs more than an add), and under valgrind everything runs 20-50 times
 * slower, so a timer that fires per second weighs more per request than it does at full speed —
 * which is why each server's count at rest is printed beside it.
 *
 *   npm run instructions                                  # 3 rounds of 4,000 requests a server
 *   INSTR_FUNCTIONS=40 npm run instructions               # and where each server's count goes
 *   INSTR_NODE_FLAGS='--max-semi-space-size=32' npm run instructions
 *
 * Settings: `INSTR_WARM` requests before counting (default 20,000: the first thousands run while
 * V8 still compiles), `INSTR_REQUESTS` per counted round, `INSTR_ROUNDS`, `INSTR_CONNECTIONS`
 * (default 10, as bench/gateway.ts loads), `INSTR_REST_SECONDS` of counting with no load,
 * `INSTR_FUNCTIONS` (default 0): that many functions with the most instructions of their own in
 * each server's last round, the JIT's code named from V8's perf map: the servers then run with
 * `--perf-basic-prof-only-functions`, which makes every young collection report each object it
 * moves (`Heap::OnMoveEvent`, 2 % of the gateway's count), so compare counts from runs alike.
 * `INSTR_NODE_FLAGS`: node flags for all three servers beside the services' own (a runtime setting
 * tried on both sides at once). Needs `valgrind` (Debian's package) on PATH; the dumps stay in
 * `INSTR_DIR` (default a temporary directory, printed) for `callgrind_annotate`.
 */
import type { ChildProcess } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startLocalMongo } from '@parametric/embedded-mongo';
import { freePort } from '@parametric/local-process';
import { startLocalRedis } from '@parametric/local-redis';
import autocannon from 'autocannon';
import { assertOnePointEach, assertSameBody } from './support/floors';
import { serviceEnv } from './support/platform';
import { json, median, report, startProcess, stopProcesses, waitReady } from './support/run';

const WARM = Number(process.env.INSTR_WARM ?? 20_000);
const REQUESTS = Number(process.env.INSTR_REQUESTS ?? 4_000);
const ROUNDS = Number(process.env.INSTR_ROUNDS ?? 3);
const CONNECTIONS = Number(process.env.INSTR_CONNECTIONS ?? 10);
const REST_SECONDS = Number(process.env.INSTR_REST_SECONDS ?? 10);
const FUNCTIONS = Number(process.env.INSTR_FUNCTIONS ?? 0);
const dir = process.env.INSTR_DIR ?? mkdtempSync(path.join(tmpdir(), 'instructions-'));

/** A server run under callgrind with counting off until asked. */
interface Counted {
  name: string;
  url: string;
  child: ChildProcess;
}

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
function control(server: Counted, ...args: string[]): void {
  execFileSync('callgrind_control', [...args, String(server.child.pid)], { stdio: 'ignore' });
}

/** The newest dump of a server (callgrind numbers them `<name>.<pid>.<n>`). */
function lastDump(server: Counted): string {
  const prefix = `${server.name}.${server.child.pid}.`;
  const parts = readdirSync(dir)
    .filter((f) => f.startsWith(prefix))
    .map((f) => Number(f.slice(prefix.length)))
    .filter(Number.isInteger);
  if (parts.length === 0) throw new Error(`no callgrind dump of ${server.name} in ${dir}`);
  return path.join(dir, `${prefix}${Math.max(...parts)}`);
}

/** Instructions the server executed while `phase` ran (counting on, then off, then dumped). */
async function count(server: Counted, phase: () => Promise<void>): Promise<number> {
  control(server, '-z');
  control(server, '-i', 'on');
  await phase();
  control(server, '-i', 'off');
  control(server, '-d');
  const totals = /^totals: (\d+)/m.exec(readFileSync(lastDump(server), 'utf8'));
  if (!totals?.[1]) throw new Error(`${server.name}: no totals in ${lastDump(server)}`);
  return Number(totals[1]);
}

async function load(url: string, key: string, amount: number): Promise<void> {
  const result = await autocannon({
    url,
    connections: CONNECTIONS,
    amount,
    timeout: 60,
    headers: { 'x-api-key': key },
  });
  if (result.non2xx > 0 || result.errors > 0 || result.timeouts > 0)
    throw new Error(`${url}: ${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts`);
}

/** V8's perf map of a process: code address ranges and the function each holds. */
function perfMap(pid: number | undefined): Array<{ start: bigint; end: bigint; name: string }> {
  let text = '';
  try {
    text = readFileSync(`/tmp/perf-${pid}.map`, 'utf8');
  } catch {
    return [];
  }
  const entries = text
    .split('\n')
    .map((line) => /^([0-9a-f]+) ([0-9a-f]+) (.*)$/.exec(line))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => {
      const start = BigInt(`0x${m[1]}`);
      return { start, end: start + BigInt(`0x${m[2]}`), name: m[3] as string };
    });
  // A later entry for the same address is newer code: keep the last one written.
  return entries.reverse().sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0));
}

/** Instructions of each function's own (not its callees') in the server's last dump. */
function ownInstructions(server: Counted): Map<string, number> {
  const map = perfMap(server.child.pid);
  const nameOf = (address: bigint) => {
    let low = 0;
    let high = map.length - 1;
    let found: string | undefined;
    while (low <= high) {
      const mid = (low + high) >> 1;
      const entry = map[mid] as (typeof map)[number];
      if (entry.start <= address) {
        if (address < entry.end) found = entry.name;
        low = mid + 1;
      } else high = mid - 1;
    }
    return found ?? `(JIT code, unnamed) 0x${address.toString(16)}`;
  };
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

const GC =
  /Scaveng|Marking|Sweep|MarkCompact|Evacuat|RememberedSet|Heap::|HeapObject::SizeFromMap|ObjectCache|RootScavenge|RecordWrite|GCTracer|MinorMS|heap::base|cppgc/;
const SHAPES =
  /MapUpdater|Map::|Transition|MigrateToMap|MigrateInstance|GeneralizeField|FieldType|DescriptorArray/;

/**
 * Where an instruction went, coarsely enough to compare two servers: the collector, property
 * access through V8's inline caches, object shapes changing, each package's or platform file's
 * JavaScript (from the perf map's `JS:` names), Node's own JavaScript, V8's other builtins and
 * runtime, and native code (the HTTP parser, crypto, libc).
 */
function areaOf(name: string): string {
  if (GC.test(name)) return 'V8: garbage collection';
  if (/^Builtins_\w*IC/.test(name)) return 'V8: property access (inline cache builtins)';
  if (SHAPES.test(name)) return 'V8: object shapes (map updates, migrations)';
  // `JS:<tier><name> <file>:<line>:<column>`; the file is the last word.
  const js = name.startsWith('JS:')
    ? name.slice(name.lastIndexOf(' ') + 1).replace(/:\d+:\d+$/, '')
    : undefined;
  if (js !== undefined) {
    const dependency = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(js)?.[1];
    if (dependency) return `js: ${dependency}`;
    if (js.startsWith('node:')) return `js: ${js.replace(/^node:(internal\/)?/, 'node:').split('/')[0]}`;
    const own = /\/((?:services|libs|bench)\/.*)$/.exec(js)?.[1];
    return own ? `js: ${own.replace(/\/src\//, '/')}` : `js: ${js}`;
  }
  if (name.startsWith('(JIT code, unnamed)')) return 'JIT code, unnamed';
  if (name.startsWith('Builtins_')) return 'V8: other builtins';
  if (/v8::|Runtime_|^v8_/.test(name)) return 'V8: runtime (C++)';
  if (/llhttp/.test(name)) return 'native: HTTP parser';
  if (/sha256|OPENSSL|EVP_|HMAC|CRYPTO|ossl_/.test(name)) return 'native: crypto';
  if (/^node::|uv_/.test(name)) return 'native: node and libuv';
  return 'native: libc and other';
}

async function main(): Promise<void> {
  execFileSync('valgrind', ['--version'], { stdio: 'ignore' });
  const [mongo, redis] = await Promise.all([startLocalMongo(), startLocalRedis()]);
  const children: ChildProcess[] = [];
  try {
    const [gatewayPort, opsPort, webhooksPort, floorPort, dutiesPort] = await Promise.all(
      Array.from({ length: 5 }, () => freePort()),
    );
    const shared = serviceEnv(mongo.url, redis.url);
    const pepper = randomBytes(24).toString('hex');
    const nodeFlags = [
      ...(FUNCTIONS > 0 ? ['--perf-basic-prof-only-functions'] : []),
      ...(process.env.INSTR_NODE_FLAGS?.split(' ').filter(Boolean) ?? []),
    ];
    const webhooks = startProcess('services/webhooks/src/main.ts', {
      ...shared,
      WEBHOOKS_HOST: '127.0.0.1',
      WEBHOOKS_PORT: String(webhooksPort),
      WEBHOOK_SECRET_KEY: randomBytes(32).toString('base64'),
      ALLOW_INSECURE_WEBHOOKS: 'true',
    });
    children.push(webhooks);
    const gateway: Counted = {
      name: 'gateway',
      url: `http://127.0.0.1:${gatewayPort}/api/organizations/me`,
      child: startProcess(
        'services/gateway/src/main.ts',
        {
          ...shared,
          GATEWAY_PORT: String(gatewayPort),
          OPS_PORT: String(opsPort),
          OPS_TOKEN: randomBytes(24).toString('hex'),
          API_KEY_PEPPER: pepper,
          WEBHOOKS_URL: `http://127.0.0.1:${webhooksPort}`,
          RATE_LIMIT_POINTS: '1000000000',
        },
        callgrind('gateway'),
        nodeFlags,
      ),
    };
    children.push(gateway.child);
    // Under valgrind a service starts 10-20 times slower than it does alone.
    await waitReady([gatewayPort, webhooksPort], 600);
    const api = `http://127.0.0.1:${gatewayPort}/api`;
    const { organization } = await json<{ organization: { id: string; apiKey: string } }>(
      `${api}/auth/register-organization`,
      {
        method: 'POST',
        body: JSON.stringify({
          type: 'COOPERATIVE',
          countryCode: 'KE',
          name: 'Instruction Co-op',
          adminEmail: 'admin@instructions.example',
          adminPassword: 'sorghum-rains-instructions',
        }),
      },
    );
    const key = organization.apiKey;
    await json(`${api}/organizations/me/webhook`, {
      method: 'PUT',
      headers: { 'x-api-key': key },
      body: JSON.stringify({ url: `http://127.0.0.1:${floorPort}/hook` }),
    });
    const body = await (await fetch(gateway.url, { headers: { 'x-api-key': key } })).text();
    const floorEnv = {
      ...process.env,
      REDIS_URL: redis.url,
      RATE_LIMIT_POINTS: '1000000000',
      FLOOR_ORGANIZATION_ID: organization.id,
      FLOOR_ME_BODY: body,
    };
    const floor: Counted = {
      name: 'floor',
      url: `http://127.0.0.1:${floorPort}/api/organizations/me`,
      child: startProcess(
        'bench/support/floor-gateway.ts',
        { ...floorEnv, PORT: String(floorPort) },
        callgrind('floor'),
        nodeFlags,
      ),
    };
    const duties: Counted = {
      name: 'duties',
      url: `http://127.0.0.1:${dutiesPort}/api/organizations/me`,
      child: startProcess(
        'bench/support/floor-gateway.ts',
        {
          ...floorEnv,
          PORT: String(dutiesPort),
          FLOOR_DUTIES: '1',
          FLOOR_API_KEY_PEPPER: pepper,
          FLOOR_API_KEY: key,
        },
        callgrind('duties'),
        nodeFlags,
      ),
    };
    children.push(floor.child, duties.child);
    await waitReady([floorPort, dutiesPort], 600);
    const servers = [gateway, floor, duties];
    for (const server of servers.slice(1)) {
      assertSameBody(
        `GET /api/organizations/me (${server.name})`,
        body,
        await (await fetch(server.url, { headers: { 'x-api-key': key } })).text(),
      );
    }
    await assertOnePointEach(
      redis.url,
      organization.id,
      Object.fromEntries(servers.map((s) => [s.name, () => fetch(s.url, { headers: { 'x-api-key': key } })])),
    );

    console.log(
      `instructions: ${ROUNDS} rounds x ${REQUESTS} requests a server after ${WARM} to warm, ${CONNECTIONS} connections; dumps in ${dir}`,
    );
    for (const server of servers) await load(server.url, key, WARM);
    const rest: Record<string, number> = {};
    for (const server of servers) {
      rest[server.name] = await count(server, () => new Promise((r) => setTimeout(r, REST_SECONDS * 1000)));
    }
    const perRequest: Record<string, number[]> = Object.fromEntries(servers.map((s) => [s.name, []]));
    const seconds: Record<string, number[]> = Object.fromEntries(servers.map((s) => [s.name, []]));
    for (let round = 0; round < ROUNDS; round++) {
      // Alternating, as the throughput benchmarks do, though counts do not feel the machine's noise.
      for (const server of servers) {
        const started = performance.now();
        const total = await count(server, () => load(server.url, key, REQUESTS));
        seconds[server.name]?.push((performance.now() - started) / 1000);
        perRequest[server.name]?.push(total / REQUESTS);
      }
    }
    const n = (x: number) => Math.round(x).toLocaleString('en');
    console.log(
      '\n| server | instructions per request (rounds) | median | vs floor | at rest, per second | of which at rest (a round lasted) |',
    );
    console.log('| --- | --- | --- | --- | --- | --- |');
    const floorMedian = median(perRequest.floor ?? []);
    for (const server of servers) {
      const rounds = perRequest[server.name] ?? [];
      const restRate = (rest[server.name] ?? 0) / REST_SECONDS;
      const window = median(seconds[server.name] ?? []);
      console.log(
        `| ${server.name} | ${rounds.map(n).join(', ')} | ${n(median(rounds))} | ${(median(rounds) / floorMedian).toFixed(3)} | ${n(restRate)} | ${n((restRate * window) / REQUESTS)} (${window.toFixed(1)} s) |`,
      );
    }
    if (FUNCTIONS > 0) {
      const own = servers.map((server) => ownInstructions(server));
      const areas = own.map((functions) => {
        const byArea = new Map<string, number>();
        for (const [name, ir] of functions) byArea.set(areaOf(name), (byArea.get(areaOf(name)) ?? 0) + ir);
        return byArea;
      });
      const perReq = (byArea: Map<string, number> | undefined, area: string) =>
        (byArea?.get(area) ?? 0) / REQUESTS;
      const names = [...new Set(areas.flatMap((byArea) => [...byArea.keys()]))].sort(
        (a, b) => perReq(areas[0], b) - perReq(areas[2], b) - (perReq(areas[0], a) - perReq(areas[2], a)),
      );
      console.log(
        `\nWhere each server's instructions go, per request, last round (sorted by gateway − duty floor; areas under 500 on every side left out):\n`,
      );
      console.log(`| area | ${servers.map((s) => s.name).join(' | ')} | gateway − duties |`);
      console.log(`| --- | ${servers.map(() => '---').join(' | ')} | --- |`);
      for (const area of names) {
        const values = areas.map((byArea) => perReq(byArea, area));
        if (values.every((v) => v < 500)) continue;
        console.log(`| ${area} | ${values.map(n).join(' | ')} | ${n((values[0] ?? 0) - (values[2] ?? 0))} |`);
      }
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
    report(
      servers
        .slice(0, 1)
        .concat(servers.slice(2))
        .map((server) => ({
          benchmark: 'instructions',
          figure: `GET /api/organizations/me (API key), ${CONNECTIONS} connections, instructions per request, ${server.name} vs its design floor`,
          value: median(perRequest[server.name] ?? []),
          unit: 'instructions',
          baseline: floorMedian,
          ratio: median(perRequest[server.name] ?? []) / floorMedian,
        })),
    );
  } finally {
    await stopProcesses(children);
    await Promise.all([mongo.stop(), redis.stop()]);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
