import { randomUUID } from 'node:crypto';
import { createLogger } from '@parametric/logger';
import { createProducer, policyActivationJobId } from '@parametric/queue';
import {
  eventually,
  testMongoUrl,
  testRedisUrl,
  uniqueDatabaseName,
  uniqueRedisPrefix,
} from '@parametric/test-harness';
import { startWebhookReceiver, type WebhookReceiver } from '@parametric/webhook-receiver';
import mongoose from 'mongoose';
import { startTestGateway, type TestGateway } from '../../gateway/test/support';
import { type RunningPolicy, startPolicy } from '../../policy/src/service';
import {
  cropPurchase,
  type PolicyPlatform,
  policyTestConfig,
  type SellableOrg,
  sellableOrg,
} from '../../policy/test/support';
import { type RunningWebhooks, startWebhooks } from '../../webhooks/src/service';
import { webhooksTestConfig } from '../../webhooks/test/support';
import { type DeterminationsConfig, determinationsConfigSchema } from '../src/config';
import { type RunningDeterminations, startDeterminations } from '../src/service';
import { generateSigningKeyPem } from '../src/signing/keys';

export const SIGNING_SECRET = 'test-internal-signing-secret-0123';

/** The determinations service's config for a test: its own database, a fresh signing key. */
export function determinationsTestConfig(overrides: Record<string, string> = {}): DeterminationsConfig {
  return determinationsConfigSchema.parse({
    NODE_ENV: 'test',
    LOG_LEVEL: 'silent',
    DETERMINATIONS_HOST: '127.0.0.1',
    DETERMINATIONS_PORT: '0',
    MONGO_URL: testMongoUrl(),
    MONGO_DB: uniqueDatabaseName('determinations'),
    REDIS_URL: testRedisUrl(),
    REDIS_PREFIX: uniqueRedisPrefix('determinations'),
    INTERNAL_SIGNING_SECRET: SIGNING_SECRET,
    POLICY_URL: 'http://127.0.0.1:9',
    DETERMINATION_SIGNING_KEYS: generateSigningKeyPem(),
    OUTBOX_POLL_MS: '100',
    ...overrides,
  });
}

