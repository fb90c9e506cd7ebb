import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import path from 'node:path';
import { policyRefOf, policyRegistryAbi } from '@parametric/chain';
import { createEvent } from '@parametric/events';
import { signContext } from '@parametric/http';
import { eventually, testMongoUrl } from '@parametric/test-harness';
import {
  localWiring,
  type Ports,
  type ServiceName,
  serviceNodeArgs,
  service as topologyService,
} from '@parametric/topology';
import type { WebhookReceiver } from '@parametric/webhook-receiver';
import type { Queue } from 'bullmq';
import { createPublicClient, http } from 'viem';

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

/**
 * A service (its entry point in tools/topology) as its own process, as in production. Its IPC
 * channel is the one a launcher gives: if this test process dies, the service notices and stops
 * (libs/runtime) instead of outliving the run; the channel does not keep this process alive.
 */
export function service(name: ServiceName, env: NodeJS.ProcessEnv): ChildProcess {
  const child = spawn(process.execPath, serviceNodeArgs(topologyService(name).main), {
    cwd: root,
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    env: { ...process.env, NODE_ENV: 'test', LOG_LEVEL: 'error', ...env },
  });
  child.channel?.unref();
  return child;
}

/**
 * Service `name`'s place among processes on loopback ports, as tools/topology wires it (the
 * same wiring as `npm start`'s): the ports (and loopback binds) of its listeners in `ports`,
 * and the URL of each process it calls found there. What `ports` does not name is left out.
 */
export function wiring(name: ServiceName, ports: Ports): Record<string, string> {
  return localWiring(name, ports);
}

