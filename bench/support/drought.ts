/**
 * The steps of a drought day that several benchmark modes share (bench/determinations.ts): one
 * round of determinations through the ops batch door with the Tier 1 settlement reports partners
 * send, a burst of Tier 2 payouts, and the checks that nothing was done twice (deliveries,
 * payouts, B2C payments, sweep ticks).
 */
import { createHash } from 'node:crypto';
import { Queue } from 'bullmq';
import IORedis from 'ioredis';
import {
  B2C_PATH,
  type BenchPolicy,
  cpuPer,
  insertPolicies,
  type Partner,
  type Platform,
  type StoreCommandsPer,
  storeCommandsPer,
} from './platform';
import { json } from './run';

/**
 * Items a batch request (the door takes 1,000 at most). Smaller under BENCH_BATCH for a loaded
 * machine: a batch must be answered within the gateway's forwarding timeout (30 s).
 */
export const BATCH = Number(process.env.BENCH_BATCH ?? 1_000);
/** Batch requests in flight at once (an index pipeline sending its day's output). */
export const PARALLEL_BATCHES = 2;
/**
 * The pipeline reads only each item's id, policy and amount back, so it asks for the minimal
 * answer (`Prefer: return=minimal`, docs/ops.md), as the design floor's door answers;
 * `BENCH_BATCH_MINIMAL=0` asks for the full one (every signed payload, its bytes and signature).
 */
const BATCH_PREFER: Record<string, string> =
  process.env.BENCH_BATCH_MINIMAL === '0' ? {} : { prefer: 'return=minimal' };
/** Settlement reports in flight at once (partners reporting as they pay). */
const REPORTS_IN_FLIGHT = 20;
const DAY = 86_400_000;
export const DELIVERED = 'determination.delivered';
export const REPORT_RECORDED = 'determination.settlement_report_recorded';

/** One assessment as the index pipeline sends it. */
export function assessmentOf(
  policy: BenchPolicy,
  round: string,
  i: number,
  damagePercentBp = 1 + (i % 10_000),
) {
  const now = Date.now();
  return {
    idempotencyKey: `drought-day-${round}-${policy.id}`,
    policyId: policy.id,
    kind: 'CROP_DAMAGE',
    methodologyVersion: 'chirps-rainfall-deficit/1.2.0',
    triggered: true,
    damagePercentBp,
    assessedAt: new Date(now - 60_000).toISOString(),
    evidence: {
      indexName: 'seasonal rainfall deficit',
      indexValue: 0.41,
      triggerThreshold: 0.25,
      exitThreshold: 0.73,
      dataSource: 'CHIRPS',
      dataSourceVersion: '2.0',
      periodStart: new Date(now - 30 * DAY).toISOString(),
      periodEnd: new Date(now).toISOString(),
      inputDataHashes: [
        { name: `chirps-${i}.tif`, sha256: createHash('sha256').update(String(i)).digest('hex') },
      ],
    },
  };
}

interface Created {
  determinationId: string;
  policyId: string;
  /** What it makes owed in the policy's currency (a Tier 1 partner settles this). */
  owed: { amountMinor: string; currency: string } | null;
}

/** Runs `task(i)` for i in 0..n-1, `inFlight` at a time. */
export async function pool(n: number, inFlight: number, task: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < n) await task(next++);
    }),
  );
}

/**
 * Items through `POST /ops/determinations/batch`, BATCH a request, PARALLEL_BATCHES in flight;
 * `onBatch` sees each answered batch's determinations as it comes back.
 */
