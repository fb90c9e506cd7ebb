/**
 * Webhook delivery throughput end to end: an event put on the `events` queue (as the
 * outbox relay does) → the webhooks service (its own process) records, signs and POSTs it
 * → a local partner receiver verifies the signature. A round's events are enqueued while the
 * queue is paused and the clock starts when it is resumed: the service drains a full queue. Each round measures, side by side, the
 * pipeline and a bare loop in this process that signs and POSTs the same bodies with the
 * same HTTP client (the service's sender) at the concurrency the service may use
 * (`DELIVERY_CONCURRENCY` 50, at most `DELIVERY_CONCURRENCY_PER_ORG` 10 per partner: 10 with
 * one endpoint). Every round runs each measurement once, every other round in reverse order;
 * figures are medians over the rounds, and each ratio is the median of the rounds' own
 * ratios (both sides ran seconds apart, which cancels this shared machine's load swings).
 * Reported through `report()` (bench/support/run.ts):
 *
 * - deliveries/s over bare sign+POST with 1 endpoint (target >= 0.15) and 50 (>= 0.25);
 * - one dead endpoint among 50 (one that never answers, held until the 10 s timeout; one that
 *   refuses connections): the other 49 partners' deliveries/s next to the same events with all
 *   50 healthy, in the same round. Cost = 1 - with dead / all healthy, target < 10 %;
 * - scaling with 1, 50 and 1,000 endpoints, the same number of events per round. The work size
 *   compared is the number of partner endpoints. The fair comparison is deliveries/s at 1,000
 *   endpoints vs 50: both may use the service's full concurrency, so only the number of
 *   partners (endpoint rows, connections, origins) changes. With 1 endpoint the per-partner
 *   limit caps the service at 10 requests at a time, which is reported too (1,000 vs 1,
 *   the smallest-to-largest wording) but is the easier figure. Target: >= 0.80.
 *   (Scales run minutes apart, so these two ratios are ratios of medians.) Also reported: the
 *   same comparison in deliveries per CPU-second of the webhooks process (from /proc), which
 *   the machine's load swings between the two scales hardly move.
 *
 * The bare loop sends from the process its receivers run in; the pipeline's requests cross
 * from the service's process: with 1 endpoint (10 requests at a time) the pipeline pays a hop
 * between processes per request that the bare loop does not, which on a loaded machine is
 * most of a request's latency.
 *
 *   npm run bench:webhooks                # 6,000 events per round, 5 rounds (two to three minutes)
 *   BENCH_EVENTS=300 BENCH_ROUNDS=1 BENCH_SCALES=1,50 npm run bench:webhooks
 *   BENCH_CPU_PROF=services/webhooks BENCH_CPU_PROF_DIR=/tmp/prof npm run bench:webhooks   # plus a CPU profile of the service
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { lookup } from 'node:dns';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { startLocalMongo } from '@parametric/embedded-mongo';
import { createEvent } from '@parametric/events';
import { signContext } from '@parametric/http';
import { freePort } from '@parametric/local-process';
import { startLocalRedis } from '@parametric/local-redis';
import { createProducer } from '@parametric/queue';
import { startWebhookReceiver, type WebhookReceiver } from '@parametric/webhook-receiver';
import { Queue } from 'bullmq';
import { createSender } from '../services/webhooks/src/delivery/send';
import { deliveryHeaders } from '../services/webhooks/src/delivery/sign';
import { BENCH_LOG_LEVEL } from './support/platform';
import { type BenchFigure, median, report, startProcess } from './support/run';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 6000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const CONCURRENCY = 50;
const PER_ORG = 10;
/** BENCH_SCALES=1,50 runs some of them (the report then leaves out what needs the others). */
const SCALES = (process.env.BENCH_SCALES ?? '1,50,1000').split(',').map(Number);

/** CPU time a process has used, in ms (Linux /proc; NaN elsewhere). utime + stime, 100 ticks/s. */
function cpuMs(pid: number | undefined): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    return ((Number(fields[11]) + Number(fields[12])) / 100) * 1000;
  } catch {
    return Number.NaN;
  }
}

interface Partner {
  organizationId: string;
  secret: string;
  url: string;
  /** Absent for a dead partner. */
  receiver?: WebhookReceiver;
}

