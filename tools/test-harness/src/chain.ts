import { deployRegistry, localDevPrivateKey } from '@parametric/chain';
import type { Hex } from 'viem';
import { publishedServer } from './servers';

export interface TestChain {
  rpcUrl: string;
  registryAddress: Hex;
  privateKey: Hex;
}

/**
 * A PolicyRegistry of this test file's own on the run's chain. Each jest worker sends from its
 * own anvil dev account (files in one worker run one after another), so parallel files never
 * race each other for an account's nonce. Against an external chain (`CHAIN_RPC_URL`) the
 * configured registry and key are shared: run such a suite with `--maxWorkers=1`.
 */
export async function testChain(): Promise<TestChain> {
  const rpcUrl = publishedServer('TEST_CHAIN_RPC_URL', 'the chain');
  if (process.env.TEST_CHAIN_KIND === 'external') {
    return {
      rpcUrl,
      registryAddress: process.env.TEST_CHAIN_REGISTRY_ADDRESS as Hex,
      privateKey: process.env.TEST_CHAIN_PRIVATE_KEY as Hex,
    };
  }
  // Account 0 deployed the run's shared registry; workers use 1..9 (anvil funds ten).
  const worker = Number(process.env.JEST_WORKER_ID ?? '1');
  const privateKey = localDevPrivateKey(1 + ((worker - 1) % 9));
  return { rpcUrl, registryAddress: await deployRegistry(rpcUrl, privateKey), privateKey };
}
