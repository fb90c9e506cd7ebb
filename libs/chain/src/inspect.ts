import {
  BaseError,
  ContractFunctionRevertedError,
  ContractFunctionZeroDataError,
  type Hex,
  isAddressEqual,
  type PublicClient,
} from 'viem';
import { policyRegistryAbi } from './generated/policy-registry';

/** What an address holds, for an account that means to register policies there. */
export type RegistryCheck = 'ok' | 'no-contract' | 'not-a-registry' | 'other-owner';

/**
 * Whether `address` holds a PolicyRegistry owned by `account` (`owner` is set when there is a
 * registry). Errors reaching the chain are thrown as viem raised them.
 */
export async function inspectRegistry(
  reader: Pick<PublicClient, 'getCode' | 'readContract'>,
  address: Hex,
  account: Hex,
): Promise<{ found: RegistryCheck; owner?: Hex }> {
  const code = await reader.getCode({ address });
  if (!code || code === '0x') return { found: 'no-contract' };
  let owner: Hex;
  try {
    owner = await reader.readContract({ address, abi: policyRegistryAbi, functionName: 'owner' });
  } catch (err) {
    // Some other contract: it has no owner() answering like ours.
    const notOurs =
      err instanceof BaseError &&
      err.walk(
        (e) => e instanceof ContractFunctionRevertedError || e instanceof ContractFunctionZeroDataError,
      );
    if (notOurs) return { found: 'not-a-registry' };
    throw err;
  }
  return { found: isAddressEqual(owner, account) ? 'ok' : 'other-owner', owner };
}
