export { deployRegistry, LOCAL_DEV_MNEMONIC, localDevPrivateKey } from './deploy';
export { policyRegistryAbi, policyRegistryBytecode } from './generated/policy-registry';
export { inspectRegistry, type RegistryCheck } from './inspect';
export {
  type BreakerOptions,
  type BreakerState,
  ChainError,
  type ChainErrorCode,
  canonicalJson,
  createRegistryClient,
  type PolicyRegistration,
  policyRefOf,
  type RegistryClient,
  type RegistryClientOptions,
  termsHashOf,
} from './registry-client';
export {
  processSendLock,
  type RedisSendLockOptions,
  redisSendLock,
  type SendLock,
  SendLockTimeoutError,
} from './send-lock';
