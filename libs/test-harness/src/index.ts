export {
  connectDriver,
  connectMongoose,
  type DriverHandle,
  type MongooseHandle,
  testMongoBackend,
  testMongoUrl,
  uniqueDatabaseName,
} from './mongo';
