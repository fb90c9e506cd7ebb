import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { startWebhookReceiver, type WebhookReceiver } from '@parametric/webhook-receiver';
import { type Platform, startPlatform } from './support';

const MAIN = path.resolve(__dirname, '../src/main.ts');

/** The webhooks service as its own OS process, sharing the platform's MongoDB and Redis. */
function spawnWorker(p: Platform, extra: Record<string, string> = {}): ChildProcess {
  const c = p.config;
  return spawn(process.execPath, ['--import', 'tsx', MAIN], {
    env: {
      ...process.env,
      NODE_ENV: 'test',
      LOG_LEVEL: 'silent',
      WEBHOOKS_HOST: '127.0.0.1',
      WEBHOOKS_PORT: '0',
      MONGO_URL: c.MONGO_URL,
      MONGO_DB: c.MONGO_DB,
      REDIS_URL: c.REDIS_URL,
      REDIS_PREFIX: c.REDIS_PREFIX,
      INTERNAL_SIGNING_SECRET: c.INTERNAL_SIGNING_SECRET,
      WEBHOOK_SECRET_KEY: c.WEBHOOK_SECRET_KEY,
      ALLOW_INSECURE_WEBHOOKS: 'true',
      DELIVERY_TIMEOUT_MS: '20000',
      WORKER_LOCK_MS: '1500',
      ...extra,
    },
    stdio: 'ignore',
  });
}

describe('crash safety', () => {
  let p: Platform;
  let receiver: WebhookReceiver;
  beforeAll(async () => {
    // The in-process service only serves the API here: the workers are separate processes.
    p = await startPlatform({ RUN_WORKERS: 'false' });
    receiver = await startWebhookReceiver();
  });
  afterAll(async () => {
    await receiver.close();
    await p.stop();
  });

  it('a worker killed in the middle of a delivery loses nothing: another worker delivers it', async () => {
    const org = await p.connectedOrg(receiver);
    // The first copy hangs, as if the worker were stuck mid-request when it died.
    let calls = 0;
    receiver.setBehaviour(() => (++calls === 1 ? { hang: true } : undefined));

    const first = spawnWorker(p);
    let second: ChildProcess | undefined;
    try {
      await p.emitKybEvent(org.id);
      const inFlight = await receiver.waitFor(() => true, 20_000);
      const exited = once(first, 'exit');
      first.kill('SIGKILL');
      await exited;
      expect((await p.waitForRow(inFlight.deliveryId as string, () => true)).status).toBe('PENDING');

      second = spawnWorker(p);
      const row = await p.waitForRow(inFlight.deliveryId as string, (r) => r.status === 'DELIVERED', 30_000);
      expect(row.attempts).toBe(1);
      const copies = receiver.received.filter((d) => d.deliveryId === inFlight.deliveryId);
      expect(copies.length).toBeGreaterThanOrEqual(2);
      expect(new Set(copies.map((d) => d.rawBody)).size).toBe(1);
    } finally {
      for (const child of [first, second]) {
        if (child && child.exitCode === null && child.signalCode === null) {
          const exited = once(child, 'exit');
          child.kill('SIGTERM');
          await exited;
        }
      }
    }
  });

  it('the reconciler finds a PENDING delivery that has no job and gets it delivered', async () => {
    const org = await p.connectedOrg(receiver);
    receiver.setBehaviour(undefined);
    const id = '7c9e6679-7425-40de-944b-e07fc1f90ae7';
    const body = JSON.stringify({
      id,
      event: 'kyb.verified',
      createdAt: new Date().toISOString(),
      data: { organizationId: org.id, kybStatus: 'VERIFIED' },
    });
    // A row whose job was lost (Redis flushed, or a crash between recording and scheduling).
    await p.db.collection('webhook_deliveries').insertOne({
      _id: id as never,
      organizationId: org.id,
      event: 'kyb.verified',
      body,
      url: receiver.url,
      status: 'PENDING',
      attempts: 0,
      cycle: 0,
      responseStatus: null,
      lastError: null,
      deliveredAt: null,
      nextAttemptAt: new Date(Date.now() - 10 * 60_000),
      createdAt: new Date(),
      updatedAt: new Date(),
    });
    // A worker process whose reconciler looks every 300 ms for rows 1 s overdue.
    const worker = spawnWorker(p, { RECONCILE_INTERVAL_MS: '300', RECONCILE_GRACE_MS: '1000' });
    try {
      const got = await receiver.waitFor((d) => d.deliveryId === id, 20_000);
      expect(got.verified).toBe(true);
      expect(got.rawBody).toBe(body);
      expect((await p.waitForRow(id, (r) => r.status === 'DELIVERED')).attempts).toBe(1);
    } finally {
      const exited = once(worker, 'exit');
      worker.kill('SIGTERM');
      await exited;
    }
  });
});
