import { createLogger, type Logger } from '@parametric/logger';
import {
  type TestChain,
  testChain,
  testMongoUrl,
  testRedisUrl,
  uniqueDatabaseName,
  uniqueRedisPrefix,
} from '@parametric/test-harness';
import { startWebhookReceiver, type WebhookReceiver } from '@parametric/webhook-receiver';
import mongoose from 'mongoose';
import { startTestGateway, type TestGateway } from '../../gateway/test/support';
import { type RunningWebhooks, startWebhooks } from '../../webhooks/src/service';
import { webhooksTestConfig } from '../../webhooks/test/support';
import { type PolicyConfig, policyConfigSchema } from '../src/config';
import { type RunningPolicy, startPolicy } from '../src/service';

const SIGNING_SECRET = 'test-internal-signing-secret-0123';

export interface PolicyPlatform {
  gateway: TestGateway;
  policy: RunningPolicy;
  config: PolicyConfig;
  /** The chain the policy service registers on (this file's own registry contract). */
  chain: TestChain;
  db: mongoose.Connection;
  stop(): Promise<void>;
}

/** The policy service's config for a test file: its own database, Redis prefix and registry. */
export async function policyTestConfig(
  overrides: Record<string, string> = {},
): Promise<{ config: PolicyConfig; chain: TestChain }> {
  const chain = await testChain();
  const config = policyConfigSchema.parse({
    NODE_ENV: 'test',
    LOG_LEVEL: 'silent',
    POLICY_HOST: '127.0.0.1',
    POLICY_PORT: '0',
    MONGO_URL: testMongoUrl(),
    MONGO_DB: uniqueDatabaseName('policy'),
    REDIS_URL: testRedisUrl(),
    REDIS_PREFIX: uniqueRedisPrefix('policy'),
    INTERNAL_SIGNING_SECRET: SIGNING_SECRET,
    OUTBOX_POLL_MS: '100',
    CHAIN_RPC_URL: chain.rpcUrl,
    CHAIN_REGISTRY_ADDRESS: chain.registryAddress,
    CHAIN_PRIVATE_KEY: chain.privateKey,
    CHAIN_TIMEOUT_MS: '2000',
    ...overrides,
  });
  return { config, chain };
}

/**
 * The gateway and the policy service on one Redis namespace, partners calling through the
 * gateway as in production. `overrides` are policy-service environment variables.
 */
export async function startPolicyPlatform(
  overrides: Record<string, string> = {},
  gatewayOverrides: Record<string, string> = {},
  /** The policy service's logger (silent unless a test captures what it logs). */
  logger: Logger = createLogger({ name: 'policy-test', level: 'silent' }),
  /** The gateway's logger (silent unless a test captures what it logs). */
  gatewayLogger?: Logger,
): Promise<PolicyPlatform> {
  const { config, chain } = await policyTestConfig(overrides);
  const policy = await startPolicy(config, logger);
  const gateway = await startTestGateway(
    {
      POLICY_URL: policy.url,
      REDIS_PREFIX: config.REDIS_PREFIX,
      INTERNAL_SIGNING_SECRET: SIGNING_SECRET,
      RATE_LIMIT_POINTS: '100000',
      OUTBOX_POLL_MS: '100',
      ...gatewayOverrides,
    },
    gatewayLogger,
  );
  const db = await mongoose.createConnection(config.MONGO_URL, { dbName: config.MONGO_DB }).asPromise();
  return {
    gateway,
    policy,
    config,
    chain,
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
  cropType: 'MAIZE' as const,
  ...overrides,
});

export const herdBody = (farmerId: string, overrides: Record<string, unknown> = {}) => ({
  farmerId,
  name: 'Boran',
  headCount: 10,
  estimatedValue: 250_000,
  latitude: 1.2,
  longitude: 36.8,
  ...overrides,
});

export const FUTURE = '2099-01-01T00:00:00Z';

