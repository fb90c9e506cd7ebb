import { type LocalChain, startLocalChain } from '@parametric/local-chain';
import { eventually } from '@parametric/test-harness';
import { type ChainError, createRegistryClient, localDevPrivateKey, type RegistryClient } from '../src';
import { startRpcProxy } from './rpc-proxy';

/** A JSON-RPC endpoint that accepts requests and never answers (a proxy that hangs everything). */
async function startSilentServer() {
  const proxy = await startRpcProxy('http://127.0.0.1:9'); // never contacted
  proxy.hang = () => true;
  return { url: proxy.url, requests: () => proxy.requests, close: () => proxy.close() };
}

const codeOf = (p: Promise<unknown>) =>
  p.then(
    () => 'ok',
    (e: ChainError) => e.code,
  );

describe('circuit breaker', () => {
  const cleanup: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const fn of cleanup.splice(0).reverse()) await fn();
  });

  it('opens after chain failures, fails fast without a network call, then half-opens and closes again', async () => {
    const first: LocalChain = await startLocalChain({});
    cleanup.push(() => first.stop());
    const proxy = await startRpcProxy(first.rpcUrl);
    cleanup.push(() => proxy.close());
    const client: RegistryClient = createRegistryClient({
      rpcUrl: proxy.url,
      registryAddress: first.registryAddress,
      privateKey: first.ownerPrivateKey,
      pollingIntervalMs: 50,
      breaker: { resetTimeoutMs: 300, errorThresholdPercentage: 50, volumeThreshold: 3 },
    });
    cleanup.push(() => client.close());

    await first.stop(); // the chain goes away

    const codes: string[] = [];
    while (client.breakerState() === 'closed' && codes.length < 10) {
      codes.push(await codeOf(client.registerPolicy(`pol_down_${codes.length}`, {})));
    }
    expect(codes.length).toBeGreaterThanOrEqual(3); // volumeThreshold
    expect(new Set(codes)).toEqual(new Set(['CHAIN_UNAVAILABLE']));
    expect(client.breakerState()).toBe('open');

    const seen = proxy.requests;
    expect(seen).toBeGreaterThanOrEqual(codes.length); // the failures did reach the network
    for (let i = 0; i < 3; i++) {
      expect(await codeOf(client.registerPolicy('pol_while_open', {}))).toBe('BREAKER_OPEN');
    }
    expect(proxy.requests).toBe(seen); // failing fast: not one request

    // The chain comes back (a fresh anvil: the same deployer and nonce give the same address).
    const second = await startLocalChain({});
    cleanup.push(() => second.stop());
    expect(second.registryAddress).toBe(first.registryAddress);
    proxy.upstream = second.rpcUrl;

    // Waiting out resetTimeoutMs (300 ms) is the behaviour under test; polled, not slept.
    await eventually(() => expect(client.breakerState()).not.toBe('open'), { interval: 20 });
    expect(client.breakerState()).toBe('half-open');
    const result = await client.registerPolicy('pol_after_recovery', { ok: true });
    expect(result.onChainPolicyId).toBe('1');
    expect(client.breakerState()).toBe('closed');
    expect(proxy.requests).toBeGreaterThan(seen);
  });

  it('times out against a JSON-RPC server that never answers, and timeouts open the breaker', async () => {
    const silent = await startSilentServer();
    cleanup.push(() => silent.close());
    const client = createRegistryClient({
      rpcUrl: silent.url,
      registryAddress: '0x5fbdb2315678afecb367f032d93f642f64180aa3',
      privateKey: localDevPrivateKey(0),
      timeoutMs: 200,
      breaker: { resetTimeoutMs: 60_000, volumeThreshold: 3 },
    });
    cleanup.push(() => client.close());

    const codes: string[] = [];
    while (client.breakerState() === 'closed' && codes.length < 10) {
      codes.push(await codeOf(client.registerPolicy(`pol_slow_${codes.length}`, {})));
    }
    expect(codes.length).toBeGreaterThanOrEqual(3);
    expect(new Set(codes)).toEqual(new Set(['CHAIN_TIMEOUT']));
    expect(silent.requests()).toBeGreaterThanOrEqual(codes.length);
    expect(await codeOf(client.registerPolicy('pol_slow_open', {}))).toBe('BREAKER_OPEN');
  });

  it('fails with CHAIN_UNAVAILABLE after close()', async () => {
    const silent = await startSilentServer();
    cleanup.push(() => silent.close());
    const client = createRegistryClient({
      rpcUrl: silent.url,
      registryAddress: '0x5fbdb2315678afecb367f032d93f642f64180aa3',
      privateKey: localDevPrivateKey(0),
    });
    await client.close();
    expect(await codeOf(client.registerPolicy('pol_closed', {}))).toBe('CHAIN_UNAVAILABLE');
    expect(silent.requests()).toBe(0);
  });
});
