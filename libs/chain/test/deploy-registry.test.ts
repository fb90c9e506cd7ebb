/**
 * scripts/deploy-registry.ts, run as ops run it (a child process through tsx) against a private
 * anvil of this file's own. startLocalChain deploys one registry from dev account 0; the script
 * sends from accounts 1 and 2, so nonces here are this file's alone.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { type LocalChain, startLocalChain } from '@parametric/local-chain';
import { freePort } from '@parametric/local-process';
import { createPublicClient, getContractAddress, type Hex, http, type PublicClient } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { localDevPrivateKey, policyRegistryAbi } from '../src';

const repoRoot = path.resolve(__dirname, '../../..');
const script = path.join(__dirname, '../scripts/deploy-registry.ts');

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the script with only PATH and `env` (nothing from this process's CHAIN_* settings). */
function runScript(env: Record<string, string>): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', script], {
      cwd: repoRoot,
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 45_000);
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

let chain: LocalChain;
let reader: PublicClient;
const deployerKey = localDevPrivateKey(1);
const deployer = privateKeyToAccount(deployerKey).address;

const nonceOf = (address: Hex) => reader.getTransactionCount({ address, blockTag: 'pending' });
const hasCode = async (address: Hex) => ((await reader.getCode({ address })) ?? '0x') !== '0x';

beforeAll(async () => {
  // A private anvil even when the run uses an external chain (CHAIN_RPC_URL).
  chain = await startLocalChain({ ...process.env, CHAIN_RPC_URL: '' });
  reader = createPublicClient({ transport: http(chain.rpcUrl), pollingInterval: 50 });
});

afterAll(async () => {
  await chain?.stop();
});

describe('deploy-registry script', () => {
  let deployed: Hex;

  it('deploys a registry owned by the key and prints its address, which holds code', async () => {
    const run = await runScript({ CHAIN_RPC_URL: chain.rpcUrl, CHAIN_PRIVATE_KEY: deployerKey });
    expect(run).toMatchObject({ code: 0 });
    expect(run.stdout).toMatch(/^0x[0-9a-fA-F]{40}\n$/);
    deployed = run.stdout.trim() as Hex;
    expect(await hasCode(deployed)).toBe(true);
    const owner = await reader.readContract({
      address: deployed,
      abi: policyRegistryAbi,
      functionName: 'owner',
    });
    expect(owner).toBe(deployer);
    expect(run.stderr).toMatch(/CHAIN_REGISTRY_FROM_BLOCK=\d+/);
    expect(`${run.stdout}${run.stderr}`).not.toContain(deployerKey.slice(2));
  }, 60_000);

  it('deploys nothing when the registry is already at CHAIN_REGISTRY_ADDRESS', async () => {
    const nonce = await nonceOf(deployer);
    const run = await runScript({
      CHAIN_RPC_URL: chain.rpcUrl,
      CHAIN_PRIVATE_KEY: deployerKey,
      CHAIN_REGISTRY_ADDRESS: deployed,
    });
    expect(run).toMatchObject({ code: 0, stdout: `${deployed}\n` });
    expect(run.stderr).toMatch(/already deployed/);
    expect(await nonceOf(deployer)).toBe(nonce);
  }, 60_000);

  it('deploys at CHAIN_REGISTRY_ADDRESS when the account’s next deployment lands there', async () => {
    // As docker-compose does on a fresh anvil: a new account, its nonce 0, the address known ahead.
    const freshKey = localDevPrivateKey(2);
    const fresh = privateKeyToAccount(freshKey).address;
    const expected = getContractAddress({ from: fresh, nonce: BigInt(await nonceOf(fresh)) });
    const run = await runScript({
      CHAIN_RPC_URL: chain.rpcUrl,
      CHAIN_PRIVATE_KEY: freshKey,
      CHAIN_REGISTRY_ADDRESS: expected,
    });
    expect(run).toMatchObject({ code: 0, stdout: `${expected}\n` });
    expect(await hasCode(expected)).toBe(true);
  }, 60_000);

  it('fails with exit code 1, sending nothing, when the deployment would land elsewhere', async () => {
    const nonce = await nonceOf(deployer);
    const wrong = `0x${'12'.repeat(20)}` as Hex;
    const run = await runScript({
      CHAIN_RPC_URL: chain.rpcUrl,
      CHAIN_PRIVATE_KEY: deployerKey,
      CHAIN_REGISTRY_ADDRESS: wrong,
    });
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain(wrong);
    expect(run.stderr).toMatch(/would create 0x[0-9a-fA-F]{40}; nothing sent/);
    expect(await nonceOf(deployer)).toBe(nonce);
  }, 60_000);

  it('fails when the registry at CHAIN_REGISTRY_ADDRESS has another owner', async () => {
    // The harness chain's own registry belongs to account 0, not to the key given here.
    const run = await runScript({
      CHAIN_RPC_URL: chain.rpcUrl,
      CHAIN_PRIVATE_KEY: deployerKey,
      CHAIN_REGISTRY_ADDRESS: chain.registryAddress,
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/is owned by 0x[0-9a-fA-F]{40}, not by CHAIN_PRIVATE_KEY's account/);
  }, 60_000);

  it('refuses a malformed key without echoing it', async () => {
    const badKey = `0x${'c0ffee'.repeat(10)}`; // 60 hex digits, not 64
    const run = await runScript({ CHAIN_RPC_URL: chain.rpcUrl, CHAIN_PRIVATE_KEY: badKey });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/CHAIN_PRIVATE_KEY must be a 0x-prefixed 32-byte hex key/);
    expect(`${run.stdout}${run.stderr}`).not.toContain('c0ffeec0ffee');
  }, 60_000);

  it('refuses a public anvil key in production without echoing it', async () => {
    const run = await runScript({
      NODE_ENV: 'production',
      CHAIN_RPC_URL: chain.rpcUrl,
      CHAIN_PRIVATE_KEY: deployerKey,
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/public anvil development key/);
    expect(`${run.stdout}${run.stderr}`).not.toContain(deployerKey.slice(2));
  }, 60_000);

  it('gives up on an RPC that does not answer, without printing the URL’s secret path', async () => {
    const rpcUrl = `http://127.0.0.1:${await freePort()}/v3/secret-api-key-123`;
    const run = await runScript({
      CHAIN_RPC_URL: rpcUrl,
      CHAIN_PRIVATE_KEY: deployerKey,
      CHAIN_WAIT_MS: '1000',
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/did not answer eth_chainId within 1000 ms/);
    expect(`${run.stdout}${run.stderr}`).not.toContain('secret-api-key');
  }, 60_000);
});
