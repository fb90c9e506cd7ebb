import { flag, loadConfig, platformService, port, positiveInt, secret, serviceUrl } from '@parametric/config';
import { type Ed25519KeyBundle, generateEd25519KeyPem, loadEd25519Keys } from '@parametric/ed25519-keys';
import { z } from 'zod';

export const gatewayConfigSchema = z.object({
  ...platformService('GATEWAY', 'gateway'),
  OPS_HOST: z.string().default('0.0.0.0'),
  OPS_PORT: port(3001),
  /**
   * The shared ops token: break-glass since operators sign in (issue 25; docs/ops.md). Accepted
   * outside production; in production only while OPS_BREAK_GLASS is true, every use audited,
   * counted (`ops_break_glass_requests_total`) and alerted.
   */
  OPS_TOKEN: secret(),
  OPS_BREAK_GLASS: flag(false),
  API_KEY_PEPPER: secret(),
  RATE_LIMIT_POINTS: positiveInt(100),
  RATE_LIMIT_WINDOW_SECONDS: positiveInt(60),
  PAYMENTS_INITIATE_LIMIT_POINTS: positiveInt(10),
  PAYMENTS_INITIATE_WINDOW_SECONDS: positiveInt(3600),
  REGISTRATION_LIMIT_POINTS: positiveInt(10),
  REGISTRATION_WINDOW_SECONDS: positiveInt(3600),
  /**
   * Per client IP in RATE_LIMIT_WINDOW_SECONDS, for requests without a valid key (including every
   * 401) and for what needs none under `/api` except registration: sign-in, the signing keys,
   * the OpenAPI document and docs page, `OPTIONS`.
   */
  ANONYMOUS_LIMIT_POINTS: positiveInt(100),
  /** express "trust proxy": how many proxy hops set X-Forwarded-For (0 = none, the default). */
  TRUST_PROXY_HOPS: z.coerce.number().int().min(0).max(10).default(0),
  FORWARD_TIMEOUT_MS: positiveInt(30_000),
  /** Keep-alive connections to each service the gateway forwards to, at most. */
  FORWARD_CONNECTIONS: positiveInt(128),
  /**
   * Resolved principals (key or sign-in session) kept in this process. Every use is checked
   * against the organization's version in Redis (one round trip with the rate limit), so
   * changes apply at once on every replica; the age limit only bounds what a replica that
   * could not publish a change to Redis leaves behind (docs/decisions.md).
   */
  AUTH_CACHE_MAX_ENTRIES: positiveInt(100_000),
  AUTH_CACHE_MAX_AGE_SECONDS: positiveInt(300),
  OUTBOX_POLL_MS: positiveInt(1_000),
  /** How long an operator's request for a four-eyes action waits for its approval (docs/ops.md, "Four eyes"). */
  OPS_APPROVAL_TTL_HOURS: z.coerce.number().int().min(1).max(720).default(24),
  /**
   * A capacity increase of more than this many whole units of the capacity's currency, asked by
   * an operator, needs a second operator. 0 (the default): every increase does.
   */
  OPS_APPROVAL_CAPACITY_THRESHOLD: z
    .string()
    .regex(/^\d{1,13}$/, 'must be a whole number of currency units, e.g. 5000000')
    .default('0')
    .transform((units) => BigInt(units)),
  /**
   * Whether `environment: "sandbox"` registrations are accepted (docs/api.md, "Sandbox"). Unset:
   * yes outside production, no in production (`sandboxEnabled`).
   */
  SANDBOX_ENABLED: z.enum(['true', 'false', '1', '0']).optional(),
  /** Lets the ops queue dashboard (`/ops/queues`) retry and remove jobs; read-only by default. */
  QUEUE_DASHBOARD_WRITABLE: flag(false),
  /** Where the partner dashboard's built files are (docs/dashboard.md); services/dashboard/dist by default. */
  DASHBOARD_DIR: z.string().min(1).optional(),
  POLICY_URL: serviceUrl(),
  PAYMENTS_URL: serviceUrl(),
  DETERMINATIONS_URL: serviceUrl(),
  WEBHOOKS_URL: serviceUrl(),
  /**
   * Ed25519 keys for dashboard access tokens, PKCS#8 PEM blocks: the first signs, the rest
   * (private or SPKI public) still verify, for rotation. Required in production, where every
   * replica must share them; elsewhere a key is made at start and tokens end with the process.
   */
  DASHBOARD_TOKEN_KEYS: z.string().optional(),
  /** The `iss` of dashboard access tokens (and the only one accepted). */
  DASHBOARD_TOKEN_ISSUER: z.string().min(1).default('urn:parametric:gateway'),
  ACCESS_TOKEN_TTL_SECONDS: positiveInt(900),
  REFRESH_TOKEN_TTL_SECONDS: positiveInt(604_800),
  INVITATION_TTL_SECONDS: positiveInt(259_200),
  /** Failed sign-ins allowed per account, then per client address, in LOGIN_WINDOW_SECONDS. */
  LOGIN_ACCOUNT_FAILURES: positiveInt(5),
  LOGIN_IP_FAILURES: positiveInt(50),
  LOGIN_WINDOW_SECONDS: positiveInt(900),
  /**
   * Single sign-on for operators (issue 25; docs/ops.md, "Single sign-on"): bearer tokens from
   * this OpenID Connect issuer, for this audience, are accepted on the ops API. Both or neither.
   */
  OPS_OIDC_ISSUER: z.url().optional(),
  OPS_OIDC_AUDIENCE: z.string().min(1).optional(),
  /** The claim holding the ops role (`OPS_ADMIN`, `UNDERWRITER`, `FINANCE`, `SUPPORT`). */
  OPS_OIDC_ROLE_CLAIM: z.string().min(1).default('ops_role'),
  /** The longest wait for the issuer's discovery document or keys. */
  OPS_OIDC_TIMEOUT_MS: positiveInt(5_000),
});

