/**
 * The policy service through the gateway, with the platform as it runs (`npm start`): the
 * gateway and the policy service as separate processes on MongoDB, Redis and a local anvil,
 * loaded by autocannon from this process, next to a bare express process in the same run:
 * - `GET /api/policies/{id}` requests/s against bare express returning the same JSON (issue 13,
 *   target 2: >= 25% of bare), with 1,000 policies stored (bought through the API);
 * - the same reads against their design floor (issue 24, target 3: >= 80% of its throughput):
 *   bench/support/floor-gateway.ts (express and one rate-limit point in Redis) forwarding over a
 *   pooled connection to bench/support/floor-policy.ts (express and one MongoDB `findOne`), two
 *   processes on the same MongoDB and Redis, with bare express beside them; and against the duty
 *   floor, the same two with `FLOOR_DUTIES=1`: what each request must cost beyond the design
 *   floor whatever the platform's code (bench/support/floor-duties.ts);
 * - purchases/s and their p99 (`POST /api/policies/purchase`, every one a new policy reserving
 *   capacity; target 2: p99 under 50 ms at 10 connections);
 * - Tier 1 activations/s (`PUT /api/policies/{id}/activate`, each a PolicyRegistry transaction
 *   on anvil plus the event), next to the bare registry client against the same chain;
 * - the same reads once the store holds 100,000 policies (target 5: no more than 20% lower):
 *   the store is filled with copies of the bought policies written straight to MongoDB (buying
 *   100,000 would take the better part of an hour), and the reads cycle over 1,000 ids spread
 *   over the whole store. The two stores cannot be measured in alternation, so each phase has
 *   its own bare rounds, and the figure compares the reads as a share of bare in each phase,
 *   which takes the machine's drift between the phases out.
 *
 *   npm run bench:policy                  # 3 rounds x 10 s, 10 connections
 *   BENCH_SECONDS=5 BENCH_LARGE_STORE=20000 npm run bench:policy
 *   BENCH_READS_ONLY=1 BENCH_CPU_PROF=policy,gateway npm run bench:policy   # profile both sides of the reads
 *   BENCH_ROUNDS=9 BENCH_SECONDS=5 BENCH_READS_ONLY=1 npm run bench:policy   # more alternating rounds
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { createRegistryClient, deployRegistry, localDevPrivateKey } from '@parametric/chain';
import { startLocalMongo } from '@parametric/embedded-mongo';
import { startLocalChain } from '@parametric/local-chain';
import { freePort } from '@parametric/local-process';
import { startLocalRedis } from '@parametric/local-redis';
import autocannon from 'autocannon';
import { MongoClient } from 'mongodb';
import { againstFloor, assertOnePointEach, assertSameBody, type SideRounds } from './support/floors';
import { buyPolicies, startPolicyFloor, startPolicyPlatform } from './support/policy-read';
import {
  type BenchFigure,
  cpuPerRequest,
  cpuSplit,
  median,
  report,
  startProcess,
  stopProcesses,
} from './support/run';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const SMALL_STORE = 1_000;
const LARGE_STORE = Number(process.env.BENCH_LARGE_STORE ?? 100_000);
const READ_IDS = 1_000;
const ACTIVATIONS = Number(process.env.BENCH_ACTIVATIONS ?? 300);

interface Load {
  rps: number;
  p99: number;
  requests: number;
}

async function main(): Promise<void> {
  const [mongo, redis, chain] = await Promise.all([startLocalMongo(), startLocalRedis(), startLocalChain()]);
  const children: ChildProcess[] = [];
  const client = await MongoClient.connect(mongo.url);
  try {
    const stores = {
      mongoUrl: mongo.url,
      redisUrl: redis.url,
      redisPid: redis.pid,
      chain,
    };
    const stack = await startPolicyPlatform(stores, children);
    const barePort = await freePort();
    const bareProcess = startProcess('bench/support/bare-express.ts', {
      ...process.env,
      PORT: String(barePort),
    });
    children.push(bareProcess);
    const bare = `http://127.0.0.1:${barePort}`;

    const bought = await buyPolicies(stack, SMALL_STORE);
    const sameJson = await (await fetch(`${stack.api}/policies/${bought[0]}`, { headers: stack.key })).text();
    await fetch(`${bare}/body`, {
      method: 'POST',
      body: sameJson,
      headers: { 'content-type': 'application/json' },
    });

    // The floor of the read (bench/support/policy-read.ts): its gateway on the same Redis with the
    // gateway's partner limit, its policy service on the policy service's database.
    // And its duty floor: the same two processes doing each request's duties as well (request id,
    // trace, deadline, metrics, completion line, the API key's hash, a signed hop).
    const floorSide = await startPolicyFloor(stores, stack, children);
    const dutiesSide = await startPolicyFloor(stores, stack, children, { duties: true });
    const floor = floorSide.url;
    const firstRead = `/policies/${bought[0]}`;
    for (const [side, url] of [
      ['floor', floor],
      ['duty floor', dutiesSide.url],
    ] as const) {
      assertSameBody(
        `GET /api/policies/{id} (${side})`,
        sameJson,
        await (await fetch(`${url}/api${firstRead}`, { headers: stack.key })).text(),
      );
    }
    await assertOnePointEach(redis.url, stack.organizationId, {
      gateway: () => fetch(`${stack.api}${firstRead}`, { headers: stack.key }),
      floor: () => fetch(`${floor}/api${firstRead}`, { headers: stack.key }),
      'duty floor': () => fetch(`${dutiesSide.url}/api${firstRead}`, { headers: stack.key }),
    });
    const pidsOf = (side: typeof floorSide) => ({
      bench: process.pid,
      gateway: side.gateway.pid,
      policy: side.policy.pid,
      mongo: stack.pids.mongo,
      redis: redis.pid,
    });
    const floorPids = pidsOf(floorSide);
    const dutiesPids = pidsOf(dutiesSide);

    /** Loads `base` + a path chosen per request, with `headers`. */
    const load = async (
      base: string,
      paths: string[],
      headers: Record<string, string>,
      extra: Partial<autocannon.Options> = {},
    ): Promise<Load> => {
      let i = 0;
      const r = await autocannon({
        url: base,
        connections: CONNECTIONS,
        duration: SECONDS,
        ...extra,
        requests: [
          {
            method: (extra.method ?? 'GET') as 'GET',
            headers,
            body: extra.body as string | undefined,
            setupRequest: (req) => ({ ...req, path: paths[i++ % paths.length] as string }),
          },
        ],
      });
      if (r.non2xx > 0 || r.errors > 0) throw new Error(`${base}: ${r.non2xx} non-2xx, ${r.errors} errors`);
      return { rps: r.requests.average, p99: r.latency.p99, requests: r.requests.total };
    };
    /**
     * Reads over `ids`, their floor (when `withFloor`) and bare express, alternating so that
     * machine noise hits every side alike.
     */
    const readRounds = async (ids: string[], withFloor: boolean) => {
      const paths = ids.map((id) => `/api/policies/${id}`);
      const reads: Load[] = [];
      const baseline: Load[] = [];
      const cpu: Array<Record<string, number>> = [];
      const bareCpu: Array<Record<string, number>> = [];
      const floorSide: SideRounds = { loads: [], cpu: [] };
      const dutiesRounds: SideRounds = { loads: [], cpu: [] };
      for (let round = 0; round < ROUNDS; round++) {
        const read = await cpuPerRequest(stack.pids, () => load(stack.api, paths, stack.key));
        reads.push(read.result);
        cpu.push(read.perRequest);
        if (withFloor) {
          const atFloor = await cpuPerRequest(floorPids, () => load(floor, paths, stack.key));
          floorSide.loads.push(atFloor.result);
          floorSide.cpu.push(atFloor.perRequest);
          const atDuties = await cpuPerRequest(dutiesPids, () => load(dutiesSide.url, paths, stack.key));
          dutiesRounds.loads.push(atDuties.result);
          dutiesRounds.cpu.push(atDuties.perRequest);
        }
        const plain = await cpuPerRequest({ bench: process.pid, bare: bareProcess.pid }, () =>
          load(bare, ['/me'], {}),
        );
        baseline.push(plain.result);
        bareCpu.push(plain.perRequest);
      }
      console.log(`CPU per read, µs (median of rounds): ${cpuSplit(cpu)}; bare: ${cpuSplit(bareCpu)}`);
      return { reads, baseline, cpu, bareCpu, floor: floorSide, duties: dutiesRounds };
    };

    console.log(
      `policy bench: ${ROUNDS} rounds x ${SECONDS} s, ${CONNECTIONS} connections, ${mongo.description.split(' at ')[0]}`,
    );
    const small = await readRounds(bought.slice(0, READ_IDS), true);
    const floorFigures = againstFloor({
      benchmark: 'policy',
      path: `GET /api/policies/{id} (${SMALL_STORE} policies stored)`,
      connections: CONNECTIONS,
      minShare: 0.8,
      platform: { loads: small.reads, cpu: small.cpu },
      floor: small.floor,
      duties: small.duties,
      bare: { loads: small.baseline, cpu: small.bareCpu },
    });
    const readFigure = (): BenchFigure => {
      const ratio = median(small.reads.map((x) => x.rps)) / median(small.baseline.map((x) => x.rps));
      return {
        benchmark: 'policy',
        figure: `GET /api/policies/{id} through gateway + policy, ${CONNECTIONS} connections, ${SMALL_STORE} policies stored, throughput vs bare express`,
        value: median(small.reads.map((x) => x.rps)),
        unit: 'req/s',
        baseline: median(small.baseline.map((x) => x.rps)),
        ratio,
        target: '>= 0.25 of bare',
        met: ratio >= 0.25,
      };
    };
    // The reads alone (e.g. to profile them with BENCH_CPU_PROF): the other phases are skipped.
    if (process.env.BENCH_READS_ONLY === '1') {
      report([readFigure(), ...floorFigures]);
      return;
    }

    const purchases: Load[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      purchases.push(
        await load(
          stack.api,
          ['/api/policies/purchase'],
          { ...stack.key, 'content-type': 'application/json' },
          { method: 'POST', body: stack.purchase },
        ),
      );
    }

    /** `ids.length` activations, each of a different pending policy; req/s over the whole batch. */
    const activateAll = async (ids: string[]): Promise<Load> => {
      let next = 0;
      const r = await autocannon({
        url: stack.api,
        connections: CONNECTIONS,
        amount: ids.length,
        requests: [
          {
            method: 'PUT',
            headers: stack.key,
            setupRequest: (req) => ({ ...req, path: `/api/policies/${ids[next++]}/activate` }),
          },
        ],
      });
      if (r.non2xx > 0 || r.errors > 0) throw new Error(`activate: ${r.non2xx} non-2xx, ${r.errors} errors`);
      return { rps: r.requests.total / (r.duration || 1), p99: r.latency.p99, requests: r.requests.total };
    };
    /** The chain alone: the registry client registering `n` policies, CONNECTIONS at a time. */
    const bareRegistrations = async (n: number) => {
      const privateKey = localDevPrivateKey(5);
      const registry = createRegistryClient({
        rpcUrl: chain.rpcUrl,
        registryAddress: await deployRegistry(chain.rpcUrl, privateKey),
        privateKey,
      });
      try {
        let next = 0;
        const started = process.hrtime.bigint();
        await Promise.all(
          Array.from({ length: CONNECTIONS }, async () => {
            while (next < n) {
              const i = next++;
              await registry.registerPolicy(`bare-${i}-${randomBytes(4).toString('hex')}`, { i });
            }
          }),
        );
        return n / (Number(process.hrtime.bigint() - started) / 1e9);
      } finally {
        await registry.close();
      }
    };
    const activations: Load[] = [];
    const registrations: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      activations.push(await activateAll(await buyPolicies(stack, ACTIVATIONS)));
      registrations.push(await bareRegistrations(ACTIVATIONS));
    }

    // The large store: copies of the bought policies (new ids and numbers, nothing in their
    // outbox), written straight to the policy service's database.
    const policies = client.db(stack.policyDb).collection('policies');
    const originals = await policies.find({}).limit(SMALL_STORE).toArray();
    let count = await policies.countDocuments();
    let copies = 0;
    while (count < LARGE_STORE) {
      const batch = originals.slice(0, Math.min(originals.length, LARGE_STORE - count)).map((p) => {
        copies++;
        return {
          ...p,
          _id: randomUUID() as never,
          policyNumber: `${p.policyNumber}-${copies.toString(36).toUpperCase()}`,
          outbox: [],
          outboxPending: false,
        };
      });
      await policies.insertMany(batch, { ordered: false });
      count += batch.length;
    }
    const all = await policies.find({}, { projection: { _id: 1 } }).toArray();
    const spread = Array.from({ length: READ_IDS }, (_, i) =>
      String(all[Math.floor((i * all.length) / READ_IDS)]?._id),
    );
    const large = await readRounds(spread, false);

    const rps = (xs: Load[]) => median(xs.map((x) => x.rps));
    const p99 = (xs: Load[]) => median(xs.map((x) => x.p99));
    const readRatio = rps(small.reads) / rps(small.baseline);
    const largeRatio = rps(large.reads) / rps(large.baseline);
    const scaleRatio = largeRatio / readRatio;
    const figure = `${CONNECTIONS} connections`;
    report([
      readFigure(),
      ...floorFigures,
      {
        benchmark: 'policy',
        figure: `GET /api/policies/{id}, ${figure}, ${all.length} policies stored vs ${SMALL_STORE} (ratio: share of bare express in each phase)`,
        value: rps(large.reads),
        unit: 'req/s',
        baseline: rps(small.reads),
        ratio: scaleRatio,
        target: '>= 0.80 of the small store',
        met: scaleRatio >= 0.8,
      },
      {
        benchmark: 'policy',
        figure: `POST /api/policies/purchase, ${figure}, p99 latency`,
        value: p99(purchases),
        unit: 'ms',
        target: '< 50 ms',
        met: p99(purchases) < 50,
      },
      {
        benchmark: 'policy',
        figure: `POST /api/policies/purchase, ${figure}, throughput`,
        value: rps(purchases),
        unit: 'req/s',
      },
      {
        benchmark: 'policy',
        figure: `PUT /api/policies/{id}/activate (${ACTIVATIONS} per round) vs the bare registry client on the same chain`,
        value: rps(activations),
        unit: 'req/s',
        baseline: median(registrations),
        ratio: rps(activations) / median(registrations),
      },
    ]);
  } finally {
    await client.close();
    await stopProcesses(children);
    await Promise.all([mongo.stop(), redis.stop(), chain.stop()]);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
