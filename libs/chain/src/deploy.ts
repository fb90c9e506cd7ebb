import { createPublicClient, createWalletClient, type Hex, http, toHex } from 'viem';
import { mnemonicToAccount, privateKeyToAccount } from 'viem/accounts';
import { policyRegistryAbi, policyRegistryBytecode } from './generated/policy-registry';

/** anvil's default dev mnemonic: its accounts are public knowledge, never use them on a real chain. */
export const LOCAL_DEV_MNEMONIC = 'test test test test test test test test test test test junk';

/** Private key of anvil dev account `index` (0 deploys and owns the registry on a local chain). */
export function localDevPrivateKey(index = 0): Hex {
  const key = mnemonicToAccount(LOCAL_DEV_MNEMONIC, { addressIndex: index }).getHdKey().privateKey;
  if (!key) throw new Error(`cannot derive dev account ${index}`);
  return toHex(key);
}

/**
 * Deploys a fresh PolicyRegistry owned by `privateKey`'s account. A fresh anvil and the same
 * deployer always give the same address (it depends only on the deployer and its nonce).
 */
export async function deployRegistry(
  rpcUrl: string,
  privateKey: Hex,
  /** How long to wait for the deployment's receipt: a public chain's blocks take a while. */
  receiptTimeoutMs = 120_000,
): Promise<Hex> {
  const transport = http(rpcUrl, { retryCount: 0 });
  const account = privateKeyToAccount(privateKey);
  const wallet = createWalletClient({ account, transport });
  const reader = createPublicClient({ transport, pollingInterval: 50 });
  const hash = await wallet.deployContract({
    abi: policyRegistryAbi,
    bytecode: policyRegistryBytecode,
    chain: null,
  });
  const receipt = await reader.waitForTransactionReceipt({ hash, timeout: receiptTimeoutMs });
  if (receipt.status !== 'success' || !receipt.contractAddress) {
    throw new Error(`PolicyRegistry deployment failed (tx ${hash})`);
  }
  return receipt.contractAddress;
}
