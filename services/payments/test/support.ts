import { randomBytes } from 'node:crypto';
import { freePort } from '@parametric/local-process';
import { createLogger } from '@parametric/logger';
import { type MpesaSimulator, startMpesaSimulator } from '@parametric/mpesa-simulator';
import { type RateSimulator, startRateSimulator } from '@parametric/rate-simulator';
import { testMongoUrl, testRedisUrl, uniqueDatabaseName, uniqueRedisPrefix } from '@parametric/test-harness';
import { startWebhookReceiver, type WebhookReceiver } from '@parametric/webhook-receiver';
import mongoose from 'mongoose';
import { type DeterminationsPlatform, startDeterminationsPlatform } from '../../determinations/test/support';
import { startTestGateway, type TestGateway } from '../../gateway/test/support';
import { type RunningPolicy, startPolicy } from '../../policy/src/service';
import {
  type PolicyPlatform,
  policyTestConfig,
  type SellableOrg,
  sellableOrg,
} from '../../policy/test/support';
import { type RunningWebhooks, startWebhooks } from '../../webhooks/src/service';
import { webhooksTestConfig } from '../../webhooks/test/support';
import { type PaymentsConfig, paymentsConfigSchema } from '../src/config';
import { type RunningPayments, startPayments } from '../src/service';

export const SIGNING_SECRET = 'test-internal-signing-secret-0123';
export const MPESA = {
  consumerKey: 'test-consumer-key',
  consumerSecret: 'test-consumer-secret-0123456789',
  shortcode: '174379',
  passkey: 'test-passkey-0123456789abcdef',
  b2cShortcode: '600980',
} as const;

export interface SimulatorOptions {
  callbackDelayMs?: number;
  /** The simulator's initiator, when it should refuse ours (ResultCode 2001). */
  initiatorName?: string;
}

/** Payments config for a test: its own database, the simulator, a callback port chosen now. */
export function paymentsTestConfig(overrides: Record<string, string>): PaymentsConfig {
  return paymentsConfigSchema.parse({
    NODE_ENV: 'test',
    LOG_LEVEL: 'silent',
    PAYMENTS_HOST: '127.0.0.1',
    PAYMENTS_PORT: '0',
    PAYMENTS_CALLBACK_HOST: '127.0.0.1',
    MONGO_URL: testMongoUrl(),
    MONGO_DB: uniqueDatabaseName('payments'),
    REDIS_URL: testRedisUrl(),
    REDIS_PREFIX: uniqueRedisPrefix('payments'),
    INTERNAL_SIGNING_SECRET: SIGNING_SECRET,
    PAYMENTS_CALLBACK_TOKEN: randomBytes(16).toString('hex'),
    MPESA_CONSUMER_KEY: MPESA.consumerKey,
    MPESA_CONSUMER_SECRET: MPESA.consumerSecret,
    MPESA_SHORTCODE: MPESA.shortcode,
    MPESA_PASSKEY: MPESA.passkey,
    MPESA_B2C_SHORTCODE: MPESA.b2cShortcode,
    MPESA_INITIATOR_NAME: 'testapi',
    MPESA_SECURITY_CREDENTIAL: 'test-security-credential-0123',
    MPESA_TIMEOUT_MS: '2000',
    OUTBOX_POLL_MS: '100',
    // No determinations service unless the test starts one: nothing listens here.
    DETERMINATIONS_URL: 'http://127.0.0.1:9',
    ...overrides,
  });
}

