import {
  flag,
  loadConfig,
  logLevel,
  mongoDbName,
  nodeEnv,
  port,
  positiveInt,
  redisPrefix,
  secret,
} from '@parametric/config';
import { z } from 'zod';

export const determinationsConfigSchema = z.object({
  NODE_ENV: nodeEnv,
  LOG_LEVEL: logLevel,
  DETERMINATIONS_HOST: z.string().default('0.0.0.0'),
  DETERMINATIONS_PORT: port(3000),
  MONGO_URL: z.string().min(1, 'must be set'),
  MONGO_DB: mongoDbName('determinations'),
  REDIS_URL: z.string().min(1, 'must be set'),
  REDIS_PREFIX: redisPrefix,
  INTERNAL_SIGNING_SECRET: secret(),
  /** The policy service: attribution reads the policy there (its ops lookup). */
  POLICY_URL: z
    .url({ protocol: /^https?$/, error: 'must be an http(s) URL' })
    .transform((u) => u.replace(/\/+$/, '')),
  /** Limit for one policy look-up; past it the ingestion answers 503 (or the job retries). */
  POLICY_TIMEOUT_MS: positiveInt(5_000),
  /**
   * Ed25519 signing keys, PKCS#8 PEM, one or more blocks: the first signs, the rest are retired
   * keys still published in the JWKS (retired ones may be SPKI public keys).
   */
  DETERMINATION_SIGNING_KEYS: z.string().min(1, 'must hold at least one PKCS#8 Ed25519 PEM block'),
  /** Tier 1 reporting due date after issue: 30 days. */
  DETERMINATION_REPORT_DUE_SECONDS: positiveInt(2_592_000),
  /** How often the overdue sweep runs. */
  DETERMINATION_OVERDUE_SWEEP_SECONDS: positiveInt(300),
  /** Assessments handled at once by the `determination-ingest` worker and by one batch request. */
  INGEST_CONCURRENCY: positiveInt(8),
  OUTBOX_POLL_MS: positiveInt(1_000),
  /** Run the ingest worker and the overdue sweep in this process (an API-only replica sets false). */
  RUN_WORKERS: flag(true),
});

export type DeterminationsConfig = z.infer<typeof determinationsConfigSchema>;

export function loadDeterminationsConfig(env: NodeJS.ProcessEnv = process.env): DeterminationsConfig {
  return loadConfig(determinationsConfigSchema, env);
}
