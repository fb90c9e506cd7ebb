import { type LocalChain, startLocalChain } from '@parametric/local-chain';
import { createPublicClient, createWalletClient, type Hex, http, type PublicClient } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import {
  ChainError,
  createRegistryClient,
  localDevPrivateKey,
  policyRefOf,
  policyRegistryAbi,
  type RegistryClient,
  termsHashOf,
} from '../src';

let chain: LocalChain;
let client: RegistryClient;
let reader: PublicClient;

const terms = {
  product: 'rainfall-deficit',
  region: 'KE-NKU',
  triggerMm: 40,
  payout: { amount: 500, ccy: 'KES' },
};

beforeAll(async () => {
  chain = await startLocalChain({});
  client = createRegistryClient({
    rpcUrl: chain.rpcUrl,
    registryAddress: chain.registryAddress,
    privateKey: chain.ownerPrivateKey,
    pollingIntervalMs: 50,
  });
  reader = createPublicClient({ transport: http(chain.rpcUrl), pollingInterval: 50 });
});

afterAll(async () => {
  await client?.close();
  await chain?.stop();
});

const idOf = (policyId: string) =>
  reader.readContract({
    address: chain.registryAddress,
    abi: policyRegistryAbi,
    functionName: 'idOf',
    args: [policyRefOf(policyId)],
  });
const lastId = () =>
  reader.readContract({ address: chain.registryAddress, abi: policyRegistryAbi, functionName: 'lastId' });

describe('startLocalChain', () => {
  it('starts a private anvil with the registry deployed by the first dev account', async () => {
    expect(chain.kind).toBe('private');
    expect(chain.rpcUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(chain.chainId).toBe(await reader.getChainId());
    const owner = await reader.readContract({
      address: chain.registryAddress,
      abi: policyRegistryAbi,
      functionName: 'owner',
    });
    expect(owner).toBe(privateKeyToAccount(chain.ownerPrivateKey).address);
    expect(chain.description).not.toContain(chain.ownerPrivateKey.slice(2));
  });

  it('uses CHAIN_RPC_URL as given and starts nothing', async () => {
    const external = await startLocalChain({
      CHAIN_RPC_URL: chain.rpcUrl,
      CHAIN_REGISTRY_ADDRESS: chain.registryAddress,
      CHAIN_PRIVATE_KEY: chain.ownerPrivateKey,
    });
    expect(external).toMatchObject({
      kind: 'external',
      rpcUrl: chain.rpcUrl,
      chainId: chain.chainId,
      registryAddress: chain.registryAddress,
    });
    await external.stop();
    expect(await reader.getChainId()).toBe(chain.chainId); // stop() left the chain alone
  });

  it('requires CHAIN_REGISTRY_ADDRESS and CHAIN_PRIVATE_KEY with CHAIN_RPC_URL', async () => {
    await expect(startLocalChain({ CHAIN_RPC_URL: chain.rpcUrl })).rejects.toThrow(
      /CHAIN_REGISTRY_ADDRESS and CHAIN_PRIVATE_KEY/,
    );
  });
});

describe('registerPolicy', () => {
  it('registers a policy that the chain confirms', async () => {
    const { onChainPolicyId, txHash } = await client.registerPolicy('pol_confirm', terms);

    const receipt = await reader.getTransactionReceipt({ hash: txHash as Hex });
    expect(receipt.status).toBe('success');
    expect(receipt.to?.toLowerCase()).toBe(chain.registryAddress.toLowerCase());
    expect(await idOf('pol_confirm')).toBe(BigInt(onChainPolicyId));
    expect(
      await reader.readContract({
        address: chain.registryAddress,
        abi: policyRegistryAbi,
        functionName: 'termsHashOf',
        args: [BigInt(onChainPolicyId)],
      }),
    ).toBe(termsHashOf(terms));
  });

  it('gives increasing ids', async () => {
    const first = await client.registerPolicy('pol_seq_1', terms);
    const second = await client.registerPolicy('pol_seq_2', terms);
    expect(BigInt(first.onChainPolicyId)).toBeGreaterThan(0n);
    expect(BigInt(second.onChainPolicyId)).toBe(BigInt(first.onChainPolicyId) + 1n);
    expect(second.txHash).not.toBe(first.txHash);
  });

  it('is idempotent: the same policy twice gives the same id and tx hash and no second id', async () => {
    const first = await client.registerPolicy('pol_twice', terms);
    const countAfterFirst = await lastId();
    // Same terms with keys in another order: the canonical JSON makes no difference.
    const again = await client.registerPolicy('pol_twice', {
      payout: { ccy: 'KES', amount: 500 },
      triggerMm: 40,
      region: 'KE-NKU',
      product: 'rainfall-deficit',
    });
    expect(again).toEqual(first);
    expect(await lastId()).toBe(countAfterFirst);
  });

  it('returns the original registration when another client registered the policy first', async () => {
    const original = await client.registerPolicy('pol_other_client', terms);
    const second = createRegistryClient({
      rpcUrl: chain.rpcUrl,
      registryAddress: chain.registryAddress,
      privateKey: chain.ownerPrivateKey,
      pollingIntervalMs: 50,
    });
    try {
      const before = await lastId();
      expect(await second.registerPolicy('pol_other_client', terms)).toEqual(original);
      expect(await lastId()).toBe(before);
    } finally {
      await second.close();
    }
  });

  it('registers 10 distinct policies concurrently with distinct ids', async () => {
    const ids = Array.from({ length: 10 }, (_, i) => `pol_concurrent_${i}`);
    const before = await lastId();
    const results = await Promise.all(ids.map((id) => client.registerPolicy(id, { ...terms, id })));

    expect(new Set(results.map((r) => r.onChainPolicyId)).size).toBe(10);
    expect(new Set(results.map((r) => r.txHash)).size).toBe(10);
    expect(await lastId()).toBe(before + 10n);
    for (const [i, id] of ids.entries()) {
      expect(await idOf(id)).toBe(BigInt(results[i]?.onChainPolicyId ?? '0'));
    }
  });

  it('lets only the owner register', async () => {
    const strangerKey = localDevPrivateKey(1);
    const stranger = createRegistryClient({
      rpcUrl: chain.rpcUrl,
      registryAddress: chain.registryAddress,
      privateKey: strangerKey,
      pollingIntervalMs: 50,
    });
    const before = await lastId();
    try {
      const err = await stranger.registerPolicy('pol_stranger', terms).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ChainError);
      expect(err).toMatchObject({ code: 'CHAIN_REVERTED', revertReason: 'NotOwner' });
      expect((err as Error).message).not.toContain(strangerKey.slice(2));
      expect(stranger.breakerState()).toBe('closed'); // a contract rejection is not a chain failure
    } finally {
      await stranger.close();
    }

    // The contract itself refuses too: a transaction sent without simulation reverts on chain.
    const wallet = createWalletClient({
      account: privateKeyToAccount(strangerKey),
      transport: http(chain.rpcUrl),
    });
    const hash = await wallet.writeContract({
      address: chain.registryAddress,
      abi: policyRegistryAbi,
      functionName: 'register',
      args: [policyRefOf('pol_stranger_raw'), termsHashOf(terms)],
      gas: 200_000n,
      chain: null,
    });
    const receipt = await reader.waitForTransactionReceipt({ hash });
    expect(receipt.status).toBe('reverted');
    expect(await lastId()).toBe(before);
    expect(await idOf('pol_stranger_raw')).toBe(0n);
  });
});