export type GatewayConfig = z.infer<typeof gatewayConfigSchema>;

export function loadGatewayConfig(env: NodeJS.ProcessEnv = process.env): GatewayConfig {
  const config = loadConfig(gatewayConfigSchema, env);
  // Parsed now, so a bad or missing key stops the gateway at start with the reason.
  dashboardTokenKeys(config);
  opsOidcSettings(config);
  return config;
}

/** SANDBOX_ENABLED as set, or by default on everywhere but production. */
export function sandboxEnabled(config: Pick<GatewayConfig, 'SANDBOX_ENABLED' | 'NODE_ENV'>): boolean {
  if (config.SANDBOX_ENABLED === undefined) return config.NODE_ENV !== 'production';
  return config.SANDBOX_ENABLED === 'true' || config.SANDBOX_ENABLED === '1';
}

export interface OpsOidcSettings {
  issuer: string;
  audience: string;
  roleClaim: string;
  timeoutMs: number;
  /** Whether the issuer's documents may be fetched over plain http (never in production). */
  allowHttp: boolean;
}

/**
 * The single sign-on settings, or undefined when it is off. Production fetches the issuer's
 * keys over https only: a key set read in the clear could be replaced on the way.
 */
export function opsOidcSettings(config: GatewayConfig): OpsOidcSettings | undefined {
  const { OPS_OIDC_ISSUER: issuer, OPS_OIDC_AUDIENCE: audience } = config;
  if (issuer === undefined && audience === undefined) return undefined;
  if (issuer === undefined || audience === undefined) {
    throw new Error('OPS_OIDC_ISSUER and OPS_OIDC_AUDIENCE are set together or not at all');
  }
  const allowHttp = config.NODE_ENV !== 'production';
  if (!allowHttp && new URL(issuer).protocol !== 'https:') {
    throw new Error('OPS_OIDC_ISSUER must be an https URL in production');
  }
  return {
    issuer,
    audience,
    roleClaim: config.OPS_OIDC_ROLE_CLAIM,
    timeoutMs: config.OPS_OIDC_TIMEOUT_MS,
    allowHttp,
  };
}

/**
 * docker-compose's dashboard token key for local runs: its seed is public (the text
 * "local-dev-gateway-dashboard-keys"), so anyone could mint dashboard tokens with it.
 */
const PUBLIC_DEV_KEY_PEM = `-----BEGIN PRIVATE KEY-----
MC4CAQAwBQYDK2VwBCIEIGxvY2FsLWRldi1nYXRld2F5LWRhc2hib2FyZC1rZXlz
-----END PRIVATE KEY-----`;

/** The configured token keys, or (outside production) a key made for this process. */
export function dashboardTokenKeys(config: GatewayConfig): Ed25519KeyBundle {
  if (config.DASHBOARD_TOKEN_KEYS) {
    const keys = loadEd25519Keys(config.DASHBOARD_TOKEN_KEYS, 'dashboard token keys');
    const publicKid = loadEd25519Keys(PUBLIC_DEV_KEY_PEM, 'dashboard token keys').activeKid;
    if (config.NODE_ENV === 'production' && keys.activeKid === publicKid) {
      throw new Error(
        'DASHBOARD_TOKEN_KEYS signs with the public docker-compose development key; production needs its own key',
      );
    }
    return keys;
  }
  if (config.NODE_ENV === 'production') {
    throw new Error('DASHBOARD_TOKEN_KEYS must be set in production (every gateway replica signs with them)');
  }
  return loadEd25519Keys(generateEd25519KeyPem(), 'dashboard token keys');
}