export interface DeterminationsPlatform {
  gateway: TestGateway;
  policy: RunningPolicy;
  determinations: RunningDeterminations;
  webhooks: RunningWebhooks;
  receiver: WebhookReceiver;
  config: DeterminationsConfig;
  /** The determinations database, for asserting what was (not) written. */
  db: mongoose.Connection;
  /** The policy database. */
  policyDb: mongoose.Connection;
  /** What `sellableOrg` and friends from the policy tests need. */
  asPolicyPlatform: PolicyPlatform;
  connectWebhook(apiKey: string): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Everything a determination touches, as in production: the gateway (partners and ops), the
 * policy service (attribution, summaries), the determinations service, the webhooks service and
 * a partner's receiver, on one Redis namespace.
 */
/** More services a test wants behind the same gateway (e.g. payments): their URLs for it. */
export type ExtraServices = (ctx: {
  policyUrl: string;
  determinationsUrl: string;
  redisPrefix: string;
}) => Promise<{
  gatewayEnv: Record<string, string>;
  stop(): Promise<void>;
}>;

export async function startDeterminationsPlatform(
  overrides: Record<string, string> = {},
  policyOverrides: Record<string, string> = {},
  extra?: ExtraServices,
): Promise<DeterminationsPlatform> {
  const prefix = uniqueRedisPrefix('det');
  const logger = (name: string) => createLogger({ name, level: 'silent' });
  const webhooks = await startWebhooks(webhooksTestConfig({ REDIS_PREFIX: prefix }), logger('webhooks-test'));
  const { config: policyConfig, chain } = await policyTestConfig({
    REDIS_PREFIX: prefix,
    ...policyOverrides,
  });
  const policy = await startPolicy(policyConfig, logger('policy-test'));
  const config = determinationsTestConfig({ REDIS_PREFIX: prefix, POLICY_URL: policy.url, ...overrides });
  const determinations = await startDeterminations(config, logger('determinations-test'));
  const more = extra
    ? await extra({ policyUrl: policy.url, determinationsUrl: determinations.url, redisPrefix: prefix })
    : undefined;
  const gateway = await startTestGateway({
    ...more?.gatewayEnv,
    POLICY_URL: policy.url,
    DETERMINATIONS_URL: determinations.url,
    WEBHOOKS_URL: webhooks.url,
    REDIS_PREFIX: prefix,
    INTERNAL_SIGNING_SECRET: SIGNING_SECRET,
    RATE_LIMIT_POINTS: '100000',
    OUTBOX_POLL_MS: '100',
  });
  const receiver = await startWebhookReceiver();
  const db = await mongoose.createConnection(config.MONGO_URL, { dbName: config.MONGO_DB }).asPromise();
  const policyDb = await mongoose
    .createConnection(policyConfig.MONGO_URL, { dbName: policyConfig.MONGO_DB })
    .asPromise();
  const asPolicyPlatform: PolicyPlatform = {
    gateway,
    policy,
    config: policyConfig,
    chain,
    db: policyDb,
    stop: async () => undefined,
  };
  return {
    gateway,
    policy,
    determinations,
    webhooks,
    receiver,
    config,
    db,
    policyDb,
    asPolicyPlatform,
    async connectWebhook(apiKey) {
      const reply = await gateway.api('PUT', '/organizations/me/webhook', {
        key: apiKey,
        body: { url: receiver.url },
      });
      if (reply.status !== 200) throw new Error(`webhook setup failed: ${JSON.stringify(reply.body)}`);
      receiver.setSecret(reply.body.data.secret);
    },
    async stop() {
      await receiver.close();
      await gateway.stop();
      await determinations.stop();
      await more?.stop();
      await policy.stop();
      await webhooks.stop();
      await db.dropDatabase().catch(() => undefined);
      await db.close();
      await policyDb.dropDatabase().catch(() => undefined);
      await policyDb.close();
    },
  };
}

export interface ActivePolicy {
  org: SellableOrg;
  policyId: string;
  policyNumber: string;
  coverStartsAt: string;
  coverEndsAt: string;
}

/** Buys a PENDING 180-day crop policy for the organization's farmer and plot; its id. */
export async function buyCrop(
  p: DeterminationsPlatform,
  org: SellableOrg,
  sumInsured: number,
): Promise<string> {
  const bought = await p.gateway.api('POST', '/policies/purchase', {
    key: org.apiKey,
    body: cropPurchase(org, { sumInsured }),
  });
  if (bought.status !== 201) throw new Error(`purchase failed: ${JSON.stringify(bought.body)}`);
  return bought.body.data.policy.id;
}

/** A Tier 1 organization with one ACTIVE crop policy (activated on the local chain). */
export async function activeCropPolicy(
  p: DeterminationsPlatform,
  options: { org?: SellableOrg; sumInsured?: number } = {},
): Promise<ActivePolicy> {
  const org = options.org ?? (await sellableOrg(p.asPolicyPlatform, { capacity: 100_000_000 }));
  const policyId = await buyCrop(p, org, options.sumInsured ?? 50_000);
  const activated = await p.gateway.api('PUT', `/policies/${policyId}/activate`, { key: org.apiKey });
  if (activated.status !== 200) throw new Error(`activation failed: ${JSON.stringify(activated.body)}`);
  const policy = activated.body.data;
  return {
    org,
    policyId,
    policyNumber: policy.policyNumber,
    coverStartsAt: policy.coverStartsAt,
    coverEndsAt: policy.coverEndsAt,
  };
}

/** A Tier 2 organization with one ACTIVE crop policy, activated as a paid premium would. */
export async function activeTier2CropPolicy(
  p: DeterminationsPlatform,
  sumInsured = 50_000,
  options: { org?: SellableOrg } = {},
): Promise<ActivePolicy> {
  const org =
    options.org ??
    (await sellableOrg(p.asPolicyPlatform, {
      capacity: 100_000_000,
      tier: 'DETERMINATION_AND_SETTLEMENT',
    }));
  const policyId = await buyCrop(p, org, sumInsured);
  const policy = await activateAsPaid(p, org, policyId);
  return {
    org,
    policyId,
    policyNumber: policy.policyNumber,
    coverStartsAt: policy.coverStartsAt,
    coverEndsAt: policy.coverEndsAt,
  };
}

/**
 * Activates a PENDING Tier 2 policy as the payments service does once its premium is received
 * (a `policy-activations` job), and waits until it is ACTIVE; the policy read.
 */
export async function activateAsPaid(p: DeterminationsPlatform, org: SellableOrg, policyId: string) {
  const activations = createProducer('policy-activations', {
    connection: p.config.REDIS_URL,
    prefix: p.config.REDIS_PREFIX,
  });
  try {
    await activations.add(
      { policyId, organizationId: org.id, paymentId: `pay-${randomUUID()}` },
      { jobId: policyActivationJobId(policyId) },
    );
  } finally {
    await activations.close();
  }
  return eventually(
    async () => {
      const read = await p.gateway.api('GET', `/policies/${policyId}`, { key: org.apiKey });
      expect(read.body.data.status).toBe('ACTIVE');
      return read.body.data;
    },
    { timeout: 20_000, message: 'the Tier 2 policy to be activated' },
  );
}

let keys = 0;

/** A valid ingestion body for a policy: triggered at 25% unless told otherwise. */
export function assessment(
  policy: { policyId?: string; policyNumber?: string },
  overrides: Record<string, unknown> = {},
) {
  keys++;
  const now = Date.now();
  return {
    idempotencyKey: `chirps-2026-LR-${keys}-${randomUUID()}`,
    ...(policy.policyId ? { policyId: policy.policyId } : {}),
    ...(policy.policyNumber && !policy.policyId ? { policyNumber: policy.policyNumber } : {}),
    kind: 'CROP_DAMAGE',
    methodologyVersion: 'drought-index-v2.1',
    triggered: true,
    damagePercentBp: 2_500,
    assessedAt: new Date(now - 60_000).toISOString(),
    evidence: {
      indexName: 'CHIRPS cumulative rainfall deficit',
      indexValue: 41.5,
      triggerThreshold: 60,
      exitThreshold: 20,
      dataSource: 'CHIRPS',
      dataSourceVersion: '2.0',
      periodStart: new Date(now - 86_400_000).toISOString(),
      periodEnd: new Date(now + 10 * 86_400_000).toISOString(),
      inputDataHashes: [{ name: 'chirps-2026-dekad-31.tif', sha256: 'a'.repeat(64) }],
      location: { latitude: -0.3031, longitude: 36.08 },
    },
    ...overrides,
  };
}