export async function ingest(
  platform: DroughtPlatform,
  items: unknown[],
  onBatch: (created: Created[]) => void = () => undefined,
): Promise<Created[]> {
  const batches: unknown[][] = [];
  for (let i = 0; i < items.length; i += BATCH) batches.push(items.slice(i, i + BATCH));
  const all: Created[] = [];
  await pool(batches.length, PARALLEL_BATCHES, async (b) => {
    const batch = batches[b] as unknown[];
    const result = await json<{
      summary: { created: number };
      results: { status: number; error?: unknown; determination?: Created }[];
    }>(`${platform.ops}/determinations/batch`, {
      method: 'POST',
      headers: { ...platform.opsAuth, ...BATCH_PREFER },
      body: JSON.stringify({ items: batch }),
    });
    const created = result.results.flatMap((r) =>
      r.status === 201 && r.determination ? [r.determination] : [],
    );
    if (created.length !== batch.length) {
      const refused = result.results.find((r) => r.status !== 201);
      throw new Error(
        `a batch created ${result.summary.created} of ${batch.length}; first refusal: ${JSON.stringify(refused)}`,
      );
    }
    all.push(...created);
    onBatch(created);
  });
  return all;
}

/** What a drought day drives: the platform, or its design floor (bench/support/floor-day-platform.ts). */
export type DroughtPlatform = Pick<
  Platform,
  'api' | 'ops' | 'opsAuth' | 'policyDb' | 'cpuNow' | 'storeCommandsNow'
>;

export interface DroughtRound {
  determinations: number;
  reports: number;
  ingestSeconds: number;
  /** First request to the last verified delivery of both events. */
  deliveredSeconds: number;
  /** µs of CPU per determination, per platform process, over the round. */
  cpu: Record<string, number>;
  /** MongoDB and Redis commands per determination over the round, largest first. */
  commands: StoreCommandsPer;
  policies: BenchPolicy[];
}

/** Verified first copies of `event` a partner's receiver has. */
const countOf = (partner: Partner, event: string) =>
  partner.receiver.verified().filter((d) => d.event === event).length;

/**
 * One drought day: `total` fresh ACTIVE Tier 1 policies, a triggered determination for each
 * through the ops batch door, and a `SETTLED_FULL` settlement report through the partner API
 * (`POST /api/determinations/{id}/settlement-report`) for every `reportEvery`-th one as its batch
 * is answered; done when every partner's receiver has verified each of its
 * `determination.delivered` and `determination.settlement_report_recorded` events.
 */
export async function droughtRound(
  platform: DroughtPlatform,
  partners: Partner[],
  round: string,
  total: number,
  reportEvery: number,
): Promise<DroughtRound> {
  const policies = await insertPolicies(platform.policyDb, {
    organizations: partners.map((p) => p.id),
    count: total,
    tag: round,
  });
  const owner = new Map(policies.map((p) => [p.id, p.organizationId]));
  const byId = new Map(partners.map((p) => [p.id, p]));
  const items = policies.map((p, i) => assessmentOf(p, round, i));
  const expected = new Map(partners.map((p) => [p.id, { delivered: 0, reports: 0 }]));
  for (const p of policies) (expected.get(p.organizationId) as { delivered: number }).delivered++;
  const before = new Map(
    partners.map((p) => [p.id, { delivered: countOf(p, DELIVERED), reports: countOf(p, REPORT_RECORDED) }]),
  );
  const toReport: Created[] = [];
  let seen = 0;
  const commandsBefore = await platform.storeCommandsNow();
  const cpuBefore = platform.cpuNow();
  const started = process.hrtime.bigint();
  let ingested = false;
  let nextReport = 0;
  const report = async (d: Created) => {
    const partner = byId.get(owner.get(d.policyId) as string) as Partner;
    await json(`${platform.api}/determinations/${d.determinationId}/settlement-report`, {
      method: 'POST',
      headers: { 'x-api-key': partner.apiKey },
      body: JSON.stringify({
        partnerReference: `PAY-${d.determinationId}`,
        outcome: 'SETTLED_FULL',
        method: 'MOBILE_MONEY',
        settledAmountMinor: d.owed?.amountMinor,
        settlementCurrency: d.owed?.currency ?? 'KES',
        settledAt: new Date().toISOString(),
      }),
    });
  };
  // Partners report as their determinations come back, while the rest are still being sent.
  const reporters = Promise.all(
    Array.from({ length: REPORTS_IN_FLIGHT }, async () => {
      for (;;) {
        const d = toReport[nextReport];
        if (d) {
          nextReport++;
          await report(d);
        } else if (ingested) return;
        else await new Promise((r) => setTimeout(r, 20));
      }
    }),
  );
  const created = await ingest(platform, items, (batch) => {
    for (const d of batch) {
      if (seen++ % reportEvery !== 0) continue;
      toReport.push(d);
      (expected.get(owner.get(d.policyId) as string) as { reports: number }).reports++;
    }
  }).finally(() => {
    ingested = true;
  });
  const ingestSeconds = Number(process.hrtime.bigint() - started) / 1e9;
  await reporters;
  await Promise.all(
    partners.map(async (p) => {
      const want = expected.get(p.id) as { delivered: number; reports: number };
      const had = before.get(p.id) as { delivered: number; reports: number };
      await p.receiver.waitForCount(
        had.delivered + want.delivered,
        (d) => d.verified && !d.duplicate && d.event === DELIVERED,
        600_000,
      );
      await p.receiver.waitForCount(
        had.reports + want.reports,
        (d) => d.verified && !d.duplicate && d.event === REPORT_RECORDED,
        600_000,
      );
    }),
  );
  const deliveredSeconds = Number(process.hrtime.bigint() - started) / 1e9;
  const cpu = cpuPer(cpuBefore, platform.cpuNow(), created.length);
  return {
    determinations: created.length,
    reports: toReport.length,
    ingestSeconds,
    deliveredSeconds,
    cpu,
    commands: storeCommandsPer(commandsBefore, await platform.storeCommandsNow(), created.length),
    policies,
  };
}

