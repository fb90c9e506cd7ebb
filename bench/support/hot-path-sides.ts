/**
 * The two hot paths of issue 24 as the per-request instruments measure them, each server a
 * process of its own: `GET /api/organizations/me` with an API key (the gateway, its floor and its
 * duty floor) and `GET /api/policies/{id}` (the gateway and the policy service, against the
 * floor's two processes and the duty floor's two). bench/instructions.ts counts their instructions under callgrind;
 * bench/cpu-areas.ts samples their CPU at full speed with `perf`. Both split a server's cost into
 * the same areas (`areaOf`), named from V8's perf map (`perfMap`).
 */
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { startLocalMongo } from '@parametric/embedded-mongo';
import { startLocalChain } from '@parametric/local-chain';
import { startLocalRedis } from '@parametric/local-redis';
import autocannon from 'autocannon';
import { assertOnePointEach, assertSameBody } from './floors';
import { startKeyPath } from './key-path';
import {
  buyPolicies,
  type PolicyFloor,
  type Stores,
  startPolicyFloor,
  startPolicyPlatform,
} from './policy-read';
import { median, report, stopProcesses, type Wrap } from './run';

/** One server of a side, by the name its figures are printed under. */
export interface Server {
  name: string;
  child: ChildProcess;
}

/** One side of the comparison: where its requests go, and the servers they pass through. */
export interface Side {
  name: string;
  /** The URL of each request, in turn. */
  urls: string[];
  servers: Server[];
}

/** A measured path: its sides (the floor among them) and the side the difference is taken against. */
export interface Setup {
  figure: string;
  sides: Side[];
  key: string;
  /** The side the last column of the areas' table subtracts (the duty floor, else the floor). */
  against: string;
}

/** How the servers of a path start: under a command or with extra flags, given time to be ready. */
export interface Start {
  wrap: Wrap;
  readySeconds: number;
}

/**
 * Requests to `urls` in turn with the API key, `connections` at a time: `amount` of them, or for
 * `seconds`. Refuses a run with any answer but a 2xx (a bench of errors measures nothing).
 * Answers how many requests were made.
 */
export async function load(
  urls: string[],
  key: string,
  connections: number,
  size: { amount: number } | { seconds: number },
): Promise<number> {
  const base = new URL(urls[0] as string);
  const paths = urls.map((url) => new URL(url).pathname);
  let i = 0;
  const result = await autocannon({
    url: base.origin,
    connections,
    ...('amount' in size ? { amount: size.amount } : { duration: size.seconds }),
    timeout: 60,
    headers: { 'x-api-key': key },
    requests: [
      { method: 'GET', setupRequest: (req) => ({ ...req, path: paths[i++ % paths.length] as string }) },
    ],
  });
  if (result.non2xx > 0 || result.errors > 0 || result.timeouts > 0)
    throw new Error(
      `${base.origin}: ${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts`,
    );
  return result.requests.total;
}

/**
 * V8's perf map of a process (`--perf-basic-prof-only-functions`), as a lookup from a code
 * address to the function there. Of entries at one address (code moved or compiled again there)
 * the newest, written last, wins: `perf` itself may name an address by an older entry.
 */
export function perfMap(pid: number | undefined): (address: bigint) => string | undefined {
  let text = '';
  try {
    text = readFileSync(`/tmp/perf-${pid}.map`, 'utf8');
  } catch {
    return () => undefined;
  }
  const entries = text
    .split('\n')
    .map((line) => /^([0-9a-f]+) ([0-9a-f]+) (.*)$/.exec(line))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => {
      const start = BigInt(`0x${m[1]}`);
      return { start, end: start + BigInt(`0x${m[2]}`), name: m[3] as string };
    });
  // The sort is stable, so of entries at one address the newest stays last: the one the search
  // below lands on.
  entries.sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0));
  return (address) => {
    let low = 0;
    let high = entries.length - 1;
    let found: string | undefined;
    while (low <= high) {
      const mid = (low + high) >> 1;
      const entry = entries[mid] as (typeof entries)[number];
      if (entry.start <= address) {
        if (address < entry.end) found = entry.name;
        low = mid + 1;
      } else high = mid - 1;
    }
    return found;
  };
}

const GC =
  /Scaveng|Marking|Sweep|MarkCompact|Evacuat|RememberedSet|Heap::|HeapObject::SizeFromMap|ObjectCache|RootScavenge|RecordWrite|GCTracer|MinorMS|heap::base|cppgc/;
const SHAPES =
  /MapUpdater|Map::|Transition|MigrateToMap|MigrateInstance|GeneralizeField|FieldType|DescriptorArray/;
