export { type TestChain, testChain } from './chain';
export { checkAgainstDocument, takeContractViolations } from './contract-check';
export { type EventuallyOptions, eventually } from './eventually';
export { type FreezableProxy, freezableProxy } from './freezable-proxy';
export { captureLogs } from './logs';
export {
  connectDriver,
  connectMongoose,
  type DriverHandle,
  type MongooseHandle,
  testMongoBackend,
  testMongoUrl,
  uniqueDatabaseName,
} from './mongo';
export { outcome } from './outcome';
export { type RawAnswer, rawPost } from './raw-http';
export { connectRedis, testRedisUrl, uniqueRedisPrefix } from './redis';
