import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import path from 'node:path';
import { createEvent } from '@parametric/events';
import { signContext } from '@parametric/http';
import { eventually, testMongoUrl } from '@parametric/test-harness';
import type { WebhookReceiver } from '@parametric/webhook-receiver';

/**
 * What the fault suite's scenarios share (`npm run test:faults`): real service processes,
 * real signals, and the table of figures each file prints when it ends.
 */
export const root = path.resolve(__dirname, '..', '..');
export const SIGNING = 'test-internal-signing-secret-0123';

/** One scenario's figures: what partners saw, and what survived recovery. */
export interface FaultRow {
  fault: string;
  partnersSaw: string;
  expected: number;
  done: number;
  lost: number;
  duplicated: number;
}

/**
 * The rows of one test file, printed as a Markdown table once its tests have run (call at the
 * top level of the file: it registers the `afterAll` that prints).
 */
export function faultTable(): FaultRow[] {
  const rows: FaultRow[] = [];
  afterAll(() => {
    const lines = [
      '',
      '| fault | what partners saw | expected | done after recovery | lost | duplicated side effects |',
      '|---|---|---|---|---|---|',
      ...rows.map(
        (r) => `| ${r.fault} | ${r.partnersSaw} | ${r.expected} | ${r.done} | ${r.lost} | ${r.duplicated} |`,
      ),
      '',
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
  });
  return rows;
}

/** A service's `main.ts` (path from the repository root) as its own process, as in production. */
export function service(script: string, env: NodeJS.ProcessEnv): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', script], {
    cwd: root,
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...process.env, NODE_ENV: 'test', LOG_LEVEL: 'error', ...env },
  });
}

export async function kill9(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGKILL');
  await exited;
}

export async function waitReady(port: number): Promise<void> {
  await eventually(async () => expect((await fetch(`http://127.0.0.1:${port}/readyz`)).status).toBe(200), {
    timeout: 60_000,
    interval: 100,
    message: `the service on ${port} ready`,
  });
}

/** The webhooks service's environment for a fault scenario: fast retries and reconciliation. */
export function webhooksEnv(port: number, dbName: string, redisUrl: string, prefix: string) {
  return {
    WEBHOOKS_HOST: '127.0.0.1',
    WEBHOOKS_PORT: String(port),
    MONGO_URL: testMongoUrl(),
    MONGO_DB: dbName,
    REDIS_URL: redisUrl,
    REDIS_PREFIX: prefix,
    INTERNAL_SIGNING_SECRET: SIGNING,
    WEBHOOK_SECRET_KEY: randomBytes(32).toString('base64'),
    ALLOW_INSECURE_WEBHOOKS: 'true',
    DELIVERY_BACKOFF_MS: '100,200,300,400,500',
    RECONCILE_INTERVAL_MS: '1000',
    RECONCILE_GRACE_MS: '2000',
  };
}

/** A partner with its webhook pointed at `receiver` (which learns the secret); its organization id. */
export async function partnerOf(port: number, receiver: WebhookReceiver): Promise<string> {
  const organizationId = randomUUID();
  const configured = await fetch(`http://127.0.0.1:${port}/api/organizations/me/webhook`, {
    method: 'PUT',
    headers: {
      'content-type': 'application/json',
      ...signContext(
        { organizationId, role: 'ORG_ADMIN', requestId: randomUUID(), issuedAt: Date.now() },
        SIGNING,
      ),
    },
    body: JSON.stringify({ url: receiver.url }),
  });
  receiver.setSecret(((await configured.json()) as { data: { secret: string } }).data.secret);
  return organizationId;
}

/** `n` events for one organization, as the outbox relays put them on the queue. */
export function kybEvents(organizationId: string, n: number) {
  return Array.from({ length: n }, () =>
    createEvent('kyb.verified', organizationId, { organizationId, kybStatus: 'VERIFIED' }),
  );
}

/** The distinct `body.id`s a receiver has verified. */
export const deliveredIds = (receiver: WebhookReceiver) =>
  new Set(receiver.verified().map((d) => (d.body as { id: string }).id));
