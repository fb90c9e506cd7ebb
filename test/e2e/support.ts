import { type ChildProcess, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { eventually } from '@parametric/test-harness';
import { listeners } from '@parametric/topology';

/** What the e2e tests share: `npm start`'s script as a newcomer runs it, on ports of their own. */
export const root = path.resolve(__dirname, '..', '..');

const PORT_NAMES = [
  'GATEWAY_PORT',
  'OPS_PORT',
  'WEBHOOKS_PORT',
  'POLICY_PORT',
  'DETERMINATIONS_PORT',
  'PAYMENTS_PORT',
  'PAYMENTS_CALLBACK_PORT',
  'WEBHOOK_RECEIVER_PORT',
  'RATE_SIMULATOR_PORT',
  'MPESA_SIMULATOR_PORT',
] as const;
export type PortName = (typeof PORT_NAMES)[number];
// The variable of every listener of the platform is tools/topology's: spelled out above for the
// tests' types, and held to it here, so a listener added there gets a free port here too.
const topologyPorts = listeners().map(({ listener }) => listener.portEnv);
if ([...topologyPorts].sort().join() !== [...PORT_NAMES].sort().join())
  throw new Error(`test/e2e/support.ts's ports (${PORT_NAMES}) are not tools/topology's (${topologyPorts})`);

/** Below the ephemeral range (Linux's default starts at 32768), above the well-known services. */
const PLATFORM_PORTS = { from: 20_000, to: 32_767 };

/**
 * This jest worker's own slice of PLATFORM_PORTS. A port is checked free by binding and releasing
 * it, so two workers checking at once could both be handed the same one and the second platform to
 * bind it would fail (`listen EADDRINUSE`, seen once in a CI run of test/e2e/stop.test.ts): a worker
 * only draws from its own slice. Jest numbers its workers from 1 (jest.config.js runs 2); more
 * workers than slices would share slices again, so the count leaves room.
 */
const SLICES = 8;
const WORKER_PORTS = ((): { from: number; to: number } => {
  const worker = Number(process.env.JEST_WORKER_ID ?? '1');
  const index = (Number.isInteger(worker) && worker > 0 ? worker - 1 : 0) % SLICES;
  const size = Math.floor((PLATFORM_PORTS.to - PLATFORM_PORTS.from + 1) / SLICES);
  return { from: PLATFORM_PORTS.from + index * size, to: PLATFORM_PORTS.from + (index + 1) * size - 1 };
})();

/**
 * A port for one of the platform's processes, bindable now, outside the ephemeral range: the
 * stores `npm start` starts pick theirs from the ephemeral range (listen on port 0), and so does
 * every outgoing connection on the machine, so a port taken from that range and released until
 * the platform binds it could be handed to either meanwhile (it was, on CI: the launcher's Redis
 * got the policy service's port).
 */
async function platformPort(taken: Set<number>): Promise<number> {
  for (;;) {
    const port = WORKER_PORTS.from + Math.floor(Math.random() * (WORKER_PORTS.to - WORKER_PORTS.from + 1));
    if (taken.has(port) || !(await bindable(port))) continue;
    taken.add(port);
    return port;
  }
}

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/**
 * Free ports for every listener of the platform, and an environment that uses them and starts
 * its own MongoDB, Redis and chain (the test run's are not inherited), plus `extra`; a variable
 * in `unset` is left out.
 */
export async function platformEnv(
  extra: NodeJS.ProcessEnv = {},
  unset: readonly string[] = [],
): Promise<{ env: NodeJS.ProcessEnv; ports: Record<PortName, number> }> {
  const taken = new Set<number>();
  const ports = {} as Record<PortName, number>;
  for (const name of PORT_NAMES) ports[name] = await platformPort(taken);
  const env: NodeJS.ProcessEnv = { ...process.env, ...extra };
  for (const name of [
    'MONGO_URL',
    'REDIS_URL',
    'CHAIN_RPC_URL',
    'CHAIN_REGISTRY_ADDRESS',
    'CHAIN_PRIVATE_KEY',
    ...unset,
  ]) {
    delete env[name];
  }
  for (const [name, port] of Object.entries(ports)) env[name] = String(port);
  return { env, ports };
}

/** A JSON call to the platform setting a test's scene: the envelope's `data`, or a throw saying what failed. */
export async function call(method: string, url: string, headers: Record<string, string>, body?: unknown) {
  const res = await fetch(url, {
    method,
    headers: { 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  // biome-ignore lint/suspicious/noExplicitAny: the envelope's data as JSON, walked by the flow
  const json = (await res.json()) as { data?: any; error?: unknown };
  if (!res.ok) throw new Error(`${method} ${url}: ${res.status} ${JSON.stringify(json)}`);
  return json.data;
}

/**
 * The insurer's set-up of a Tier 2 organization and a paid, active crop policy of one of its
 * farmers, as a partner and the insurer make it through the APIs: KYB, tier, licence, capacity,
 * the farmer (KYC approved), a plot, the purchase and its premium paid by the M-Pesa simulator's
 * prompt. Answers the policy once it is ACTIVE.
 */
export async function paidTier2Policy(scene: {
  api: string;
  ops: string;
  asOps: Record<string, string>;
  organizationId: string;
  key: Record<string, string>;
  licenceNumber: string;
  farmer: { phoneNumber: string; nationalId: string };
}) {
  const { api, ops, asOps, key } = scene;
  const organization = `${ops}/organizations/${scene.organizationId}`;
  await call('POST', `${organization}/kyb`, asOps, { status: 'VERIFIED' });
  await call('POST', `${organization}/service-tier`, asOps, { serviceTier: 'DETERMINATION_AND_SETTLEMENT' });
  await call('POST', `${organization}/licences`, asOps, {
    market: 'KE',
    licenceNumber: scene.licenceNumber,
    expiresAt: '2099-01-01T00:00:00Z',
  });
  await call('POST', `${organization}/capacity`, asOps, {
    amount: 10_000_000,
    currency: 'KES',
    solvencyAttestedUntil: '2099-01-01T00:00:00Z',
  });
  const farmer = await call('POST', `${api}/farmers`, key, {
    firstName: 'Wanjiru',
    lastName: 'Kamau',
    ...scene.farmer,
    region: 'Nakuru',
  });
  await call('POST', `${ops}/farmers/${farmer.id}/kyc`, asOps, { status: 'APPROVED' });
  const plot = await call('POST', `${api}/plots`, key, {
    farmerId: farmer.id,
    name: 'River field',
    latitude: -0.3031,
    longitude: 36.08,
    areaHectares: 2,
    cropType: 'MAIZE',
  });
  const { policy } = await call('POST', `${api}/policies/purchase`, key, {
    farmerId: farmer.id,
    productType: 'CROP',
    plotId: plot.id,
    sumInsured: 60_000,
    coverageType: 'DROUGHT',
    durationDays: 180,
  });
  await call('POST', `${api}/payments/initiate`, key, {
    reference: policy.id,
    amount: policy.premium,
    phoneNumber: scene.farmer.phoneNumber,
  });
  // The simulator's farmer accepts the prompt; the callback settles it; the policy activates.
  await eventually(
    async () => expect((await call('GET', `${api}/policies/${policy.id}`, key)).status).toBe('ACTIVE'),
    { timeout: 60_000, interval: 500, message: 'the paid policy activated' },
  );
  return policy;
}

export interface Running {
  /** The launcher: `npm start`'s script (or npm itself, with `npm: true`). */
  child: ChildProcess;
  /** Everything it wrote so far, stdout and stderr. */
  output: () => string;
}

/**
 * `npm start`'s script, once its banner is printed. `detached` puts it in a process group of its
 * own, so the whole platform can be signalled at once (`process.kill(-pid, …)`).
 */
export async function bootPlatform(
  env: NodeJS.ProcessEnv,
  options: { args?: string[]; detached?: boolean; npm?: boolean } = {},
): Promise<Running> {
  // With `npm`: `npm start` itself, as a newcomer types it (npm, then the launcher it execs).
  const [command, args] = options.npm
    ? ['npm', ['start', ...(options.args?.length ? ['--', ...options.args] : [])]]
    : [process.execPath, ['--import', 'tsx', 'scripts/start.ts', ...(options.args ?? [])]];
  const child = spawn(command, args, {
    cwd: root,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: options.detached ?? false,
  });
  let text = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    text += chunk.toString('utf8');
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    text += chunk.toString('utf8');
  });
  await eventually(
    async () => {
      if (child.exitCode !== null) throw new Error(`npm start exited:\n${text}`);
      expect(text).toContain('Press Ctrl-C to stop.');
    },
    { timeout: 150_000, interval: 250, message: 'the npm start banner' },
  );
  return { child, output: () => text };
}

/** One process of a tree, as /proc shows it. */
export interface ProcessInfo {
  pid: number;
  ppid: number;
  pgid: number;
  /** Its command line, arguments joined with spaces. */
  command: string;
}

function processInfo(pid: number): (ProcessInfo & { zombie: boolean }) | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // `pid (comm) state ppid pgrp …`: comm may hold spaces and parentheses, so split after the last ')'.
    const [state, ppid, pgid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const command = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
    return { pid, ppid: Number(ppid), pgid: Number(pgid), command, zombie: state === 'Z' };
  } catch {
    return undefined;
  }
}

/** `pid` and every process descended from it now (children, theirs, …), from /proc (Linux). */
export function processTree(pid: number): ProcessInfo[] {
  const all = readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .map((name) => processInfo(Number(name)))
    .filter((p): p is ProcessInfo & { zombie: boolean } => p !== undefined && !p.zombie);
  const tree: ProcessInfo[] = [];
  const walk = (parent: number) => {
    for (const p of all.filter((q) => q.ppid === parent)) {
      tree.push(p);
      walk(p.pid);
    }
  };
  const self = all.find((p) => p.pid === pid);
  if (self) tree.push(self);
  walk(pid);
  return tree;
}

/** Of `processes`, those still running (a zombie waiting for its parent to reap it has ended). */
export function stillRunning(processes: readonly ProcessInfo[]): ProcessInfo[] {
  return processes.filter((p) => {
    const now = processInfo(p.pid);
    // The same process, not a new one given its pid.
    return now !== undefined && !now.zombie && now.command === p.command;
  });
}

/** Every process of the platform (the launcher and all it started) killed at once: what a crash does. */
export function killTree(pid: number): void {
  for (const p of processTree(pid)) {
    try {
      process.kill(p.pid, 'SIGKILL');
    } catch {
      // Gone already.
    }
  }
}
