/**
 * Gateway overhead: an authenticated, rate-limited `GET /api/organizations/me` (API key
 * lookup in MongoDB, limiter in Redis, envelope) next to a bare express endpoint returning
 * the same JSON, both as separate processes, loaded by autocannon from this process; the same
 * read with a dashboard bearer token (JWT verify plus the user, session and organization
 * checks); and how long a failed sign-in takes for an unknown email against a wrong password
 * (they must not be told apart by timing).
 *
 *   npm run bench:gateway                       # 3 rounds x 10 s, 10 connections
 *   BENCH_SECONDS=5 BENCH_CONNECTIONS=20 npm run bench:gateway
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { startLocalMongo } from '@parametric/embedded-mongo';
import { freePort } from '@parametric/local-process';
import { startLocalRedis } from '@parametric/local-redis';
import autocannon from 'autocannon';
import { median, startProcess, stopProcesses } from './support/run';

const ROUNDS = 3;
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const SIGN_IN_SAMPLES = Number(process.env.BENCH_SIGN_INS ?? 100);
const ADMIN_EMAIL = 'admin@bench.example';
const ADMIN_PASSWORD = 'sorghum-rains-bench-2026';

async function waitFor(url: string, init?: RequestInit): Promise<void> {
  for (let i = 0; i < 200; i++) {
    try {
      if ((await fetch(url, init)).ok) return;
    } catch {}
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${url} never answered`);
}

async function load(url: string, headers: Record<string, string>) {
  const result = await autocannon({ url, headers, connections: CONNECTIONS, duration: SECONDS });
  if (result.non2xx > 0 || result.errors > 0)
    throw new Error(`${url}: ${result.non2xx} non-2xx, ${result.errors} errors`);
  return { rps: result.requests.average, p99: result.latency.p99 };
}

async function main(): Promise<void> {
  const [mongo, redis] = await Promise.all([startLocalMongo(), startLocalRedis()]);
  const children: ChildProcess[] = [];
  try {
    const [gatewayPort, opsPort, barePort] = await Promise.all([freePort(), freePort(), freePort()]);
    children.push(
      startProcess('services/gateway/src/main.ts', {
        ...process.env,
        LOG_LEVEL: 'warn',
        MONGO_URL: mongo.url,
        REDIS_URL: redis.url,
        GATEWAY_PORT: String(gatewayPort),
        OPS_PORT: String(opsPort),
        OPS_TOKEN: randomBytes(24).toString('hex'),
        INTERNAL_SIGNING_SECRET: randomBytes(24).toString('hex'),
        API_KEY_PEPPER: randomBytes(24).toString('hex'),
        // Every request still goes through the Redis limiter; the budget is just too big to hit.
        RATE_LIMIT_POINTS: '1000000000',
        // The timing comparison makes hundreds of failed sign-ins on purpose.
        LOGIN_ACCOUNT_FAILURES: '1000000000',
        LOGIN_IP_FAILURES: '1000000000',
        ANONYMOUS_LIMIT_POINTS: '1000000000',
      }),
      startProcess('bench/support/bare-express.ts', { ...process.env, PORT: String(barePort) }),
    );
    const base = `http://127.0.0.1:${gatewayPort}`;
    await waitFor(`${base}/readyz`);
    const registered = await fetch(`${base}/api/auth/register-organization`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        name: 'Bench Co-op',
        type: 'COOPERATIVE',
        countryCode: 'KE',
        adminEmail: ADMIN_EMAIL,
        adminPassword: ADMIN_PASSWORD,
      }),
    });
    const { apiKey } = ((await registered.json()) as { data: { organization: { apiKey: string } } }).data
      .organization;
    const signIn = (email: string, password: string) =>
      fetch(`${base}/api/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email, password }),
      });
    const { accessToken } = (
      (await (await signIn(ADMIN_EMAIL, ADMIN_PASSWORD)).json()) as {
        data: { accessToken: string };
      }
    ).data;
    const me = await fetch(`${base}/api/organizations/me`, { headers: { 'x-api-key': apiKey } });
    const sameJson = await me.text();
    await fetch(`http://127.0.0.1:${barePort}/body`, {
      method: 'POST',
      body: sameJson,
      headers: { 'content-type': 'application/json' },
    });
    await waitFor(`http://127.0.0.1:${barePort}/me`);

    console.log(
      `gateway bench: ${ROUNDS} rounds x ${SECONDS} s, ${CONNECTIONS} connections, ${mongo.description.split(' at ')[0]}`,
    );
    const gateway: Array<{ rps: number; p99: number }> = [];
    const bearer: Array<{ rps: number; p99: number }> = [];
    const bare: Array<{ rps: number; p99: number }> = [];
    for (let round = 0; round < ROUNDS; round++) {
      // Alternate so that machine noise hits every side alike.
      gateway.push(await load(`${base}/api/organizations/me`, { 'x-api-key': apiKey }));
      bearer.push(await load(`${base}/api/organizations/me`, { authorization: `Bearer ${accessToken}` }));
      bare.push(await load(`http://127.0.0.1:${barePort}/me`, {}));
    }
    const row = (label: string, xs: Array<{ rps: number; p99: number }>) =>
      console.log(
        `${label.padEnd(52)} ${median(xs.map((x) => x.rps))
          .toFixed(0)
          .padStart(8)} req/s   p99 ${median(xs.map((x) => x.p99))
          .toFixed(1)
          .padStart(6)} ms`,
      );
    row('GET /api/organizations/me (auth + Redis rate limit)', gateway);
    row('same, dashboard bearer token', bearer);
    row('bare express, same JSON', bare);
    const ratio = median(gateway.map((x) => x.rps)) / median(bare.map((x) => x.rps));
    console.log(
      `gateway / bare throughput: ${(ratio * 100).toFixed(1)}% (${(1 / ratio).toFixed(1)}x slower)`,
    );
    const bearerRatio = median(bearer.map((x) => x.rps)) / median(bare.map((x) => x.rps));
    console.log(`bearer / bare throughput: ${(bearerRatio * 100).toFixed(1)}%`);

    // Failed sign-ins, one at a time, interleaved so noise hits both kinds alike.
    const unknown: number[] = [];
    const wrong: number[] = [];
    for (let i = 0; i < SIGN_IN_SAMPLES; i++) {
      for (const [email, into] of [
        [`nobody-${i}@bench.example`, unknown],
        [ADMIN_EMAIL, wrong],
      ] as const) {
        const started = process.hrtime.bigint();
        const reply = await signIn(email, 'not-the-password-at-all');
        await reply.arrayBuffer();
        if (reply.status !== 401) throw new Error(`sign-in answered ${reply.status}`);
        into.push(Number(process.hrtime.bigint() - started) / 1e6);
      }
    }
    const [u, w] = [median(unknown), median(wrong)];
    console.log(
      `failed sign-in, median of ${SIGN_IN_SAMPLES}: unknown email ${u.toFixed(1)} ms, wrong password ${w.toFixed(1)} ms (ratio ${(u / w).toFixed(3)})`,
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
