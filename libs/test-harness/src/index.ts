export { type TestChain, testChain } from './chain';
export { type EventuallyOptions, eventually } from './eventually';
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
export { connectRedis, testRedisUrl, uniqueRedisPrefix } from './redis';
