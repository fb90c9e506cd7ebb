import { createLogger } from '@parametric/logger';
import { testMongoUrl, uniqueDatabaseName } from '@parametric/test-harness';
import mongoose from 'mongoose';
import { startTestGateway, type TestGateway } from '../../gateway/test/support';
import { policyConfigSchema } from '../src/config';
import { type RunningPolicy, startPolicy } from '../src/service';

const SIGNING_SECRET = 'test-internal-signing-secret-0123';

export interface PolicyPlatform {
  gateway: TestGateway;
  policy: RunningPolicy;
  db: mongoose.Connection;
  stop(): Promise<void>;
}

/** The gateway and the policy service, partners calling through the gateway as in production. */
export async function startPolicyPlatform(): Promise<PolicyPlatform> {
  const config = policyConfigSchema.parse({
    NODE_ENV: 'test',
    LOG_LEVEL: 'silent',
    POLICY_HOST: '127.0.0.1',
    POLICY_PORT: '0',
    MONGO_URL: testMongoUrl(),
    MONGO_DB: uniqueDatabaseName('policy'),
    INTERNAL_SIGNING_SECRET: SIGNING_SECRET,
  });
  const policy = await startPolicy(config, createLogger({ name: 'policy-test', level: 'silent' }));
  const gateway = await startTestGateway({
    POLICY_URL: policy.url,
    INTERNAL_SIGNING_SECRET: SIGNING_SECRET,
    RATE_LIMIT_POINTS: '100000',
  });
  const db = await mongoose.createConnection(config.MONGO_URL, { dbName: config.MONGO_DB }).asPromise();
  return {
    gateway,
    policy,
    db,
    stop: async () => {
      await gateway.stop();
      await policy.stop();
      await db.dropDatabase().catch(() => undefined);
      await db.close();
    },
  };
}

let serial = 0;

/** A valid farmer body, unique per call. */
export function farmerBody(overrides: Record<string, unknown> = {}) {
  serial++;
  return {
    firstName: 'Amina',
    lastName: 'Otieno',
    phoneNumber: `+2547${String(10_000_000 + serial).slice(-8)}`,
    nationalId: `KE${String(serial).padStart(8, '0')}`,
    region: 'Nakuru',
    ...overrides,
  };
}

export const plotBody = (farmerId: string, overrides: Record<string, unknown> = {}) => ({
  farmerId,
  name: 'North field',
  latitude: -0.3031,
  longitude: 36.08,
  areaHectares: 1.5,
  cropType: 'MAIZE',
  ...overrides,
});
