import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { deployRegistry, localDevPrivateKey } from '@parametric/chain';
import { freePort, watchChild } from '@parametric/local-process';
import { createPublicClient, type Hex, http } from 'viem';

export interface LocalChain {
  rpcUrl: string;
  /** 0 when an external chain did not answer eth_chainId at startup. */
  chainId: number;
  registryAddress: Hex;
  ownerPrivateKey: Hex;
  kind: 'external' | 'private';
  /** Safe to log: never contains the private key. */
  description: string;
  stop(): Promise<void>;
}

/** The anvil binary shipped by the `@foundry-rs/anvil-<platform>` npm package (or ANVIL_BIN). */
export function anvilBinary(env: NodeJS.ProcessEnv = process.env): string {
  if (env.ANVIL_BIN) return env.ANVIL_BIN;
  const platform = `${process.platform === 'win32' ? 'win32' : process.platform}-${process.arch === 'x64' ? 'amd64' : process.arch}`;
  try {
    const pkg = require.resolve(`@foundry-rs/anvil-${platform}/package.json`);
    return path.join(path.dirname(pkg), 'bin', process.platform === 'win32' ? 'anvil.exe' : 'anvil');
  } catch {
    throw new Error(
      `anvil not found: npm package @foundry-rs/anvil-${platform} is not installed (set ANVIL_BIN, or CHAIN_RPC_URL to use an existing chain)`,
    );
  }
}

function redactUrl(url: string): string {
  // RPC URLs of hosted providers often carry an API key in the path or userinfo.
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname.length > 1 ? '/***' : ''}`;
  } catch {
    return '(unparseable URL)';
  }
}

export interface LocalChainOptions {
  /**
   * Keep the private chain here across restarts: anvil loads `state.json` at start and writes
   * it every second and on exit (so a `kill -9` loses at most the last second of blocks), and
   * `registry.json` records the PolicyRegistry's address so a restart reuses the contract
   * instead of deploying a second one. Without it, each start is a fresh chain.
   */
  stateDir?: string;
}

/**
 * `CHAIN_RPC_URL` when set (with `CHAIN_REGISTRY_ADDRESS` and `CHAIN_PRIVATE_KEY`; nothing is
 * started). Otherwise a private anvil on a free loopback port, killed by a watchdog if this
 * process dies, with PolicyRegistry deployed from anvil's first dev account.
 */
export async function startLocalChain(
  env: NodeJS.ProcessEnv = process.env,
  options: LocalChainOptions = {},
): Promise<LocalChain> {
  if (env.CHAIN_RPC_URL) return await externalChain(env.CHAIN_RPC_URL, env);
  const bin = anvilBinary(env);
  const { stateDir } = options;
  if (stateDir) mkdirSync(stateDir, { recursive: true });
  const persistence = stateDir ? ['--state', path.join(stateDir, 'state.json'), '--state-interval', '1'] : [];
  for (let attempt = 0; ; attempt++) {
    const port = await freePort();
    const rpcUrl = `http://127.0.0.1:${port}`;
    let child: ChildProcess | undefined;
    try {
      child = spawn(bin, ['--port', String(port), '--host', '127.0.0.1', '--silent', ...persistence], {
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      const chainId = await waitForChainId(child, rpcUrl);
      const ownerPrivateKey = localDevPrivateKey(0);
      const kept = stateDir ? await keptRegistry(rpcUrl, stateDir) : undefined;
      const registryAddress = kept ?? (await deployRegistry(rpcUrl, ownerPrivateKey));
      if (stateDir && !kept) {
        writeFileSync(path.join(stateDir, 'registry.json'), `${JSON.stringify({ registryAddress })}\n`);
      }
      const anvil = child;
      const watchdog = watchChild(anvil.pid);
      return {
        rpcUrl,
        chainId,
        registryAddress,
        ownerPrivateKey,
        kind: 'private',
        description: `private anvil (${bin}) at ${rpcUrl}, chain ${chainId}, PolicyRegistry at ${registryAddress}${stateDir ? ` (${kept ? 'kept' : 'deployed'}; state in ${stateDir})` : ''}`,
        stop: async () => {
          watchdog.release();
          await killAndWait(anvil);
        },
      };
    } catch (err) {
      if (child) await killAndWait(child);
      // Another process can take the port between our probe and anvil binding it.
      if (attempt >= 4) throw err;
    }
  }
}