/** V8's optimizing compilers at work (their zones included): warm-up, or code being made again. */
const COMPILER = /v8::internal::(compiler|maglev|turboshaft)::|v8::internal::Zone(::|List)/;
export const COMPILER_AREA = 'V8: optimizing compiler (TurboFan, Maglev)';
/**
 * A server whose optimizing compilers took more than this share of its count or its samples was
 * still warming up (or recompiling): its figure is not the path's steady cost.
 */
export const STILL_COMPILING = 0.05;

/**
 * Where an instruction or a sample went, coarsely enough to compare two servers: the collector,
 * property access through V8's inline caches, object shapes changing, each package's or platform
 * file's JavaScript (from the perf map's `JS:` names), Node's own JavaScript, V8's other builtins
 * and runtime, and native code (the HTTP parser, crypto, libc).
 */
export function areaOf(name: string): string {
  if (GC.test(name)) return 'V8: garbage collection';
  if (/^Builtins_\w*IC/.test(name)) return 'V8: property access (inline cache builtins)';
  if (SHAPES.test(name)) return 'V8: object shapes (map updates, migrations)';
  if (COMPILER.test(name)) return COMPILER_AREA;
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

/** The key path: the gateway (the webhooks service it asks is not measured), its floor and its duty floor. */
export async function organizationRead(
  stores: { mongoUrl: string; redisUrl: string },
  children: ChildProcess[],
  start: Start,
): Promise<Setup> {
  const keyPath = await startKeyPath(stores, children, {
    // Nothing is delivered to it while the reads are measured.
    webhookUrl: 'http://127.0.0.1:9/hook',
    wrap: (name) => (name === 'webhooks' ? {} : start.wrap(name)),
    readySeconds: start.readySeconds,
  });
  return {
    figure: 'GET /api/organizations/me (API key)',
    sides: [
      {
        name: 'gateway',
        urls: [`${keyPath.api}/organizations/me`],
        servers: [{ name: 'gateway', child: keyPath.gateway }],
      },
      { name: 'floor', urls: [keyPath.floor.url], servers: [{ name: 'floor', child: keyPath.floor.child }] },
      {
        name: 'duties',
        urls: [keyPath.duties.url],
        servers: [{ name: 'duties', child: keyPath.duties.child }],
      },
    ],
    key: keyPath.organization.apiKey,
    against: 'duties',
  };
}

/**
 * The policy read: the gateway and the policy service against the floor's two processes and the
 * duty floor's two, over `policies` policies.
 */
export async function policyRead(
  stores: Stores,
  children: ChildProcess[],
  start: Start,
  policies: number,
): Promise<Setup> {
  const stack = await startPolicyPlatform(stores, children, start);
  const ids = await buyPolicies(stack, policies);
  const floor = await startPolicyFloor(stores, stack, children, start);
  const duties = await startPolicyFloor(stores, stack, children, { ...start, duties: true });
  const platform: Side = {
    name: 'platform',
    urls: ids.map((id) => `${stack.api}/policies/${id}`),
    servers: [
      { name: 'gateway', child: stack.gateway },
      { name: 'policy', child: stack.policy },
    ],
  };
  const sideOf = (f: PolicyFloor): Side => ({
    name: f.name,
    urls: ids.map((id) => `${f.url}/api/policies/${id}`),
    servers: [
      { name: `${f.name}-gateway`, child: f.gateway },
      { name: `${f.name}-policy`, child: f.policy },
    ],
  });
  const floorSide = sideOf(floor);
  const dutiesSide = sideOf(duties);
  const read = (side: Side) => fetch(side.urls[0] as string, { headers: stack.key });
  const body = await (await read(platform)).text();
  for (const side of [floorSide, dutiesSide]) {
    assertSameBody(`GET /api/policies/{id} (${side.name})`, body, await (await read(side)).text());
  }
  await assertOnePointEach(stores.redisUrl, stack.organizationId, {
    platform: () => read(platform),
    floor: () => read(floorSide),
    duties: () => read(dutiesSide),
  });
  return {
    figure: 'GET /api/policies/{id}',
    sides: [platform, floorSide, dutiesSide],
    key: stack.key['x-api-key'],
    against: 'duties',
  };
}

/**
 * Starts a hot path's stores (MongoDB, Redis, and for the policy read the chain its service needs
 * to start, though a read never touches it) and its servers: `me` for the key path, `policy` for
 * the policy read over `policies` policies. `stop` stops them all.
 */
export async function startHotPath(
  which: 'me' | 'policy',
  start: Start,
  policies: number,
): Promise<{ setup: Setup; stop: () => Promise<void> }> {
  const [mongo, redis, chain] = await Promise.all([
    startLocalMongo(),
    startLocalRedis(),
    which === 'policy' ? startLocalChain() : undefined,
  ]);
  const children: ChildProcess[] = [];
  const stop = async () => {
    await stopProcesses(children);
    await Promise.all([mongo.stop(), redis.stop(), chain?.stop()]);
  };
  try {
    const stores = { mongoUrl: mongo.url, redisUrl: redis.url };
    const setup = chain
      ? await policyRead({ ...stores, redisPid: redis.pid, chain }, children, start, policies)
      : await organizationRead(stores, children, start);
    return { setup, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/**
 * Prints what each server spends per request in each area, side by side, sorted by how much more
 * the first side spends than `against` (areas below `least` on every server left out).
 */
export function printAreas(options: {
  setup: Setup;
  /** A server's figure per request in an area. */
  perRequest: (server: Server, area: string) => number;
  areas: Iterable<string>;
  what: string;
  least: number;
  format: (x: number) => string;
}): void {
  const { setup, perRequest, format } = options;
  const servers = setup.sides.flatMap((side) => side.servers);
  const sideArea = (side: Side, area: string) =>
    side.servers.reduce((sum, server) => sum + perRequest(server, area), 0);
  const first = setup.sides[0] as Side;
  const reference = setup.sides.find((side) => side.name === setup.against) as Side;
  const gap = (area: string) => sideArea(first, area) - sideArea(reference, area);
  const names = [...new Set(options.areas)].sort((a, b) => gap(b) - gap(a));
  console.log(
    `\nWhere each server's ${options.what} (sorted by ${first.name} − ${reference.name}; areas under ${format(options.least)} on every server left out):\n`,
  );
  console.log(`| area | ${servers.map((s) => s.name).join(' | ')} | ${first.name} − ${reference.name} |`);
  console.log(`| --- | ${servers.map(() => '---').join(' | ')} | --- |`);
  for (const area of names) {
    const values = servers.map((server) => perRequest(server, area));
    if (values.every((v) => v < options.least)) continue;
    console.log(`| ${area} | ${values.map(format).join(' | ')} | ${format(gap(area))} |`);
  }
}

/**
 * Each side's figure per request in each of `rounds` rounds (its servers' figures, by name in
 * `perRequest`, summed), the floor's median, and the figures `report` records: every side but
 * the floor against it.
 */
export function againstFloor(setup: Setup, perRequest: Map<string, number[]>, rounds: number) {
  const sideRounds = (side: Side) =>
    Array.from({ length: rounds }, (_, round) =>
      side.servers.reduce((sum, server) => sum + (perRequest.get(server.name)?.[round] ?? 0), 0),
    );
  const floorMedian = median(sideRounds(setup.sides.find((side) => side.name === 'floor') as Side));
  return {
    sideRounds,
    floorMedian,
    /**
     * Each server's rounds and median, each side's ratio to the floor (and its servers' sum where
     * it has several), with any `extra` columns a server has (none on a side's sum).
     */
    printSides(
      what: string,
      format: (x: number) => string,
      extra: { headings: string[]; cells: (server: Server, side: Side) => string[] } = {
        headings: [],
        cells: () => [],
      },
    ): void {
      const row = (cells: string[]) => console.log(`| ${cells.join(' | ')} |`);
      const blank = extra.headings.map(() => '');
      console.log('');
      row(['side', 'server', `${what} (rounds)`, 'median', 'side vs floor', ...extra.headings]);
      row(['side', 'server', '', '', '', ...extra.headings].map(() => '---'));
      for (const side of setup.sides) {
        const ratio = (median(sideRounds(side)) / floorMedian).toFixed(3);
        for (const server of side.servers) {
          const each = perRequest.get(server.name) ?? [];
          row([
            side.name,
            server.name,
            each.map(format).join(', '),
            format(median(each)),
            side.servers.length === 1 ? ratio : '',
            ...extra.cells(server, side),
          ]);
        }
        if (side.servers.length > 1) {
          const sums = sideRounds(side);
          row([side.name, 'all', sums.map(format).join(', '), format(median(sums)), ratio, ...blank]);
        }
      }
    },
    report(benchmark: string, what: string, unit: string): void {
      report(
        setup.sides
          .filter((side) => side.name !== 'floor')
          .map((side) => ({
            benchmark,
            figure: `${setup.figure}, ${what}, ${side.name} vs its design floor`,
            value: median(sideRounds(side)),
            unit,
            baseline: floorMedian,
            ratio: median(sideRounds(side)) / floorMedian,
          })),
      );
    },
  };
}
