/**
 * What bounding each Redis command costs the client: this process's CPU per command for ioredis
 * with no command timeout (the baseline), with ioredis's own `commandTimeout` (a timer armed and
 * deleted per command), and `BoundedRedis` (libs/redis/src/bounded.ts: one watchdog timer per
 * client), all at the platform's 500 ms bound, auto-pipelined as the gateway's clients are, on a
 * private redis-server. Ten callers each await one `GET` after another, as ten concurrent
 * requests would; the clients take turns in rounds, each round starting with the next client,
 * the first round not counted (warm-up), and each figure is the median of the others.
 *
 *   npm run bench:redis
 *   BENCH_COMMANDS=20000 npm run bench:redis
 */
import { startLocalRedis } from '@parametric/local-redis';
import { BoundedRedis, REDIS_COMMAND_TIMEOUT_MS } from '@parametric/redis';
import { Redis } from 'ioredis';
import { type BenchFigure, median, report } from './support/run';

const COMMANDS = Number(process.env.BENCH_COMMANDS ?? 100_000);
const CALLERS = 10;
const ROUNDS = 7;

async function cpuPerCommand(client: Redis): Promise<number> {
  let sent = 0;
  const before = process.cpuUsage();
  await Promise.all(
    Array.from({ length: CALLERS }, async () => {
      while (sent < COMMANDS) {
        sent++;
        if ((await client.get('bench:key')) !== 'v') throw new Error('GET answered something else');
      }
    }),
  );
  const spent = process.cpuUsage(before);
  return (spent.user + spent.system) / COMMANDS;
}

async function main(): Promise<void> {
  const redis = await startLocalRedis({});
  const options = { enableAutoPipelining: true, maxRetriesPerRequest: 1 };
  const clients = {
    none: new Redis(redis.url, options),
    ioredis: new Redis(redis.url, { ...options, commandTimeout: REDIS_COMMAND_TIMEOUT_MS }),
    bounded: new BoundedRedis(redis.url, { ...options, commandTimeoutMs: REDIS_COMMAND_TIMEOUT_MS }),
  };
  try {
    await clients.none.set('bench:key', 'v');
    console.log(
      `redis clients bench: ${COMMANDS} GETs per client per round, ${CALLERS} callers, ${ROUNDS - 1} rounds after a warm-up, node ${process.version}`,
    );
    const rounds: Record<keyof typeof clients, number[]> = { none: [], ioredis: [], bounded: [] };
    const names = Object.keys(clients) as (keyof typeof clients)[];
    for (let round = 0; round < ROUNDS; round++) {
      // Each round starts with another client, so no client always runs first (or last).
      for (const name of [...names.slice(round % names.length), ...names.slice(0, round % names.length)]) {
        const cpu = await cpuPerCommand(clients[name]);
        if (round > 0) rounds[name].push(cpu);
      }
    }
    const none = median(rounds.none);
    const figure = (name: string, value: number): BenchFigure => ({
      benchmark: 'redis',
      figure: `${name}: client CPU per GET, ${CALLERS} callers auto-pipelined, vs no command timeout`,
      value,
      unit: 'µs',
      baseline: none,
      ratio: value / none,
    });
    report([
      figure(
        `ioredis commandTimeout (${REDIS_COMMAND_TIMEOUT_MS} ms, a timer per command)`,
        median(rounds.ioredis),
      ),
      figure(`BoundedRedis (${REDIS_COMMAND_TIMEOUT_MS} ms, one timer per client)`, median(rounds.bounded)),
    ]);
  } finally {
    for (const client of Object.values(clients)) client.disconnect();
    await redis.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
