import { flag, loadConfig, platformService, positiveInt } from '@parametric/config';
import { z } from 'zod';

/**
 * The retry schedule partners are promised (docs/webhooks.md, "Retries and the delivery log"):
 * about 30 s, 1 min, 2 min, 4 min, 8 min.
 */
export const SPEC_BACKOFF_MS = [30_000, 60_000, 120_000, 240_000, 480_000];
export const SPEC_TIMEOUT_MS = 10_000;
export const SPEC_MAX_ATTEMPTS = 5;

const msList = (fallback: number[]) =>
  z
    .string()
    .regex(/^\d+(,\d+)*$/, 'must be a comma-separated list of milliseconds')
    .default(fallback.join(','))
    .transform((v) => v.split(',').map(Number));

export const webhooksConfigSchema = z.object({
  ...platformService('WEBHOOKS', 'webhooks'),
  /** 32 random bytes, base64: encrypts webhook signing secrets at rest (AES-256-GCM). */
  WEBHOOK_SECRET_KEY: z
    .string()
    .refine((v) => Buffer.from(v, 'base64').length === 32, 'must be 32 bytes, base64-encoded'),
  /** Local runs and tests only: allow http:// and loopback webhook URLs. Never in production. */
  ALLOW_INSECURE_WEBHOOKS: flag(false),
  DELIVERY_TIMEOUT_MS: positiveInt(SPEC_TIMEOUT_MS),
  DELIVERY_BACKOFF_MS: msList(SPEC_BACKOFF_MS),
  DELIVERY_MAX_ATTEMPTS: positiveInt(SPEC_MAX_ATTEMPTS),
  /** Deliveries in flight per worker process. */
  DELIVERY_CONCURRENCY: positiveInt(50),
  /** Deliveries in flight per organization per worker process, so one slow partner cannot take every slot. */
  DELIVERY_CONCURRENCY_PER_ORG: positiveInt(10),
  /**
   * Events in hand per worker process: taken as batches (one endpoint read, one insert), each
   * held until its first attempt is recorded. Requests in flight stay bounded by the two above.
   */
  EVENT_CONCURRENCY: positiveInt(400),
  /**
   * How long a replica may keep an organization's endpoint. Changes made through the API reach
   * every replica at once (Redis pub/sub); this bounds only what pub/sub cannot see.
   */
  ENDPOINT_CACHE_MS: positiveInt(5_000),
  /** A dead worker's delivery is picked up again after about this long. */
  WORKER_LOCK_MS: positiveInt(30_000),
  RECONCILE_INTERVAL_MS: positiveInt(60_000),
  /** A PENDING delivery this far past its due time with nothing happening is re-enqueued. */
  RECONCILE_GRACE_MS: positiveInt(120_000),
  /** Run the event consumer and delivery workers in this process (an API-only replica sets false). */
  RUN_WORKERS: flag(true),
});

export type WebhooksConfig = z.infer<typeof webhooksConfigSchema>;

export function loadWebhooksConfig(env: NodeJS.ProcessEnv = process.env): WebhooksConfig {
  const config = loadConfig(webhooksConfigSchema, env);
  if (config.ALLOW_INSECURE_WEBHOOKS && config.NODE_ENV === 'production') {
    throw new Error('ALLOW_INSECURE_WEBHOOKS must not be set in production');
  }
  return config;
}