export interface SellableOrg {
  id: string;
  apiKey: string;
  farmerId: string;
  plotId: string;
}

/**
 * An organization that passes every purchase gate (KYB, KE licence, capacity, solvency), with
 * a KYC-approved farmer and a plot. `tier` sets the service tier before any sale.
 */
export async function sellableOrg(
  p: PolicyPlatform,
  options: { capacity?: number; tier?: 'DETERMINATION' | 'DETERMINATION_AND_SETTLEMENT' } = {},
): Promise<SellableOrg> {
  const org = await p.gateway.register();
  const ops = async (path: string, body: unknown) => {
    const reply = await p.gateway.ops('POST', path, { body });
    if (reply.status >= 300) throw new Error(`${path}: ${JSON.stringify(reply.body)}`);
  };
  await ops(`/organizations/${org.id}/kyb`, { status: 'VERIFIED' });
  if (options.tier) await ops(`/organizations/${org.id}/service-tier`, { serviceTier: options.tier });
  await ops(`/organizations/${org.id}/licences`, { market: 'KE', licenceNumber: 'IRA-1', expiresAt: FUTURE });
  await ops(`/organizations/${org.id}/capacity`, {
    amount: options.capacity ?? 1_000_000,
    currency: 'KES',
    solvencyAttestedUntil: FUTURE,
  });
  const farmer = (await p.gateway.api('POST', '/farmers', { key: org.apiKey, body: farmerBody() })).body.data;
  await ops(`/farmers/${farmer.id}/kyc`, { status: 'APPROVED' });
  const plot = (await p.gateway.api('POST', '/plots', { key: org.apiKey, body: plotBody(farmer.id) })).body
    .data;
  return { id: org.id, apiKey: org.apiKey, farmerId: farmer.id, plotId: plot.id };
}

/** A valid CROP purchase body for the org's farmer and plot. */
export const cropPurchase = (
  o: { farmerId: string; plotId: string },
  overrides: Record<string, unknown> = {},
) => ({
  farmerId: o.farmerId,
  productType: 'CROP',
  plotId: o.plotId,
  sumInsured: 50_000,
  coverageType: 'DROUGHT',
  durationDays: 180,
  ...overrides,
});

export interface PolicyPlatformWithWebhooks extends PolicyPlatform {
  webhooks: RunningWebhooks;
  receiver: WebhookReceiver;
  /** Points the organization's webhook at the receiver (which learns the signing secret). */
  connectWebhook(apiKey: string): Promise<void>;
}

/** The policy platform plus the webhooks service and a partner's receiver: events end to end. */
export async function startPolicyPlatformWithWebhooks(
  overrides: Record<string, string> = {},
  /** Each service's logger (silent unless a test captures what they log). */
  loggers: { gateway?: Logger; policy?: Logger; webhooks?: Logger } = {},
): Promise<PolicyPlatformWithWebhooks> {
  const prefix = uniqueRedisPrefix('policy');
  const webhooks = await startWebhooks(
    webhooksTestConfig({ REDIS_PREFIX: prefix }),
    loggers.webhooks ?? createLogger({ name: 'webhooks-test', level: 'silent' }),
  );
  const platform = await startPolicyPlatform(
    { REDIS_PREFIX: prefix, ...overrides },
    { WEBHOOKS_URL: webhooks.url },
    loggers.policy,
    loggers.gateway,
  );
  const receiver = await startWebhookReceiver();
  return {
    ...platform,
    webhooks,
    receiver,
    async connectWebhook(apiKey) {
      const reply = await platform.gateway.api('PUT', '/organizations/me/webhook', {
        key: apiKey,
        body: { url: receiver.url },
      });
      if (reply.status !== 200) throw new Error(`webhook setup failed: ${JSON.stringify(reply.body)}`);
      receiver.setSecret(reply.body.data.secret);
    },
    async stop() {
      await receiver.close();
      await platform.stop();
      await webhooks.stop();
    },
  };
}