/**
 * The registry an earlier run deployed on this state, when the state still holds its code (a
 * kill in the second after the deployment can lose it with the last dump: then it is deployed
 * again).
 */
async function keptRegistry(rpcUrl: string, stateDir: string): Promise<Hex | undefined> {
  let recorded: unknown;
  try {
    recorded = JSON.parse(readFileSync(path.join(stateDir, 'registry.json'), 'utf8'));
  } catch {
    return undefined;
  }
  const address = (recorded as { registryAddress?: unknown } | null)?.registryAddress;
  if (typeof address !== 'string' || !/^0x[0-9a-fA-F]{40}$/.test(address)) return undefined;
  const code = await createPublicClient({ transport: http(rpcUrl, { retryCount: 0 }) }).getCode({
    address: address as Hex,
  });
  return code && code !== '0x' ? (address as Hex) : undefined;
}

async function externalChain(rpcUrl: string, env: NodeJS.ProcessEnv): Promise<LocalChain> {
  const registryAddress = env.CHAIN_REGISTRY_ADDRESS;
  const ownerPrivateKey = env.CHAIN_PRIVATE_KEY;
  const missing = [
    !registryAddress && 'CHAIN_REGISTRY_ADDRESS',
    !ownerPrivateKey && 'CHAIN_PRIVATE_KEY',
  ].filter(Boolean);
  if (missing.length > 0 || !registryAddress || !ownerPrivateKey) {
    throw new Error(`CHAIN_RPC_URL is set, so ${missing.join(' and ')} must be set too`);
  }
  if (!/^0x[0-9a-fA-F]{40}$/.test(registryAddress)) {
    throw new Error('CHAIN_REGISTRY_ADDRESS must be a 0x-prefixed 20-byte hex address');
  }
  if (!/^0x[0-9a-fA-F]{64}$/.test(ownerPrivateKey)) {
    throw new Error('CHAIN_PRIVATE_KEY must be a 0x-prefixed 32-byte hex key');
  }
  // Best effort: a chain that is down at startup is the circuit breaker's business, not a crash.
  const chainId = (await chainIdOf(rpcUrl)) ?? 0;
  return {
    rpcUrl,
    chainId,
    registryAddress: registryAddress as Hex,
    ownerPrivateKey: ownerPrivateKey as Hex,
    kind: 'external',
    description: `external chain at CHAIN_RPC_URL (${redactUrl(rpcUrl)}), PolicyRegistry at ${registryAddress}`,
    stop: async () => {},
  };
}

async function killAndWait(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  await exited;
}

/** Polls `eth_chainId` until anvil answers (10 s), failing early if anvil exits. */
function waitForChainId(child: ChildProcess, rpcUrl: string): Promise<number> {
  let stderr = '';
  child.stderr?.on('data', (c: Buffer) => {
    stderr += c.toString();
  });
  return new Promise((resolve, reject) => {
    const deadline = Date.now() + 10_000;
    let timer: NodeJS.Timeout | undefined;
    let settled = false;
    const finish = (err: Error | null, chainId?: number) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      child.off('exit', onExit);
      child.off('error', onError);
      if (err) reject(err);
      else resolve(chainId as number);
    };
    const onExit = (code: number | null) =>
      finish(new Error(`anvil exited with ${code} before answering eth_chainId: ${stderr.trim()}`));
    const onError = (err: Error) => finish(err);
    child.once('exit', onExit);
    child.once('error', onError);
    const poll = () => {
      chainIdOf(rpcUrl).then((id) => {
        if (settled) return;
        if (id !== undefined) finish(null, id);
        else if (Date.now() > deadline) finish(new Error(`anvil did not answer at ${rpcUrl} within 10 s`));
        else timer = setTimeout(poll, 50);
      });
    };
    timer = setTimeout(poll, 20);
  });
}

async function chainIdOf(rpcUrl: string): Promise<number | undefined> {
  try {
    const res = await fetch(rpcUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }),
      signal: AbortSignal.timeout(1000),
    });
    const body = (await res.json()) as { result?: string };
    return typeof body.result === 'string' ? Number(BigInt(body.result)) : undefined;
  } catch {
    return undefined;
  }
}