describe('checkRegistry', () => {
  const clientFor = (registryAddress: Hex, privateKey: Hex = chain.ownerPrivateKey, rpcUrl = chain.rpcUrl) =>
    createRegistryClient({ rpcUrl, registryAddress, privateKey, timeoutMs: 1000 });

  it('tells ops at start-up whether activations can work: ok, nothing there, not ours, or another owner', async () => {
    // A contract that reverts every call: code at the address, but no registry.
    const wallet = createWalletClient({
      account: privateKeyToAccount(localDevPrivateKey(3)),
      transport: http(chain.rpcUrl),
    });
    const hash = await wallet.deployContract({
      abi: [],
      bytecode: '0x6460006000fd6000526005601bf3',
      chain: null,
    });
    const other = (await reader.waitForTransactionReceipt({ hash })).contractAddress as Hex;

    const cases: [Hex, Hex, string][] = [
      [chain.registryAddress, chain.ownerPrivateKey, 'ok'],
      ['0x00000000000000000000000000000000000000aa', chain.ownerPrivateKey, 'no-contract'],
      [other, chain.ownerPrivateKey, 'not-a-registry'],
      [chain.registryAddress, localDevPrivateKey(4), 'other-owner'],
    ];
    for (const [address, key, expected] of cases) {
      const c = clientFor(address, key);
      try {
        expect(await c.checkRegistry()).toBe(expected);
      } finally {
        await c.close();
      }
    }
  });

  it('throws a ChainError when the chain cannot be asked', async () => {
    const c = clientFor(chain.registryAddress, chain.ownerPrivateKey, 'http://127.0.0.1:9');
    try {
      await expect(c.checkRegistry()).rejects.toBeInstanceOf(ChainError);
    } finally {
      await c.close();
    }
  });
});