async function main(): Promise<void> {
  const [mongo, redis] = await Promise.all([startLocalMongo(), startLocalRedis()]);
  const signing = randomBytes(24).toString('hex');
  const prefix = `bench-${randomBytes(3).toString('hex')}`;
  const port = await freePort();
  // As npm start runs it (bench/support/run.ts; BENCH_CPU_PROF=services/webhooks profiles it).
  const service: ChildProcess = startProcess('services/webhooks/src/main.ts', {
    ...process.env,
    LOG_LEVEL: BENCH_LOG_LEVEL,
    WEBHOOKS_HOST: '127.0.0.1',
    WEBHOOKS_PORT: String(port),
    MONGO_URL: mongo.url,
    REDIS_URL: redis.url,
    REDIS_PREFIX: prefix,
    INTERNAL_SIGNING_SECRET: signing,
    WEBHOOK_SECRET_KEY: randomBytes(32).toString('base64'),
    ALLOW_INSECURE_WEBHOOKS: 'true',
    DELIVERY_CONCURRENCY: String(CONCURRENCY),
    DELIVERY_CONCURRENCY_PER_ORG: String(PER_ORG),
  });
  const events = createProducer('events', { connection: redis.url, prefix });
  // Only to pause and resume the queue (see `pipeline`); events go through the producer.
  const eventsQueue = new Queue('events', { connection: { url: redis.url }, prefix });
  const sender = createSender({ timeoutMs: 10_000, lookup, allowInsecure: true });
  const receivers: WebhookReceiver[] = [];
  // Verified first copies, counted as they arrive (cheaper than re-reading 1,000 receivers' logs).
  let verified = 0;
  try {
    const base = `http://127.0.0.1:${port}`;
    for (let i = 0; i < 200; i++) {
      if (
        await fetch(`${base}/readyz`)
          .then((r) => r.ok)
          .catch(() => false)
      )
        break;
      await new Promise((r) => setTimeout(r, 100));
    }

    const connect = async (url: string): Promise<{ organizationId: string; secret: string }> => {
      const organizationId = randomUUID();
      const res = await fetch(`${base}/api/organizations/me/webhook`, {
        method: 'PUT',
        headers: {
          'content-type': 'application/json',
          ...signContext(
            { organizationId, role: 'ORG_ADMIN', requestId: randomUUID(), issuedAt: Date.now() },
            signing,
          ),
        },
        body: JSON.stringify({ url }),
      });
      if (!res.ok) throw new Error(`PUT webhook: ${res.status} ${await res.text()}`);
      const { secret } = ((await res.json()) as { data: { secret: string } }).data;
      return { organizationId, secret };
    };
    const partner = async (): Promise<Partner> => {
      const receiver = await startWebhookReceiver();
      receivers.push(receiver);
      receiver.onDelivery((d) => {
        if (d.verified && !d.duplicate) verified++;
      });
      const { organizationId, secret } = await connect(receiver.url);
      receiver.setSecret(secret);
      return { organizationId, secret, url: receiver.url, receiver };
    };
    const partners = async (n: number): Promise<Partner[]> => {
      const out: Partner[] = [];
      for (let i = 0; i < n; i += 25) {
        out.push(...(await Promise.all(Array.from({ length: Math.min(25, n - i) }, partner))));
      }
      return out;
    };

    const waitFor = async (target: number) => {
      while (verified < target) await new Promise((r) => setTimeout(r, 2));
    };

    /** EVENTS events round-robin over `ps` through the pipeline: deliveries/s reaching the live ones. */
    /** The service's CPU per delivery (µs) in the last healthy pipeline measurements. */
    let serviceCpu: number[] = [];
    const pipeline = async (ps: Partner[], count = EVENTS): Promise<number> => {
      const batch = Array.from({ length: count }, (_, i) => {
        const p = ps[i % ps.length] as Partner;
        return createEvent('kyb.verified', p.organizationId, {
          organizationId: p.organizationId,
          kybStatus: 'VERIFIED',
        });
      });
      const live = batch.filter((_, i) => (ps[i % ps.length] as Partner).receiver).length;
      const target = verified + live;
      // Enqueued while the queue is paused, then released: the clock measures the service
      // draining the queue, not this process enqueueing (the relays' work, in other services),
      // which would also hold up the receivers that share this process.
      await eventsQueue.pause();
      await Promise.all(batch.map((event) => events.add(event, { jobId: event.id })));
      const cpuBefore = cpuMs(service.pid);
      const start = process.hrtime.bigint();
      await eventsQueue.resume();
      await waitFor(target);
      const seconds = Number(process.hrtime.bigint() - start) / 1e9;
      if (ps.every((p) => p.receiver)) serviceCpu.push(((cpuMs(service.pid) - cpuBefore) * 1000) / count);
      return live / seconds;
    };

    /** The same kind of bodies, signed and POSTed directly, `concurrency` at a time. */
    const bare = async (ps: Partner[], concurrency: number, count = EVENTS): Promise<number> => {
      const bodies = Array.from({ length: count }, (_, i) => {
        const p = ps[i % ps.length] as Partner;
        const event = createEvent('kyb.verified', p.organizationId, {
          organizationId: p.organizationId,
          kybStatus: 'VERIFIED',
        });
        return {
          p,
          id: event.id,
          body: JSON.stringify({
            id: event.id,
            event: event.event,
            createdAt: event.createdAt,
            data: event.data,
          }),
        };
      });
      const target = verified + count;
      const start = process.hrtime.bigint();
      let next = 0;
      await Promise.all(
        Array.from({ length: concurrency }, async () => {
          while (next < bodies.length) {
            const item = bodies[next++] as (typeof bodies)[number];
            const headers = deliveryHeaders({
              secret: item.p.secret,
              body: item.body,
              event: 'kyb.verified',
              deliveryId: item.id,
              now: Date.now(),
            });
            const result = await sender.post(item.p.url, item.body, headers);
            if (result.status !== 200) throw new Error(`bare POST failed: ${result.status} ${result.error}`);
          }
        }),
      );
      await waitFor(target);
      return count / (Number(process.hrtime.bigint() - start) / 1e9);
    };

    console.log(
      `webhooks bench: ${EVENTS} events per round, median of ${ROUNDS}; service concurrency ${CONCURRENCY}, ${PER_ORG} per partner`,
    );
    const rates = new Map<
      number,
      { pipeline: number; bare: number; ratio: number; concurrency: number; cpu: number }
    >();
    let dead:
      | { healthy: number; hanging: number; refusing: number; hangingRatio: number; refusingRatio: number }
      | undefined;
    for (const endpoints of SCALES) {
      const ps = await partners(endpoints);
      const concurrency = Math.min(CONCURRENCY, PER_ORG * endpoints);
      // Among 50: one partner that never answers and one whose port refuses connections,
      // each next to the same 49 healthy partners.
      let hanging: Partner[] | undefined;
      let refusing: Partner[] | undefined;
      if (endpoints === 50) {
        const hang = await startWebhookReceiver({ respond: () => ({ hang: true }) });
        receivers.push(hang);
        const h = await connect(hang.url);
        const refusedUrl = `http://127.0.0.1:${await freePort()}/hooks`;
        const r = await connect(refusedUrl);
        hanging = [...ps.slice(0, 49), { ...h, url: hang.url }];
        refusing = [...ps.slice(0, 49), { ...r, url: refusedUrl }];
      }
      // Warm-up, not measured: connections, JIT, caches, for both sides alike.
      const warm = Math.max(endpoints, Math.ceil(EVENTS / 4));
      for (const group of [ps, hanging, refusing]) if (group) await pipeline(group, warm);
      await bare(ps, concurrency, warm);
      const p: number[] = [];
      const b: number[] = [];
      serviceCpu = [];
      const withHanging: number[] = [];
      const withRefusing: number[] = [];
      const steps: Array<() => Promise<void>> = [
        async () => void p.push(await pipeline(ps)),
        async () => void b.push(await bare(ps, concurrency)),
      ];
      if (hanging && refusing) {
        const [h, r] = [hanging, refusing];
        steps.push(async () => void withHanging.push(await pipeline(h)));
        steps.push(async () => void withRefusing.push(await pipeline(r)));
      }
      for (let round = 0; round < ROUNDS; round++) {
        // Every other round in reverse, so neither side of a comparison always runs first.
        const order = round % 2 === 0 ? steps : [...steps].reverse();
        for (const step of order) await step();
      }
      if (process.env.BENCH_DEBUG) console.log({ p, b, withHanging, withRefusing });
      // Each ratio is the median of the rounds' own ratios: both sides of a round ran within
      // seconds of each other, which cancels this shared machine's slow swings in load.
      const perRound = (xs: number[], ys: number[]) => median(xs.map((x, i) => x / (ys[i] as number)));
      const pm = median(p);
      const bm = median(b);
      const ratio = perRound(p, b);
      const cpu = median(serviceCpu);
      rates.set(endpoints, { pipeline: pm, bare: bm, ratio, concurrency, cpu });
      console.log(
        `${String(endpoints).padStart(4)} endpoint(s): pipeline ${pm.toFixed(0).padStart(6)} deliveries/s   bare sign+POST ${bm.toFixed(0).padStart(6)} /s (concurrency ${concurrency})   pipeline/bare ${ratio.toFixed(2)}   service CPU ${cpu.toFixed(0)} µs/delivery`,
      );
      if (hanging && refusing) {
        dead = {
          healthy: pm,
          hanging: median(withHanging),
          refusing: median(withRefusing),
          hangingRatio: perRound(withHanging, p),
          refusingRatio: perRound(withRefusing, p),
        };
        console.log(
          `  with one dead endpoint: never answers ${dead.hanging.toFixed(0)} /s (${dead.hangingRatio.toFixed(2)} of healthy), refuses ${dead.refusing.toFixed(0)} /s (${dead.refusingRatio.toFixed(2)}) (the 49 others' deliveries)`,
        );
      }
    }

    const at = (n: number) => rates.get(n) as { pipeline: number };
    const figures: BenchFigure[] = [];
    for (const [n, target] of [
      [1, 0.15],
      [50, 0.25],
      [1000, undefined],
    ] as const) {
      const r = rates.get(n);
      if (!r) continue;
      const ratio = r.ratio;
      figures.push({
        benchmark: 'webhooks',
        figure: `${n.toLocaleString('en')} endpoint${n === 1 ? '' : 's'}: deliveries/s end to end vs bare sign+POST (concurrency ${r.concurrency})`,
        value: r.pipeline,
        unit: 'deliveries/s',
        baseline: r.bare,
        ratio,
        ...(target === undefined ? {} : { target: `>= ${target.toFixed(2)} of bare`, met: ratio >= target }),
      });
      if (Number.isFinite(r.cpu)) {
        figures.push({
          benchmark: 'webhooks',
          figure: `${n.toLocaleString('en')} endpoint${n === 1 ? '' : 's'}: the webhooks process's CPU per delivery (less noisy than rates on a shared machine)`,
          value: r.cpu,
          unit: 'µs',
        });
      }
    }
    if (dead) {
      for (const [kind, value, ratio] of [
        ['never answers (10 s timeout)', dead.hanging, dead.hangingRatio],
        ['refuses connections', dead.refusing, dead.refusingRatio],
      ] as const) {
        figures.push({
          benchmark: 'webhooks',
          figure: `one dead endpoint among 50 (${kind}): the 49 others' deliveries/s vs all 50 healthy (cost ${((1 - ratio) * 100).toFixed(1)} %)`,
          value,
          unit: 'deliveries/s',
          baseline: dead.healthy,
          ratio,
          target: '< 10 % cost (>= 0.90)',
          met: ratio >= 0.9,
        });
      }
    }
    for (const smallest of [50, 1]) {
      if (!rates.has(1000) || !rates.has(smallest)) continue;
      const ratio = at(1000).pipeline / at(smallest).pipeline;
      figures.push({
        benchmark: 'webhooks',
        figure: `scaling: deliveries/s with 1,000 endpoints vs ${smallest} (${EVENTS} events per round)`,
        value: at(1000).pipeline,
        unit: 'deliveries/s',
        baseline: at(smallest).pipeline,
        ratio,
        target: `>= 0.80 of ${smallest} endpoint${smallest === 1 ? '' : 's'}`,
        met: ratio >= 0.8,
      });
    }
    const cpu = (n: number) => rates.get(n)?.cpu ?? Number.NaN;
    if (Number.isFinite(cpu(1000) / cpu(50))) {
      // Deliveries per CPU-second, 1,000 endpoints vs 50: the capacity the rates above would
      // show on an idle machine, without the minutes between the two scales' measurements.
      const ratio = cpu(50) / cpu(1000);
      figures.push({
        benchmark: 'webhooks',
        figure: 'scaling: deliveries per CPU-second of the webhooks process, 1,000 endpoints vs 50',
        value: 1e6 / cpu(1000),
        unit: 'deliveries/CPU-s',
        baseline: 1e6 / cpu(50),
        ratio,
        target: '>= 0.80 of 50 endpoints',
        met: ratio >= 0.8,
      });
    }
    report(figures);
  } finally {
    sender.close();
    await events.close();
    await eventsQueue.close();
    await Promise.all(receivers.map((r) => r.close()));
    const exited = once(service, 'exit');
    service.kill('SIGTERM');
    await exited;
    await Promise.all([mongo.stop(), redis.stop()]);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