/**
 * What partners' receivers saw twice: a delivery id sent again (a redelivery), and a
 * determination delivered under more than one event id (the platform sending it twice).
 */
export function duplicateDeliveries(partners: Partner[]): {
  redelivered: number;
  twice: number;
  delivered: number;
} {
  let redelivered = 0;
  const ids = new Map<string, Set<string>>();
  for (const p of partners)
    for (const d of p.receiver.received) {
      if (!d.verified || d.event !== DELIVERED) continue;
      if (d.duplicate) redelivered++;
      const determinationId = (d.body as { data?: { determinationId?: string } }).data?.determinationId ?? '';
      const set = ids.get(determinationId) ?? new Set<string>();
      set.add(d.deliveryId ?? '');
      ids.set(determinationId, set);
    }
  return { redelivered, twice: [...ids.values()].filter((s) => s.size > 1).length, delivered: ids.size };
}

export interface PayoutBurst {
  payouts: number;
  completed: number;
  failed: number;
  /** First ingest request to the last batch answered (every payout's origination requested). */
  ingestSeconds: number;
  /** First ingest request to the last payout COMPLETED or FAILED. */
  seconds: number;
  /** µs of CPU per payout, per platform process. */
  cpu: Record<string, number>;
  /** MongoDB and Redis commands per payout, largest first. */
  commands: StoreCommandsPer;
  /** p99 of first ingest request to each payout's last update (COMPLETED or FAILED). */
  toCompletedP99Seconds: number;
  b2c: B2cLog;
}

export interface B2cLog {
  /** B2C payment requests the simulator answered 200. */
  accepted: number;
  /** OriginatorConversationIDs sent more than once. */
  repeatedIds: number;
  /** Payouts with no accepted B2C request, or one whose id no payout has. */
  unmatched: number;
  /** First to last accepted B2C request: the saturated window (all payouts are queued at once). */
  windowSeconds: number;
  /** (accepted − 1) ÷ window. */
  rate: number;
  /** Daraja requests refused by the spike arrest (more than the allowed in the last second). */
  throttled: number;
  /** The most accepted in one wall-clock second. */
  peakPerSecond: number;
}