/** The port of a loopback URL (a server started in this process: `policy.url`, `simulator.url`). */
export function portOf(url: string): number {
  return Number(new URL(url).port);
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
    ...wiring('webhooks', { webhooks: { http: port } }),
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

/** Resolves once something accepts TCP connections on the loopback `port` (within `timeoutMs`). */
export async function waitListening(port: number, timeoutMs = 20_000): Promise<void> {
  const { connect } = await import('node:net');
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`nothing listening on ${port} within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * A private `redis-server` on a given loopback port, persistence off like `startLocalRedis`'s
 * (which picks its own port): for a Redis that comes back on the port it was killed on.
 */
export async function redisServerOn(port: number): Promise<ChildProcess> {
  const child = spawn(
    process.env.REDIS_SERVER_BIN ?? 'redis-server',
    [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--appendonly',
      'no',
      '--loglevel',
      'warning',
    ],
    { stdio: ['ignore', 'ignore', 'inherit'] },
  );
  const { Redis } = await import('ioredis');
  const probe = new Redis(port, '127.0.0.1', {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  try {
    await eventually(
      async () => {
        if (probe.status !== 'ready') await probe.connect().catch(() => undefined);
        expect(await probe.ping()).toBe('PONG');
      },
      { timeout: 10_000, interval: 50, message: `redis-server answering on ${port}` },
    );
  } finally {
    probe.disconnect();
  }
  return child;
}

/** A private anvil (its process, so a test can stop it) with a PolicyRegistry deployed. */
export async function anvilWithRegistry(): Promise<{
  child: ChildProcess;
  rpcUrl: string;
  registryAddress: `0x${string}`;
  privateKey: `0x${string}`;
}> {
  const { deployRegistry, localDevPrivateKey } = await import('@parametric/chain');
  const { anvilBinary } = await import('@parametric/local-chain');
  const { freePort } = await import('@parametric/local-process');
  const port = await freePort();
  const child = spawn(anvilBinary(), ['--port', String(port), '--host', '127.0.0.1', '--silent'], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const rpcUrl = `http://127.0.0.1:${port}`;
  try {
    await waitListening(port, 10_000);
    const privateKey = localDevPrivateKey(0);
    return { child, rpcUrl, registryAddress: await deployRegistry(rpcUrl, privateKey), privateKey };
  } catch (err) {
    await kill9(child);
    throw err;
  }
}

/** Our embedded MongoDB as its own process (so a test can SIGSTOP it), on a free port. */
export async function embeddedMongod(): Promise<{ child: ChildProcess; url: string }> {
  const { EMBEDDED_MONGOD_BIN } = await import('@parametric/embedded-mongo');
  const { freePort } = await import('@parametric/local-process');
  const port = await freePort();
  const child = spawn(
    process.execPath,
    [EMBEDDED_MONGOD_BIN, '--port', String(port), '--bind_ip', '127.0.0.1'],
    {
      cwd: root,
      stdio: ['ignore', 'ignore', 'inherit'],
    },
  );
  try {
    await waitListening(port, 20_000);
  } catch (err) {
    await kill9(child);
    throw err;
  }
  return { child, url: `mongodb://127.0.0.1:${port}/?directConnection=true` };
}

/** One partner request as a client with a timeout sees it: its status (0: no answer) and time. */
export interface Timed {
  status: number;
  ms: number;
  // biome-ignore lint/suspicious/noExplicitAny: answers are arbitrary JSON that assertions walk into
  body: any;
}

export async function timedCall(
  url: string,
  init: {
    method?: string;
    key?: string;
    body?: unknown;
    timeoutMs?: number;
    /** Further request headers (e.g. `Idempotency-Key`). */
    headers?: Record<string, string>;
  } = {},
): Promise<Timed> {
  const started = Date.now();
  try {
    const res = await fetch(url, {
      method: init.method ?? 'GET',
      headers: {
        ...init.headers,
        ...(init.key ? { 'x-api-key': init.key } : {}),
        ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      body: init.body !== undefined ? JSON.stringify(init.body) : undefined,
      signal: AbortSignal.timeout(init.timeoutMs ?? 45_000),
    });
    const text = await res.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {}
    return { status: res.status, ms: Date.now() - started, body };
  } catch {
    return { status: 0, ms: Date.now() - started, body: undefined };
  }
}

/** Points an organization's webhook at `receiver` through the webhooks service (learns the secret). */
export async function connectReceiver(
  webhooksPort: number,
  organizationId: string,
  receiver: WebhookReceiver,
): Promise<void> {
  const configured = await fetch(`http://127.0.0.1:${webhooksPort}/api/organizations/me/webhook`, {
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
}

/**
 * What activating `policyIds` left behind, for "once each" checks: their `PolicyRegistered`
 * logs on the chain, and the `policy.activated` jobs on the events queue (waited for until
 * there are at least as many as policies), counted per policy.
 */
export async function activationOutcome(
  chain: { rpcUrl: string; registryAddress: `0x${string}` },
  eventsQueue: Queue,
  policyIds: readonly string[],
): Promise<{ registrations: number; events: number; eventsPerPolicy: Map<string, number> }> {
  const logs = await createPublicClient({ transport: http(chain.rpcUrl) }).getContractEvents({
    address: chain.registryAddress,
    abi: policyRegistryAbi,
    eventName: 'PolicyRegistered',
    fromBlock: 0n,
  });
  const refs = new Set(policyIds.map((id) => policyRefOf(id)));
  const registrations = logs.filter((log) => refs.has(log.args.policyRef as `0x${string}`)).length;
  const activated = await eventually(
    async () => {
      const jobs = await eventsQueue.getJobs(['waiting', 'delayed', 'prioritized', 'active', 'completed']);
      const found = jobs.filter((j) => j.data.event === 'policy.activated');
      expect(found.length).toBeGreaterThanOrEqual(policyIds.length);
      return found;
    },
    { timeout: 30_000, interval: 200, message: 'policy.activated relayed for every policy' },
  );
  const eventsPerPolicy = new Map<string, number>();
  for (const job of activated) {
    const id = (job.data.data as { policyId: string }).policyId;
    eventsPerPolicy.set(id, (eventsPerPolicy.get(id) ?? 0) + 1);
  }
  return { registrations, events: activated.length, eventsPerPolicy };
}
