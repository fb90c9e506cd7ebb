/**
 * Hot paths against their design floors (issue 24, target 3): the checks that a floor does the
 * same work as the platform before it is measured, and the table comparing them. The floors
 * themselves are bench/support/floor-gateway.ts and bench/support/floor-policy.ts.
 */
import { Redis } from 'ioredis';
import { type BenchFigure, cpuSplit, cpuTotal, median } from './run';

/** The Redis key of an organization's partner rate limit, as the gateway and the floor name it. */
export function partnerLimitKey(organizationId: string): string {
  return `${process.env.REDIS_PREFIX ?? 'platform'}:rl:partner:org:${organizationId}`;
}

/** The floor answers with the platform's very bytes, or the comparison is not a fair one. */
export function assertSameBody(what: string, platform: string, floor: string): void {
  if (platform !== floor)
    throw new Error(
      `${what}: the floor's body differs from the platform's\nplatform: ${platform}\nfloor:    ${floor}`,
    );
}

/**
 * Each request (one per side) spends exactly one point of the organization's partner limit: the
 * same Redis key, consumed once, on the platform and on its floor. Each is sent once before
 * counting, so the key exists; a window that expired in between restarts the count at 1.
 */
export async function assertOnePointEach(
  redisUrl: string,
  organizationId: string,
  requests: Record<string, () => Promise<Response>>,
): Promise<void> {
  const redis = new Redis(redisUrl);
  const key = partnerLimitKey(organizationId);
  try {
    for (const [side, request] of Object.entries(requests)) {
      const send = async () => {
        const res = await request();
        await res.arrayBuffer();
        if (!res.ok) throw new Error(`${side}: ${res.status}`);
      };
      await send();
      const before = Number(await redis.get(key));
      await send();
      const after = Number(await redis.get(key));
      if (after !== before + 1 && after !== 1)
        throw new Error(`${side}: one request moved ${key} from ${before} to ${after}, not by one point`);
    }
  } finally {
    redis.disconnect();
  }
}

/** One side's rounds: each round's load and the CPU per request of each of its processes. */
export interface SideRounds {
  loads: Array<{ rps: number; p99: number }>;
  cpu: Array<Record<string, number>>;
}

/**
 * Prints the platform, its floor and bare express side by side (medians of the rounds) with the
 * target and PASS or BELOW, and returns the figures for `report`. `p99Within` is the p99 target
 * as a multiple of the floor's, where the issue sets one.
 */
export function againstFloor(options: {
  benchmark: string;
  path: string;
  connections: number;
  minShare: number;
  p99Within?: number;
  platform: SideRounds;
  floor: SideRounds;
  /** The floor plus the per-request duties (bench/support/floor-gateway.ts `FLOOR_DUTIES`), when measured. */
  duties?: SideRounds;
  bare: SideRounds;
}): BenchFigure[] {
  const { benchmark, path, connections, minShare, p99Within } = options;
  const rps = (side: SideRounds) => median(side.loads.map((l) => l.rps));
  const p99 = (side: SideRounds) => median(side.loads.map((l) => l.p99));
  const share = rps(options.platform) / rps(options.floor);
  // autocannon reports whole milliseconds: a floor p99 under 1 ms shows as 0, and the ratio is
  // taken against 1 ms, the resolution, rather than divided by zero (as bench/gateway.ts does).
  const p99Ratio = p99(options.platform) / Math.max(1, p99(options.floor));
  const shareMet = share >= minShare;
  const p99Met = p99Within === undefined || p99Ratio <= p99Within;
  const target = `>= ${minShare.toFixed(2)} of floor req/s${p99Within === undefined ? '' : `, p99 <= ${p99Within}x floor p99`}`;

  const sides = [
    ['platform', options.platform],
    ['floor', options.floor],
    ...(options.duties ? ([['floor + duties', options.duties]] as const) : []),
    ['bare express', options.bare],
  ] as const;
  const rounds = options.platform.loads.length;
  console.log(`\n${path}, ${connections} connections, medians of ${rounds} rounds, against its design floor`);
  console.log(
    '| side | req/s | p99 ms | CPU µs/req (its processes) | vs floor | vs bare | target | verdict |',
  );
  console.log('| --- | --- | --- | --- | --- | --- | --- | --- |');
  for (const [name, side] of sides) {
    const cells = [
      name,
      rps(side).toFixed(0),
      String(p99(side)),
      String(cpuTotal(side.cpu)),
      (rps(side) / rps(options.floor)).toFixed(3),
      (rps(side) / rps(options.bare)).toFixed(3),
      name === 'platform' ? target : '',
      name === 'platform' ? (shareMet && p99Met ? 'PASS' : 'BELOW') : '',
    ];
    console.log(`| ${cells.join(' | ')} |`);
  }
  for (const [name, side] of sides) console.log(`CPU per request, ${name}, µs: ${cpuSplit(side.cpu)}`);
  console.log('');

  const figure = `${path}, ${connections} connections`;
  const figures: BenchFigure[] = [
    {
      benchmark,
      figure: `${figure}, throughput vs its design floor`,
      value: rps(options.platform),
      unit: 'req/s',
      baseline: rps(options.floor),
      ratio: share,
      target: `>= ${minShare.toFixed(2)} of floor`,
      met: shareMet,
    },
  ];
  if (p99Within !== undefined)
    figures.push({
      benchmark,
      figure: `${figure}, p99 latency vs its design floor`,
      value: p99(options.platform),
      unit: 'ms',
      baseline: p99(options.floor),
      ratio: p99Ratio,
      target: `<= ${p99Within}x floor p99`,
      met: p99Met,
    });
  figures.push(
    {
      benchmark,
      figure: `${figure}, CPU per request (all processes) vs its design floor`,
      value: cpuTotal(options.platform.cpu),
      unit: 'µs',
      baseline: cpuTotal(options.floor.cpu),
      ratio: cpuTotal(options.platform.cpu) / cpuTotal(options.floor.cpu),
    },
    {
      benchmark,
      figure: `${figure}, the design floor's throughput vs bare express`,
      value: rps(options.floor),
      unit: 'req/s',
      baseline: rps(options.bare),
      ratio: rps(options.floor) / rps(options.bare),
    },
  );
  const { duties } = options;
  if (duties)
    figures.push(
      {
        benchmark,
        figure: `${figure}, the duty floor's throughput (design floor + per-request duties) vs the design floor`,
        value: rps(duties),
        unit: 'req/s',
        baseline: rps(options.floor),
        ratio: rps(duties) / rps(options.floor),
      },
      {
        benchmark,
        figure: `${figure}, throughput vs the duty floor`,
        value: rps(options.platform),
        unit: 'req/s',
        baseline: rps(duties),
        ratio: rps(options.platform) / rps(duties),
      },
      {
        benchmark,
        figure: `${figure}, CPU per request (all processes) vs the duty floor`,
        value: cpuTotal(options.platform.cpu),
        unit: 'µs',
        baseline: cpuTotal(duties.cpu),
        ratio: cpuTotal(options.platform.cpu) / cpuTotal(duties.cpu),
      },
    );
  return figures;
}
