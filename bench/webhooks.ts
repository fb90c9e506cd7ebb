/**
 * Webhook delivery throughput end to end: an event put on the `events` queue (as the
 * outbox relay does) → the webhooks service (its own process) records, signs and POSTs it
 * → a local partner receiver verifies the signature. Measured with 1 and with 50 partner
 * endpoints, next to a bare loop in this process that signs and POSTs the same bodies with
 * the same HTTP client (the service's sender) at the same concurrency.
 *
 *   npm run bench:webhooks                # 1,000 events per round, 3 rounds
 *   BENCH_EVENTS=300 npm run bench:webhooks
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import path from 'node:path';
import { startLocalMongo } from '@parametric/embedded-mongo';
import { createEvent } from '@parametric/events';
import { signContext } from '@parametric/http';
import { freePort } from '@parametric/local-process';
import { startLocalRedis } from '@parametric/local-redis';
import { createProducer } from '@parametric/queue';
import { startWebhookReceiver, type WebhookReceiver } from '@parametric/webhook-receiver';
import { createSender } from '../services/webhooks/src/delivery/send';
import { deliveryHeaders } from '../services/webhooks/src/delivery/sign';
import { median } from './support/run';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 1000);
const ROUNDS = 3;
const CONCURRENCY = 50;
const PER_ORG = 10;
const root = path.resolve(__dirname, '..');

interface Partner {
  organizationId: string;
  secret: string;
  receiver: WebhookReceiver;
}

async function main(): Promise<void> {
  const [mongo, redis] = await Promise.all([startLocalMongo(), startLocalRedis()]);
  const signing = randomBytes(24).toString('hex');
  const prefix = `bench-${randomBytes(3).toString('hex')}`;
  const port = await freePort();
  const service: ChildProcess = spawn(
    process.execPath,
    ['--import', 'tsx', 'services/webhooks/src/main.ts'],
    {
      cwd: root,
      stdio: ['ignore', 'ignore', 'inherit'],
      env: {
        ...process.env,
        LOG_LEVEL: 'warn',
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
      },
    },
  );
  const events = createProducer('events', { connection: redis.url, prefix });
  const sender = createSender({
    timeoutMs: 10_000,
    lookup: (await import('node:dns')).lookup,
    allowInsecure: true,
  });
  const receivers: WebhookReceiver[] = [];
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

    const partners = async (n: number): Promise<Partner[]> => {
      const out: Partner[] = [];
      for (let i = 0; i < n; i++) {
        const receiver = await startWebhookReceiver();
        receivers.push(receiver);
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
          body: JSON.stringify({ url: receiver.url }),
        });
        const { secret } = ((await res.json()) as { data: { secret: string } }).data;
        receiver.setSecret(secret);
        out.push({ organizationId, secret, receiver });
      }
      return out;
    };

    const verifiedCount = (ps: Partner[]) => ps.reduce((n, p) => n + p.receiver.verified().length, 0);
    const waitAll = async (ps: Partner[], target: number) => {
      while (verifiedCount(ps) < target) await new Promise((r) => setTimeout(r, 5));
    };

    console.log(
      `webhooks bench: ${EVENTS} events per round, median of ${ROUNDS}; service concurrency ${CONCURRENCY}, ${PER_ORG} per partner`,
    );
    for (const endpoints of [1, 50]) {
      const ps = await partners(endpoints);
      const concurrency = Math.min(CONCURRENCY, PER_ORG * endpoints);
      const pipeline: number[] = [];
      const bare: number[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        const before = verifiedCount(ps);
        const batch = Array.from({ length: EVENTS }, (_, i) => {
          const p = ps[i % ps.length] as Partner;
          return {
            p,
            event: createEvent('kyb.verified', p.organizationId, {
              organizationId: p.organizationId,
              kybStatus: 'VERIFIED',
            }),
          };
        });
        let start = process.hrtime.bigint();
        await Promise.all(batch.map(({ event }) => events.add(event, { jobId: event.id })));
        await waitAll(ps, before + EVENTS);
        pipeline.push(EVENTS / (Number(process.hrtime.bigint() - start) / 1e9));

        // The same bodies, signed and POSTed directly, `concurrency` at a time.
        const bodies = batch.map(({ p, event }) => ({
          p,
          id: randomUUID(),
          body: JSON.stringify({ id: '', event: event.event, createdAt: event.createdAt, data: event.data }),
        }));
        const mid = verifiedCount(ps);
        start = process.hrtime.bigint();
        let next = 0;
        await Promise.all(
          Array.from({ length: concurrency }, async () => {
            while (next < bodies.length) {
              const item = bodies[next++] as (typeof bodies)[number];
              const body = item.body.replace('"id":""', `"id":"${item.id}"`);
              const headers = deliveryHeaders({
                secret: item.p.secret,
                body,
                event: 'kyb.verified',
                deliveryId: item.id,
                now: Date.now(),
              });
              const result = await sender.post(item.p.receiver.url, body, headers);
              if (result.status !== 200)
                throw new Error(`bare POST failed: ${result.status} ${result.error}`);
            }
          }),
        );
        await waitAll(ps, mid + EVENTS);
        bare.push(EVENTS / (Number(process.hrtime.bigint() - start) / 1e9));
      }
      const p = median(pipeline);
      const b = median(bare);
      console.log(
        `${String(endpoints).padStart(2)} endpoint(s): pipeline ${p.toFixed(0).padStart(6)} deliveries/s   bare sign+POST ${b.toFixed(0).padStart(6)} /s (concurrency ${concurrency})   pipeline/bare ${(p / b).toFixed(2)}`,
      );
    }
  } finally {
    sender.close();
    await events.close();
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
