import { randomBytes } from 'node:crypto';
import { createLogger } from '@parametric/logger';
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
import { type WebhooksConfig, webhooksConfigSchema } from '../src/config';
import { type RunningWebhooks, startWebhooks } from '../src/service';

/** A delivery row as stored (the fields tests look at). */
export interface DeliveryRow {
  _id: string;
  organizationId: string;
  status: string;
  attempts: number;
  lastError: string | null;
  responseStatus: number | null;
  nextAttemptAt: Date | null;
  [field: string]: unknown;
}

/** The JSON body partners receive. */
export interface Envelope {
  id: string;
  event: string;
  createdAt: string;
  data: Record<string, unknown>;
}

export const SIGNING_SECRET = 'test-internal-signing-secret-0123';

/** Fast retries for tests; the production schedule is asserted separately. */
export function webhooksTestConfig(overrides: Record<string, string> = {}): WebhooksConfig {
  return webhooksConfigSchema.parse({
    NODE_ENV: 'test',
    LOG_LEVEL: 'silent',
    WEBHOOKS_HOST: '127.0.0.1',
    WEBHOOKS_PORT: '0',
    MONGO_URL: testMongoUrl(),
    MONGO_DB: uniqueDatabaseName('webhooks'),
    REDIS_URL: testRedisUrl(),
    REDIS_PREFIX: uniqueRedisPrefix('webhooks'),
    INTERNAL_SIGNING_SECRET: SIGNING_SECRET,
    WEBHOOK_SECRET_KEY: randomBytes(32).toString('base64'),
    ALLOW_INSECURE_WEBHOOKS: 'true',
    DELIVERY_TIMEOUT_MS: '1500',
    DELIVERY_BACKOFF_MS: '50,100,150,200,250',
    RECONCILE_INTERVAL_MS: '3600000',
    ...overrides,
  });
}

export interface Platform {
  gateway: TestGateway;
  webhooks: RunningWebhooks;
  config: WebhooksConfig;
  receiver: WebhookReceiver;
  /** The webhooks service's database, to assert on delivery rows. */
  db: mongoose.Connection;
  /** An organization with its webhook pointed at a receiver (the shared one by default), which gets its secret. */
  connectedOrg(target?: WebhookReceiver): Promise<{ id: string; apiKey: string; secret: string }>;
  /** Emits an event for the organization through a real state change (ops KYB toggle). */
  emitKybEvent(orgId: string): Promise<void>;
  deliveryRows(orgId: string): Promise<DeliveryRow[]>;
  /** The delivery row once the predicate holds; fails after `timeoutMs` naming the last row seen. */
  waitForRow(id: string, predicate: (row: DeliveryRow) => boolean, timeoutMs?: number): Promise<DeliveryRow>;
  stop(): Promise<void>;
}

/** Gateway + webhooks service on one private Redis namespace, and a local partner receiver. */
export async function startPlatform(overrides: Record<string, string> = {}): Promise<Platform> {
  const config = webhooksTestConfig(overrides);
  const webhooks = await startWebhooks(config, createLogger({ name: 'webhooks-test', level: 'silent' }));
  const gateway = await startTestGateway({
    REDIS_PREFIX: config.REDIS_PREFIX,
    WEBHOOKS_URL: webhooks.url,
    INTERNAL_SIGNING_SECRET: SIGNING_SECRET,
    OUTBOX_POLL_MS: '100',
    RATE_LIMIT_POINTS: '100000',
  });
  const receiver = await startWebhookReceiver();
  const db = await mongoose.createConnection(config.MONGO_URL, { dbName: config.MONGO_DB }).asPromise();
  const kybState = new Map<string, 'VERIFIED' | 'REJECTED'>();

  const platform: Platform = {
    gateway,
    webhooks,
    config,
    receiver,
    db,
    async connectedOrg(target = receiver) {
      const org = await gateway.register();
      const reply = await gateway.api('PUT', '/organizations/me/webhook', {
        key: org.apiKey,
        body: { url: target.url },
      });
      if (reply.status !== 200) throw new Error(`webhook setup failed: ${JSON.stringify(reply.body)}`);
      target.setSecret(reply.body.data.secret);
      return { id: org.id, apiKey: org.apiKey, secret: reply.body.data.secret };
    },
    async emitKybEvent(orgId) {
      const next = kybState.get(orgId) === 'VERIFIED' ? 'REJECTED' : 'VERIFIED';
      kybState.set(orgId, next);
      const reply = await gateway.ops('POST', `/organizations/${orgId}/kyb`, {
        body: { status: next, notes: 'test' },
      });
      if (reply.status !== 200) throw new Error(`kyb failed: ${JSON.stringify(reply.body)}`);
    },
    async deliveryRows(orgId) {
      return db
        .collection<DeliveryRow>('webhook_deliveries')
        .find({ organizationId: orgId })
        .sort({ createdAt: 1 })
        .toArray();
    },
    waitForRow(id, predicate, timeoutMs = 15_000) {
      return eventually(
        async () => {
          const row = await db.collection<DeliveryRow>('webhook_deliveries').findOne({ _id: id });
          if (!row || !predicate(row)) throw new Error(`row: ${JSON.stringify(row)}`);
          return row;
        },
        { timeout: timeoutMs, message: `delivery ${id} did not reach the expected state` },
      );
    },
    async stop() {
      await receiver.close();
      await gateway.stop();
      await webhooks.stop();
      await db.dropDatabase().catch(() => undefined);
      await db.close();
    },
  };
  return platform;
}