export interface PaymentsPlatform {
  gateway: TestGateway;
  policy: RunningPolicy;
  payments: RunningPayments;
  webhooks: RunningWebhooks;
  simulator: MpesaSimulator;
  rates: RateSimulator;
  receiver: WebhookReceiver;
  config: PaymentsConfig;
  /** The payments database. */
  db: mongoose.Connection;
  asPolicyPlatform: PolicyPlatform;
  connectWebhook(apiKey: string): Promise<void>;
  /** Restarts the payments service on the same database and ports (a crash and a new pod). */
  restartPayments(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Everything a premium touches: gateway, policy (activation on the local chain), payments, the
 * webhooks service with a partner's receiver, and the M-Pesa simulator over HTTP.
 */
export interface PaymentsStack {
  payments: RunningPayments;
  simulator: MpesaSimulator;
  rates: RateSimulator;
  config: PaymentsConfig;
  /** Restarts the payments service on the same database and ports (a crash and a new pod). */
  restart(): Promise<RunningPayments>;
  stop(): Promise<void>;
}

/** The payments service with its two stand-ins (Daraja, the rate source), for a given policy service. */
export async function startPaymentsStack(
  ctx: { policyUrl: string; redisPrefix: string; determinationsUrl?: string },
  overrides: Record<string, string> = {},
  simulatorOptions: SimulatorOptions = {},
): Promise<PaymentsStack> {
  const logger = createLogger({ name: 'payments-test', level: 'silent' });
  const simulator = await startMpesaSimulator({
    ...MPESA,
    callbackDelayMs: simulatorOptions.callbackDelayMs ?? 50,
    // Another initiator than ours: every B2C and Transaction Status answers ResultCode 2001.
    ...(simulatorOptions.initiatorName
      ? { initiatorName: simulatorOptions.initiatorName, securityCredential: 'another-credential' }
      : {}),
  });
  const rates = await startRateSimulator();
  const callbackPort = await freePort();
  const config = paymentsTestConfig({
    REDIS_PREFIX: ctx.redisPrefix,
    POLICY_URL: ctx.policyUrl,
    // Payouts read determinations there; a stack without the service (premiums only) keeps
    // the default, where nothing listens: the origination sweep finds nothing to do.
    ...(ctx.determinationsUrl ? { DETERMINATIONS_URL: ctx.determinationsUrl } : {}),
    MPESA_BASE_URL: simulator.url,
    RATE_SOURCE_URL: rates.url,
    PAYMENTS_CALLBACK_PORT: String(callbackPort),
    PAYMENTS_CALLBACK_BASE_URL: `http://127.0.0.1:${callbackPort}`,
    ...overrides,
  });
  let payments = await startPayments(config, logger);
  // The gateway forwards to a fixed port, so a restarted service must come back on it.
  const port = Number(new URL(payments.url).port);
  const stack: PaymentsStack = {
    payments,
    simulator,
    rates,
    config,
    async restart() {
      await payments.stop();
      payments = await startPayments({ ...config, PAYMENTS_PORT: port }, logger);
      stack.payments = payments;
      return payments;
    },
    async stop() {
      await payments.stop();
      await simulator.close();
      await rates.close();
    },
  };
  return stack;
}

/**
 * Everything a premium touches: gateway, policy (activation on the local chain), payments, the
 * webhooks service with a partner's receiver, and the M-Pesa simulator over HTTP.
 */
export async function startPaymentsPlatform(
  overrides: Record<string, string> = {},
  simulatorOptions: SimulatorOptions = {},
): Promise<PaymentsPlatform> {
  const prefix = uniqueRedisPrefix('pay');
  const logger = (name: string) => createLogger({ name, level: 'silent' });
  const webhooks = await startWebhooks(webhooksTestConfig({ REDIS_PREFIX: prefix }), logger('webhooks-test'));
  const { config: policyConfig, chain } = await policyTestConfig({ REDIS_PREFIX: prefix });
  const policy = await startPolicy(policyConfig, logger('policy-test'));
  const stack = await startPaymentsStack(
    { policyUrl: policy.url, redisPrefix: prefix },
    overrides,
    simulatorOptions,
  );
  const { config } = stack;
  const gateway = await startTestGateway({
    POLICY_URL: policy.url,
    PAYMENTS_URL: stack.payments.url,
    WEBHOOKS_URL: webhooks.url,
    REDIS_PREFIX: prefix,
    INTERNAL_SIGNING_SECRET: SIGNING_SECRET,
    RATE_LIMIT_POINTS: '100000',
    PAYMENTS_INITIATE_LIMIT_POINTS: '100000',
    OUTBOX_POLL_MS: '100',
  });
  const receiver = await startWebhookReceiver();
  const db = await mongoose.createConnection(config.MONGO_URL, { dbName: config.MONGO_DB }).asPromise();
  const policyDb = await mongoose
    .createConnection(policyConfig.MONGO_URL, { dbName: policyConfig.MONGO_DB })
    .asPromise();
  const platform: PaymentsPlatform = {
    gateway,
    policy,
    payments: stack.payments,
    webhooks,
    simulator: stack.simulator,
    rates: stack.rates,
    receiver,
    config,
    db,
    asPolicyPlatform: {
      gateway,
      policy,
      config: policyConfig,
      chain,
      db: policyDb,
      stop: async () => undefined,
    },
    async connectWebhook(apiKey) {
      const reply = await gateway.api('PUT', '/organizations/me/webhook', {
        key: apiKey,
        body: { url: receiver.url },
      });
      if (reply.status !== 200) throw new Error(`webhook setup failed: ${JSON.stringify(reply.body)}`);
      receiver.setSecret(reply.body.data.secret);
    },
    async restartPayments() {
      platform.payments = await stack.restart();
    },
    async stop() {
      await receiver.close();
      await gateway.stop();
      await stack.stop();
      await policy.stop();
      await webhooks.stop();
      await db.dropDatabase().catch(() => undefined);
      await db.close();
      await policyDb.dropDatabase().catch(() => undefined);
      await policyDb.close();
    },
  };
  return platform;
}

/** A config as the environment that would produce it (to start the service as a process). */
export function configEnv(config: PaymentsConfig): Record<string, string> {
  return Object.fromEntries(Object.entries(config).map(([key, value]) => [key, String(value)]));
}

/** A Tier 2 organization with a PENDING crop policy; the premium is what it must pay. */
export async function pendingTier2Policy(
  p: PaymentsPlatform,
  options: { org?: SellableOrg; tier?: 'DETERMINATION' | 'DETERMINATION_AND_SETTLEMENT' } = {},
) {
  const org =
    options.org ??
    (await sellableOrg(p.asPolicyPlatform, {
      capacity: 100_000_000,
      tier: options.tier ?? 'DETERMINATION_AND_SETTLEMENT',
    }));
  const bought = await p.gateway.api('POST', '/policies/purchase', {
    key: org.apiKey,
    body: {
      farmerId: org.farmerId,
      productType: 'CROP',
      plotId: org.plotId,
      sumInsured: 50_000,
      coverageType: 'DROUGHT',
      durationDays: 180,
    },
  });
  if (bought.status !== 201) throw new Error(`purchase failed: ${JSON.stringify(bought.body)}`);
  return { org, policy: bought.body.data.policy as { id: string; premium: number; policyNumber: string } };
}

/**
 * Everything a payout touches, as in production: the determinations platform (gateway, policy,
 * determinations, webhooks and a partner's receiver) with the payments service and its two
 * stand-ins behind the same gateway. Payouts start from real determinations.
 */
export interface PayoutPlatform extends DeterminationsPlatform {
  stack: PaymentsStack;
}

export async function startPayoutPlatform(
  overrides: Record<string, string> = {},
  simulatorOptions: SimulatorOptions = {},
  determinationOverrides: Record<string, string> = {},
): Promise<PayoutPlatform> {
  let stack: PaymentsStack | undefined;
  const platform = await startDeterminationsPlatform(
    determinationOverrides,
    {},
    async ({ policyUrl, determinationsUrl, redisPrefix }) => {
      stack = await startPaymentsStack(
        { policyUrl, determinationsUrl, redisPrefix },
        overrides,
        simulatorOptions,
      );
      return {
        gatewayEnv: { PAYMENTS_URL: stack.payments.url, PAYMENTS_INITIATE_LIMIT_POINTS: '100000' },
        stop: () => (stack as PaymentsStack).stop(),
      };
    },
  );
  return { ...platform, stack: stack as PaymentsStack };
}
