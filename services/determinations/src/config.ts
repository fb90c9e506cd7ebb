import { flag, loadConfig, platformService, positiveInt } from '@parametric/config';
import { z } from 'zod';
import { generateSigningKeyPem, loadSigningKeys, publishedKeySet } from './signing/keys';

export const determinationsConfigSchema = z.object({
  ...platformService('DETERMINATIONS', 'determinations'),
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
  /**
   * Ed25519 keys (PKCS#8 PEM, the first signs) for sandbox organizations' test determinations
   * (`POST /api/sandbox/determinations`), published in the JWKS marked `"environment":
   * "sandbox"`. Unset outside production: a key is made at start (test determinations of a run
   * stop verifying when it ends). Unset in production: no sandbox determinations.
   */
  SANDBOX_SIGNING_KEYS: z.string().min(1).optional(),
  /** Tier 1 reporting due date after issue: 30 days. */
  DETERMINATION_REPORT_DUE_SECONDS: positiveInt(2_592_000),
  /** How often the overdue sweep runs. */
  DETERMINATION_OVERDUE_SWEEP_SECONDS: positiveInt(300),
  /** Assessments handled at once by the `determination-ingest` worker (a batch request takes all its items at once). */
  INGEST_CONCURRENCY: positiveInt(8),
  OUTBOX_POLL_MS: positiveInt(1_000),
  /** Run the ingest worker and the overdue sweep in this process (an API-only replica sets false). */
  RUN_WORKERS: flag(true),
});

export type DeterminationsConfig = z.infer<typeof determinationsConfigSchema>;

/**
 * docker-compose's signing key for local runs: its seed is public (the text
 * "local-dev-determinations-key-32b"), so anyone could forge determinations with it.
 */
const PUBLIC_DEV_KEY_PEM = `-----BEGIN PRIVATE KEY-----
MC4CAQAwBQYDK2VwBCIEIGxvY2FsLWRldi1kZXRlcm1pbmF0aW9ucy1rZXktMzJi
-----END PRIVATE KEY-----`;

export function loadDeterminationsConfig(env: NodeJS.ProcessEnv = process.env): DeterminationsConfig {
  const config = loadConfig(determinationsConfigSchema, env);
  // Parsed now, so a bad key stops the service at start with the reason, before it connects.
  const keys = loadSigningKeys(config.DETERMINATION_SIGNING_KEYS);
  if (config.NODE_ENV === 'production' && keys.activeKid === loadSigningKeys(PUBLIC_DEV_KEY_PEM).activeKid) {
    throw new Error(
      'DETERMINATION_SIGNING_KEYS signs with the public docker-compose development key; production needs its own key',
    );
  }
  if (config.SANDBOX_SIGNING_KEYS !== undefined) {
    publishedKeySet(keys, loadSigningKeys(config.SANDBOX_SIGNING_KEYS, 'sandbox'));
  }
  return config;
}

/** The sandbox signing keys: as configured, else (outside production) a key made now, else none. */
export function sandboxSigningKeys(config: DeterminationsConfig) {
  if (config.SANDBOX_SIGNING_KEYS !== undefined)
    return loadSigningKeys(config.SANDBOX_SIGNING_KEYS, 'sandbox');
  return config.NODE_ENV === 'production' ? undefined : loadSigningKeys(generateSigningKeyPem(), 'sandbox');
}