/** The simulator's log of B2C requests since `sinceSeq`, held against the payouts made. */
export function b2cLog(platform: Platform, sinceSeq: number, payoutIds: string[]): B2cLog {
  const logged = (platform.simulator?.requests() ?? []).filter((r) => r.seq > sinceSeq);
  const requests = logged.filter((r) => r.path === B2C_PATH && r.status === 200);
  // The bench injects no faults, so a 500 from the simulator is its spike arrest (500.003.02).
  const throttled = logged.filter((r) => r.status === 500).length;
  const ids = requests.map((r) => (r.body as { OriginatorConversationID: string }).OriginatorConversationID);
  const distinct = new Set(ids);
  const payouts = new Set(payoutIds);
  const unmatched =
    payoutIds.filter((id) => !distinct.has(id)).length +
    [...distinct].filter((id) => !payouts.has(id)).length;
  const times = requests.map((r) => Date.parse(r.time)).sort((a, b) => a - b);
  const windowSeconds = times.length > 1 ? ((times.at(-1) as number) - (times[0] as number)) / 1000 : 0;
  const perSecond = new Map<number, number>();
  for (const t of times) perSecond.set(Math.floor(t / 1000), (perSecond.get(Math.floor(t / 1000)) ?? 0) + 1);
  return {
    accepted: requests.length,
    repeatedIds: ids.length - distinct.size,
    unmatched,
    windowSeconds,
    rate: windowSeconds > 0 ? (requests.length - 1) / windowSeconds : 0,
    throttled,
    peakPerSecond: Math.max(0, ...perSecond.values()),
  };
}

/**
 * A drought day's Tier 2 share: `count` ACTIVE Tier 2 policies (a farmer each), a triggered
 * determination of 25% on each through the ops batch door at once → each one's payout, paid by
 * B2C at the service's pace → COMPLETED. Proven from the simulator's B2C log: one accepted B2C
 * request per payout, under the payout's own id.
 */
export async function payoutBurst(
  platform: Platform,
  partners: Partner[],
  round: string,
  count: number,
): Promise<PayoutBurst> {
  const policies = await insertPolicies(platform.policyDb, {
    organizations: partners.map((p) => p.id),
    count,
    tag: `T2${round}`,
    tier2: true,
  });
  const sinceSeq = Math.max(0, ...(platform.simulator?.requests() ?? []).map((r) => r.seq));
  const commandsBefore = await platform.storeCommandsNow();
  const cpuBefore = platform.cpuNow();
  const started = process.hrtime.bigint();
  const startedAt = Date.now();
  const created = await ingest(
    platform,
    policies.map((p, i) => assessmentOf(p, `T2${round}`, i, 2_500)),
  );
  const ingestSeconds = Number(process.hrtime.bigint() - started) / 1e9;
  const determinationIds = created.map((d) => d.determinationId);
  const payouts = platform.paymentsDb.collection('payouts');
  // Counted by the payouts' index on organization and status (services/payments/src/payouts/
  // model.ts): only this burst's payouts were made since it started. A `$in` of every
  // determination id instead costs the MongoDB process a scan of the list per document, each
  // poll, and that CPU would be counted as the platform's.
  const since = new Date(startedAt - 1_000);
  for (;;) {
    const done = await payouts.countDocuments({
      organizationId: { $in: partners.map((p) => p.id) },
      status: { $in: ['COMPLETED', 'FAILED'] },
      createdAt: { $gte: since },
    });
    if (done >= count) break;
    await new Promise((r) => setTimeout(r, 500));
  }
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const cpu = cpuPer(cpuBefore, platform.cpuNow(), count);
  const commands = storeCommandsPer(commandsBefore, await platform.storeCommandsNow(), count);
  const docs = await payouts
    .find({ determinationId: { $in: determinationIds } })
    .project({ status: 1, updatedAt: 1 })
    .toArray();
  const toCompleted = docs
    .map((d) => ((d.updatedAt as Date).getTime() - startedAt) / 1000)
    .sort((a, b) => a - b);
  return {
    payouts: docs.length,
    completed: docs.filter((d) => d.status === 'COMPLETED').length,
    failed: docs.filter((d) => d.status === 'FAILED').length,
    ingestSeconds,
    seconds,
    cpu,
    commands,
    toCompletedP99Seconds:
      toCompleted[Math.min(toCompleted.length - 1, Math.floor(toCompleted.length * 0.99))] ?? 0,
    b2c: b2cLog(
      platform,
      sinceSeq,
      docs.map((d) => String(d._id)),
    ),
  };
}

