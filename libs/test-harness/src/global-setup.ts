import { startLocalMongo } from '@parametric/embedded-mongo';
import { rememberForTeardown } from './handles';

/** Jest globalSetup: one MongoDB per test run; its URL reaches every test file through the environment. */
export default async function globalSetup(): Promise<void> {
  const mongo = await startLocalMongo();
  process.env.TEST_MONGO_URL = mongo.url;
  process.env.TEST_MONGO_BACKEND = mongo.kind;
  rememberForTeardown(mongo);
  console.log(`\n[test-harness] MongoDB backend: ${mongo.description}`);
}
