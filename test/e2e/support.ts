import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { freePort } from '@parametric/local-process';
import { eventually } from '@parametric/test-harness';

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

/**
 * Free ports for every listener of the platform, and an environment that uses them and starts
 * its own MongoDB, Redis and chain (the test run's are not inherited), plus `extra`; a variable
 * in `unset` is left out.
 */
export async function platformEnv(
  extra: NodeJS.ProcessEnv = {},
  unset: readonly string[] = [],
): Promise<{ env: NodeJS.ProcessEnv; ports: Record<PortName, number> }> {
  const ports = Object.fromEntries(
    await Promise.all(PORT_NAMES.map(async (n) => [n, await freePort()] as const)),
  ) as Record<PortName, number>;
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

export interface Running {
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
  options: { args?: string[]; detached?: boolean } = {},
): Promise<Running> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/start.ts', ...(options.args ?? [])], {
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