/** Payouts of one determination beyond the first (the payments store's view of paying twice). */
export async function duplicatePayouts(platform: Platform): Promise<number> {
  const groups = await platform.paymentsDb
    .collection('payouts')
    .aggregate([{ $group: { _id: '$determinationId', n: { $sum: 1 } } }, { $match: { n: { $gt: 1 } } }])
    .toArray();
  return groups.reduce((sum, g) => sum + (g.n as number) - 1, 0);
}

export interface SweepTicks {
  queue: string;
  task: string;
  everyMs: number;
  /** Ticks that ran (a completed or failed job each). */
  ticks: number;
  /** The most attempts of one tick that ran without an error before the next (retries after an error aside). */
  maxRunsPerTick: number;
  /** The shortest time between two consecutive ticks that ran (a tick run twice would show < everyMs). */
  minGapMs: number;
}

/**
 * Every sweep's ticks, read from BullMQ: a job scheduler makes one job per tick, its id
 * `repeat:<task>:<tick millis>` (node_modules/bullmq job-scheduler), and completed jobs are kept
 * a day (libs/queue/src/producer.ts), so each tick that ran is there with its attempts started.
 */
export async function sweepTicks(platform: Platform, queues: string[]): Promise<SweepTicks[]> {
  const connection = new IORedis(platform.redisUrl, { maxRetriesPerRequest: null });
  const out: SweepTicks[] = [];
  try {
    for (const name of queues) {
      const queue = new Queue(name, { connection, prefix: platform.redisPrefix });
      const schedulers = await queue.getJobSchedulers(0, -1);
      const jobs = await queue.getJobs(['completed', 'failed'], 0, -1);
      for (const s of schedulers) {
        const runs = new Map<number, number>();
        for (const job of jobs) {
          const id = String(job.id);
          if (!id.startsWith(`repeat:${s.key}:`)) continue;
          const tick = Number(id.slice(`repeat:${s.key}:`.length));
          const started = Math.max(1, job.attemptsStarted ?? job.attemptsMade);
          // A tick started again after an attempt that failed is BullMQ's retry (each failed
          // attempt's error is kept in the job's stacktrace); one started again without an error
          // before it, after a lost lock (a stall) or beside another worker, ran twice.
          const errors = (job.stacktrace ?? []).length;
          const ranTwice = started - errors;
          runs.set(tick, (runs.get(tick) ?? 0) + Math.max(1, ranTwice));
          if (started > 1)
            console.log(
              `  sweep ${s.key} tick ${new Date(tick).toISOString()}: ${started} attempts, ${errors} of them failed: ${JSON.stringify((job.stacktrace ?? []).map((t) => t.split('\n')[0]))}`,
            );
        }
        const ticks = [...runs.keys()].sort((a, b) => a - b);
        const gaps = ticks.slice(1).map((t, i) => t - (ticks[i] as number));
        out.push({
          queue: name,
          task: s.key,
          everyMs: Number(s.every),
          ticks: ticks.length,
          maxRunsPerTick: Math.max(0, ...runs.values()),
          minGapMs: gaps.length > 0 ? Math.min(...gaps) : Number.NaN,
        });
      }
      await queue.close();
    }
  } finally {
    await connection.quit();
  }
  return out;
}
