import { localDevPrivateKey } from '@parametric/chain';
import { flag, loadConfig, platformService, positiveInt } from '@parametric/config';
import { z } from 'zod';

export const policyConfigSchema = z.object({
  ...platformService('POLICY', 'policy'),
  OUTBOX_POLL_MS: positiveInt(1_000),
  /** JSON-RPC endpoint of the EVM chain holding the PolicyRegistry contract. */
  CHAIN_RPC_URL: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }),
  CHAIN_REGISTRY_ADDRESS: z
    .string()
    .regex(/^0x[0-9a-fA-F]{40}$/, 'must be a 0x-prefixed 20-byte hex address')
    .transform((v) => v as `0x${string}`),
  /** The registry owner's key: the only account allowed to register policies. */
  CHAIN_PRIVATE_KEY: z
    .string()
    .regex(/^0x[0-9a-fA-F]{64}$/, 'must be a 0x-prefixed 32-byte hex key')
    .transform((v) => v as `0x${string}`),
  /** Block the registry was deployed in: where searches for earlier registrations start. */
  CHAIN_REGISTRY_FROM_BLOCK: emptyIsUnsetInt(0),
  /** Limit for each chain call (one RPC, one send, or one receipt wait). */
  CHAIN_TIMEOUT_MS: positiveInt(10_000),
  /** How long an open chain breaker fails fast before letting a trial call through. */
  CHAIN_BREAKER_RESET_MS: positiveInt(30_000),
  /** Queued (Tier 2) activations: first retry delay after a chain failure, doubling up to the max. */
  ACTIVATION_RETRY_BASE_MS: positiveInt(5_000),
  ACTIVATION_RETRY_MAX_MS: positiveInt(600_000),
  ACTIVATION_CONCURRENCY: positiveInt(5),
  /** A dead process's activation is picked up again after about this long (BullMQ's job lock). */
  WORKER_LOCK_MS: positiveInt(30_000),
  /**
   * How often the sweeps run: expiring policies past their cover end, re-queueing lost
   * activations, releasing capacity after the claims window.
   */
  SWEEP_INTERVAL_MS: positiveInt(60_000),
  /**
   * How long after a policy's cover ends determinations for damage during cover may still
   * arrive; its capacity stays reserved until then (default 90 days).
   */
  CLAIMS_WINDOW_SECONDS: positiveInt(7_776_000),
  /**
   * Policy summaries (damage assessments, payouts) in hand per process: those in hand are written
   * together (summaries-worker.ts), so this is also the most one bulk write can carry (two of 100).
   */
  SUMMARY_CONCURRENCY: positiveInt(200),
  /** Run the queue workers and the sweeps in this process (an API-only replica sets false). */
  RUN_WORKERS: flag(true),
});

function emptyIsUnsetInt(fallback: number) {
  return z.preprocess((v) => (v === '' ? undefined : v), z.coerce.number().int().min(0).default(fallback));
}

export type PolicyConfig = z.infer<typeof policyConfigSchema>;

/** anvil's public dev keys: anyone can sign with them, so production must never use one. */
const DEV_KEYS = new Set(Array.from({ length: 10 }, (_, i) => localDevPrivateKey(i).toLowerCase()));

export function loadPolicyConfig(env: NodeJS.ProcessEnv = process.env): PolicyConfig {
  const config = loadConfig(policyConfigSchema, env);
  if (config.NODE_ENV === 'production' && DEV_KEYS.has(config.CHAIN_PRIVATE_KEY.toLowerCase())) {
    throw new Error('CHAIN_PRIVATE_KEY is a public anvil development key; it must not be used in production');
  }
  if (config.ACTIVATION_RETRY_MAX_MS < config.ACTIVATION_RETRY_BASE_MS) {
    throw new Error('ACTIVATION_RETRY_MAX_MS must not be below ACTIVATION_RETRY_BASE_MS');
  }
  return config;
}
