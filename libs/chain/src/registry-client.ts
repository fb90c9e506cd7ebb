import CircuitBreaker from 'opossum';
import {
  BaseError,
  ContractFunctionRevertedError,
  createPublicClient,
  createWalletClient,
  decodeEventLog,
  type Hex,
  http,
  keccak256,
  stringToBytes,
  TimeoutError,
  WaitForTransactionReceiptTimeoutError,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { policyRegistryAbi } from './generated/policy-registry';
import { inspectRegistry, type RegistryCheck } from './inspect';
import { processSendLock, type SendLock, SendLockTimeoutError } from './send-lock';

export type ChainErrorCode = 'CHAIN_TIMEOUT' | 'CHAIN_UNAVAILABLE' | 'CHAIN_REVERTED' | 'BREAKER_OPEN';

/** Every failure of the registry client. `message` is safe to show: no keys, no RPC URLs. */
export class ChainError extends Error {
  override readonly name = 'ChainError';
  constructor(
    readonly code: ChainErrorCode,
    message: string,
    /** For CHAIN_REVERTED: the contract's custom error name (e.g. `NotOwner`), when known. */
    readonly revertReason?: string,
    /** True when the contract rejected a simulated call: the chain itself answered fine. */
    readonly rejectedBeforeSend = false,
    /** For `AlreadyRegistered`: the existing on-chain id. */
    readonly existingId?: bigint,
  ) {
    super(message);
  }
}

export interface BreakerOptions {
  /** How long the breaker stays open before letting one trial call through (half-open). */
  resetTimeoutMs?: number;
  /** Failure percentage, over the rolling 10 s window, at which the breaker opens. */
  errorThresholdPercentage?: number;
  /** Minimum calls in the window before the breaker may open. */
  volumeThreshold?: number;
}

export interface RegistryClientOptions {
  rpcUrl: string;
  registryAddress: Hex;
  privateKey: Hex;
  /** Limit for each chain call (one RPC, one send, or one receipt wait). */
  timeoutMs?: number;
  breaker?: BreakerOptions;
  /** How often to poll for a receipt. */
  pollingIntervalMs?: number;
  /** Block to search from for the original registration's event (the registry's deployment block). */
  fromBlock?: bigint;
  /**
   * Serializes sends from the owner's account. The default covers this process only; several
   * processes sending from one account need one shared across them (`redisSendLock`).
   */
  sendLock?: SendLock;
  /**
   * Called once with the client's opossum breaker when it is created, e.g. to observe its
   * state changes (`metrics.observeBreaker`).
   */
  onBreaker?: (breaker: CircuitBreaker) => void;
}

export interface PolicyRegistration {
  onChainPolicyId: string;
  txHash: string;
}

export type BreakerState = 'closed' | 'open' | 'half-open';

export interface RegistryClient {
  registerPolicy(policyId: string, terms: unknown): Promise<PolicyRegistration>;
  /**
   * Whether the configured address holds a registry this key may register in: anything but
   * `ok` means every registration will fail. Throws a
   * ChainError when the chain cannot be asked. Not through the breaker: a start-up check.
   */
  checkRegistry(): Promise<RegistryCheck>;
  breakerState(): BreakerState;
  /**
   * Shuts the breaker down (no timers left) and waits for chain calls still running (at most
   * about `timeoutMs`); later calls fail with CHAIN_UNAVAILABLE.
   */
  close(): Promise<void>;
}

/** JSON with object keys sorted (recursively), so equal terms always hash the same. */
export function canonicalJson(value: unknown): string {
  const json = JSON.stringify(value, (_key, v: unknown) => {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return v;
    const sorted: Record<string, unknown> = {};
    for (const k of Object.keys(v).sort()) sorted[k] = (v as Record<string, unknown>)[k];
    return sorted;
  });
  if (json === undefined) throw new TypeError('terms must be JSON-serialisable');
  return json;
}

/** keccak256 of the policy id string: the contract's `policyRef`. */
export function policyRefOf(policyId: string): Hex {
  return keccak256(stringToBytes(policyId));
}

/** keccak256 of the canonical JSON of the terms: the contract's `termsHash`. */
export function termsHashOf(terms: unknown): Hex {
  return keccak256(stringToBytes(canonicalJson(terms)));
}

/** Turns anything a chain call threw into a ChainError with a message safe to show. */
function toChainError(err: unknown): ChainError {
  if (err instanceof ChainError) return err;
  const code = (err as { code?: unknown } | null)?.code;
  if (code === 'EOPENBREAKER') {
    return new ChainError('BREAKER_OPEN', 'chain circuit breaker is open: failing fast, try again later');
  }
  if (code === 'ETIMEDOUT') return new ChainError('CHAIN_TIMEOUT', 'chain call timed out');
  // Another process kept the account's sends busy that long: the chain is answering slowly.
  if (err instanceof SendLockTimeoutError) return new ChainError('CHAIN_TIMEOUT', err.message);
  if (code === 'ESHUTDOWN') return new ChainError('CHAIN_UNAVAILABLE', 'registry client is closed');
  if (err instanceof BaseError) {
    const revert = err.walk((e) => e instanceof ContractFunctionRevertedError);
    if (revert instanceof ContractFunctionRevertedError) {
      const reason = revert.data?.errorName ?? revert.reason ?? 'unknown reason';
      const first = revert.data?.args?.[0];
      return new ChainError(
        'CHAIN_REVERTED',
        `PolicyRegistry rejected the call: ${reason}`,
        reason,
        true,
        reason === 'AlreadyRegistered' && typeof first === 'bigint' ? first : undefined,
      );
    }
    if (err.walk((e) => e instanceof TimeoutError || e instanceof WaitForTransactionReceiptTimeoutError)) {
      return new ChainError('CHAIN_TIMEOUT', 'chain call timed out');
    }
    // shortMessage is viem's one-line summary; it carries neither the URL nor request bodies.
    return new ChainError('CHAIN_UNAVAILABLE', `chain RPC unavailable: ${err.shortMessage}`);
  }
  return new ChainError('CHAIN_UNAVAILABLE', 'chain RPC unavailable');
}

export function createRegistryClient(options: RegistryClientOptions): RegistryClient {
  const { rpcUrl, registryAddress, timeoutMs = 10_000, pollingIntervalMs = 250, fromBlock = 0n } = options;
  const {
    resetTimeoutMs = 30_000,
    errorThresholdPercentage = 50,
    volumeThreshold = 3,
  } = options.breaker ?? {};

  let account: ReturnType<typeof privateKeyToAccount>;
  try {
    account = privateKeyToAccount(options.privateKey);
  } catch {
    throw new Error('privateKey must be a 0x-prefixed 32-byte hex key');
  }
  // No transport retries: the breaker decides what a failure means; viem's own timeout
  // matches the breaker's so an abandoned request does not outlive it by much.
  const transport = http(rpcUrl, { timeout: timeoutMs, retryCount: 0 });
  const reader = createPublicClient({ transport, pollingInterval: pollingIntervalMs });
  const wallet = createWalletClient({ account, transport });

  const breaker = new CircuitBreaker((step: () => Promise<unknown>) => step(), {
    timeout: timeoutMs,
    resetTimeout: resetTimeoutMs,
    errorThresholdPercentage,
    volumeThreshold,
    // A contract rejecting a simulated call means the chain answered: not a chain failure.
    errorFilter: (err: unknown) => err instanceof ChainError && err.rejectedBeforeSend,
  });
  options.onBreaker?.(breaker);

  const unsettled = new Set<Promise<unknown>>();

  /** One chain call through the breaker; every error comes out as a ChainError. */
  async function call<T>(step: () => Promise<T>): Promise<T> {
    try {
      return (await breaker.fire(async () => {
        // A step the breaker timed out keeps running until viem's own timeout ends it;
        // close() waits for such abandoned steps so nothing outlives the client.
        const running = step();
        unsettled.add(running);
        try {
          return await running;
        } catch (err) {
          throw toChainError(err);
        } finally {
          unsettled.delete(running);
        }
      })) as T;
    } catch (err) {
      throw toChainError(err);
    }
  }

  const sendLock = options.sendLock ?? processSendLock();
  const inFlight = new Map<string, Promise<PolicyRegistration>>();

  const idOf = (policyRef: Hex) =>
    call(() =>
      reader.readContract({
        address: registryAddress,
        abi: policyRegistryAbi,
        functionName: 'idOf',
        args: [policyRef],
      }),
    );

  async function existingRegistration(policyRef: Hex, id: bigint): Promise<PolicyRegistration> {
    const logs = await call(() =>
      reader.getContractEvents({
        address: registryAddress,
        abi: policyRegistryAbi,
        eventName: 'PolicyRegistered',
        args: { id, policyRef },
        fromBlock,
        toBlock: 'latest',
      }),
    );
    const txHash = logs[0]?.transactionHash;
    if (!txHash) {
      throw new ChainError(
        'CHAIN_UNAVAILABLE',
        `policy is registered as id ${id} but its PolicyRegistered event was not found`,
      );
    }
    return { onChainPolicyId: id.toString(), txHash };
  }

  async function register(policyId: string, terms: unknown): Promise<PolicyRegistration> {
    const policyRef = policyRefOf(policyId);
    const termsHash = termsHashOf(terms);
    const existing = await idOf(policyRef);
    if (existing > 0n) return existingRegistration(policyRef, existing);

    let hash: Hex;
    try {
      // The lock is held inside the breaker call until the send settles, so the next send
      // reads a nonce that already counts this one (time queued counts against the timeout).
      hash = await call(() =>
        sendLock(async () => {
          const { request } = await reader.simulateContract({
            account,
            address: registryAddress,
            abi: policyRegistryAbi,
            functionName: 'register',
            args: [policyRef, termsHash],
          });
          return wallet.writeContract({ ...request, chain: null });
        }),
      );
    } catch (err) {
      if (err instanceof ChainError && err.existingId !== undefined) {
        return existingRegistration(policyRef, err.existingId);
      }
      throw err;
    }

    try {
      const receipt = await call(async () => {
        const r = await reader.waitForTransactionReceipt({ hash, timeout: timeoutMs });
        if (r.status !== 'success') {
          throw new ChainError('CHAIN_REVERTED', 'PolicyRegistry transaction reverted on chain');
        }
        return r;
      });
      for (const log of receipt.logs) {
        if (log.address.toLowerCase() !== registryAddress.toLowerCase()) continue;
        try {
          const event = decodeEventLog({ abi: policyRegistryAbi, data: log.data, topics: log.topics });
          if (event.eventName === 'PolicyRegistered' && event.args.policyRef === policyRef) {
            return { onChainPolicyId: event.args.id.toString(), txHash: hash };
          }
        } catch {
          // not one of ours
        }
      }
      throw new ChainError('CHAIN_REVERTED', 'transaction succeeded but emitted no PolicyRegistered event');
    } catch (err) {
      // Another sender (another process) may have registered the same policy first.
      if (err instanceof ChainError && err.code === 'CHAIN_REVERTED') {
        const id = await idOf(policyRef);
        if (id > 0n) return existingRegistration(policyRef, id);
      }
      throw err;
    }
  }

  return {
    registerPolicy(policyId, terms) {
      // Concurrent calls for the same policy share one registration.
      const pending = inFlight.get(policyId);
      if (pending) return pending;
      const run = register(policyId, terms).finally(() => inFlight.delete(policyId));
      inFlight.set(policyId, run);
      return run;
    },
    async checkRegistry() {
      try {
        return (await inspectRegistry(reader, registryAddress, account.address)).found;
      } catch (err) {
        throw toChainError(err);
      }
    },
    breakerState() {
      if (breaker.opened) return 'open';
      if (breaker.halfOpen) return 'half-open';
      return 'closed';
    },
    async close() {
      breaker.shutdown();
      await Promise.allSettled([...unsettled]);
    },
  };
}
