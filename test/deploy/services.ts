/**
 * The platform's deployed services, as the deployment tests know them: each one's own config
 * schema and loader (imported from the service, so the tests follow its code), its ports, and
 * the environment a deployment must give it. Every `k8s/base/<name>-deployment.yaml` needs an
 * entry here, and every entry needs one (the tests check both ways).
 */
import { generateKeyPairSync } from 'node:crypto';
import {
  determinationsConfigSchema,
  loadDeterminationsConfig,
} from '../../services/determinations/src/config';
import { gatewayConfigSchema, loadGatewayConfig } from '../../services/gateway/src/config';
import { loadPaymentsConfig, paymentsConfigSchema } from '../../services/payments/src/config';
import { loadPolicyConfig, policyConfigSchema } from '../../services/policy/src/config';
import { loadWebhooksConfig, webhooksConfigSchema } from '../../services/webhooks/src/config';

/** What the tests use of a service's zod schema. */
export interface ConfigSchema {
  readonly shape: Readonly<Record<string, unknown>>;
  safeParse(env: unknown): { success: boolean; data?: unknown; error?: { issues: readonly unknown[] } };
}

export interface DeployedService {
  /** The Deployment, its container, the Service, the compose service and the SERVICE build arg. */
  name: string;
  schema: ConfigSchema;
  /** The service's own loader: its schema plus the rules across variables; throws when invalid. */
  load(env: NodeJS.ProcessEnv): Record<string, unknown>;
  /** Container ports by name: the number, and the variable that sets the port the process listens on. */
  ports: Record<string, { containerPort: number; env: string }>;
  /** Ports an overlay may expose outside the cluster (through an Ingress). The others stay internal. */
  publicPorts: string[];
  /** Variables that only ever come from the `platform-secrets` Secret. */
  secretEnv: string[];
  /**
   * Secret variables that come from a Secret of the service's own instead, by Secret name:
   * mounted by its Deployment only (one `secretKeyRef` per variable, the key named like the
   * variable), never in platform-secrets, never given to another service (here or in compose).
   * Each has its example `k8s/base/<secret>.example.yaml`.
   */
  ownSecrets: Record<string, string[]>;
  /** Variables a deployment must set explicitly (a default would be wrong or ambiguous there). */
  nonSecretEnv: string[];
  /** Of `nonSecretEnv`, those the service runs without (another service's URL, not deployed yet). */
  optionalEnv: string[];
  /** Seconds the process may need after SIGTERM to shut down gracefully, given its config. */
  shutdownSeconds(config: Record<string, unknown>): number;
}

const gateway: DeployedService = {
  name: 'gateway',
  schema: gatewayConfigSchema,
  load: loadGatewayConfig,
  ports: {
    http: { containerPort: 3000, env: 'GATEWAY_PORT' },
    ops: { containerPort: 3001, env: 'OPS_PORT' },
  },
  publicPorts: ['http'],
  secretEnv: ['MONGO_URL', 'REDIS_URL', 'INTERNAL_SIGNING_SECRET'],
  ownSecrets: {
    // The ops API's token and the API key pepper: only the gateway serves the ops API and checks keys.
    'gateway-credentials': ['OPS_TOKEN', 'API_KEY_PEPPER'],
    // The dashboard token keys: every gateway replica signs and verifies with them (required in
    // production), and no other service may see them.
    'gateway-dashboard-token-key': ['DASHBOARD_TOKEN_KEYS'],
  },
  nonSecretEnv: [
    'NODE_ENV',
    'LOG_LEVEL',
    'GATEWAY_PORT',
    'OPS_PORT',
    'MONGO_DB',
    'REDIS_PREFIX',
    'POLICY_URL',
    'PAYMENTS_URL',
    'DETERMINATIONS_URL',
    'WEBHOOKS_URL',
    'RATE_LIMIT_POINTS',
    'RATE_LIMIT_WINDOW_SECONDS',
  ],
  optionalEnv: ['POLICY_URL', 'PAYMENTS_URL', 'DETERMINATIONS_URL', 'WEBHOOKS_URL'],
  // HTTP, its workers, Redis and MongoDB close within seconds.
  shutdownSeconds: () => 20,
};

const webhooks: DeployedService = {
  name: 'webhooks',
  schema: webhooksConfigSchema,
  load: loadWebhooksConfig,
  ports: { http: { containerPort: 3000, env: 'WEBHOOKS_PORT' } },
  // No public routes: only the gateway calls it.
  publicPorts: [],
  secretEnv: ['MONGO_URL', 'REDIS_URL', 'INTERNAL_SIGNING_SECRET'],
  // The key sealing partners' webhook signing secrets at rest: no other service may see it.
  ownSecrets: { 'webhooks-encryption-key': ['WEBHOOK_SECRET_KEY'] },
  nonSecretEnv: ['NODE_ENV', 'LOG_LEVEL', 'WEBHOOKS_PORT', 'MONGO_DB', 'REDIS_PREFIX'],
  optionalEnv: [],
  // The delivery workers let the attempts in flight finish (each bounded by
  // DELIVERY_TIMEOUT_MS), then the same closing as the gateway.
  shutdownSeconds: (config) => Math.ceil(Number(config.DELIVERY_TIMEOUT_MS) / 1000) + 20,
};

/**
 * Chain calls one activation can make, each bounded by CHAIN_TIMEOUT_MS (libs/chain's registry
 * client): idOf, the send, the receipt wait, and after a reverted receipt idOf and the
 * PolicyRegistered lookup again.
 */
const CHAIN_CALLS_PER_ACTIVATION = 5;

const policy: DeployedService = {
  name: 'policy',
  schema: policyConfigSchema,
  load: loadPolicyConfig,
  ports: { http: { containerPort: 3000, env: 'POLICY_PORT' } },
  // No public routes: only the gateway calls it (its partner and ops routes, signed contexts).
  publicPorts: [],
  secretEnv: ['MONGO_URL', 'REDIS_URL', 'INTERNAL_SIGNING_SECRET'],
  // The registry owner's key, and CHAIN_RPC_URL (a secret: hosted RPC providers put the API key
  // in the URL): only the policy service talks to the chain.
  ownSecrets: { 'policy-chain-credentials': ['CHAIN_RPC_URL', 'CHAIN_PRIVATE_KEY'] },
  // CHAIN_REGISTRY_ADDRESS differs per environment (each chain has its own registry).
  nonSecretEnv: [
    'NODE_ENV',
    'LOG_LEVEL',
    'POLICY_PORT',
    'MONGO_DB',
    'REDIS_PREFIX',
    'CHAIN_REGISTRY_ADDRESS',
  ],
  optionalEnv: [],
  // HTTP closes once the Tier 1 activations in flight answered, the activation workers let the
  // Tier 2 ones finish: one activation is at most CHAIN_CALLS_PER_ACTIVATION chain calls of
  // CHAIN_TIMEOUT_MS each. Then the same closing as the gateway (relay, Redis, MongoDB).
  shutdownSeconds: (config) =>
    Math.ceil((CHAIN_CALLS_PER_ACTIVATION * Number(config.CHAIN_TIMEOUT_MS)) / 1000) + 20,
};

const determinations: DeployedService = {
  name: 'determinations',
  schema: determinationsConfigSchema,
  load: loadDeterminationsConfig,
  ports: { http: { containerPort: 3000, env: 'DETERMINATIONS_PORT' } },
  // No public routes of its own: the gateway forwards its partner and ops routes (signed
  // contexts) and passes its JWKS on; the Service stays internal.
  publicPorts: [],
  secretEnv: ['MONGO_URL', 'REDIS_URL', 'INTERNAL_SIGNING_SECRET'],
  // The signing keys: the one secret no other service may see.
  ownSecrets: { 'determinations-signing-key': ['DETERMINATION_SIGNING_KEYS'] },
  // POLICY_URL is required here (attribution reads policies), unlike the gateway's.
  nonSecretEnv: ['NODE_ENV', 'LOG_LEVEL', 'DETERMINATIONS_PORT', 'MONGO_DB', 'REDIS_PREFIX', 'POLICY_URL'],
  optionalEnv: [],
  // HTTP closes once the requests in flight answered, the ingest worker lets its jobs finish:
  // each waits at most POLICY_TIMEOUT_MS for the policy service. Then the same closing as the
  // gateway (sweep, relays, producers, MongoDB).
  shutdownSeconds: (config) => Math.ceil(Number(config.POLICY_TIMEOUT_MS) / 1000) + 20,
};

/**
 * Daraja calls one request can make, each bounded by MPESA_TIMEOUT_MS (the payments service's
 * Daraja client): the OAuth token, the push or STK query, and after an Invalid Access Token
 * answer a fresh token and the request again.
 */
const DARAJA_CALLS_PER_REQUEST = 4;

const payments: DeployedService = {
  name: 'payments',
  schema: paymentsConfigSchema,
  load: loadPaymentsConfig,
  ports: {
    http: { containerPort: 3000, env: 'PAYMENTS_PORT' },
    callbacks: { containerPort: 3001, env: 'PAYMENTS_CALLBACK_PORT' },
  },
  // Daraja's callbacks reach the callback listener from the internet (through an Ingress to its
  // own Service); the internal API stays internal (partners go through the gateway).
  publicPorts: ['callbacks'],
  secretEnv: ['MONGO_URL', 'REDIS_URL', 'INTERNAL_SIGNING_SECRET'],
  // The M-Pesa credentials and the callback path token: no other service may see them.
  ownSecrets: {
    'payments-provider-credentials': [
      'MPESA_CONSUMER_KEY',
      'MPESA_CONSUMER_SECRET',
      'MPESA_SHORTCODE',
      'MPESA_PASSKEY',
      'MPESA_B2C_SHORTCODE',
      'MPESA_INITIATOR_NAME',
      'MPESA_SECURITY_CREDENTIAL',
      'PAYMENTS_CALLBACK_TOKEN',
    ],
  },
  // Its third parties and its public callback URL differ per environment; both ports are set
  // explicitly, to match the container ports.
  nonSecretEnv: [
    'NODE_ENV',
    'LOG_LEVEL',
    'PAYMENTS_PORT',
    'PAYMENTS_CALLBACK_PORT',
    'MONGO_DB',
    'REDIS_PREFIX',
    'POLICY_URL',
    'DETERMINATIONS_URL',
    'PAYMENTS_CALLBACK_BASE_URL',
    'MPESA_BASE_URL',
    'RATE_SOURCE_URL',
  ],
  optionalEnv: [],
  // Both listeners close once the requests in flight answered: an initiation waits at most
  // POLICY_TIMEOUT_MS for the policy service, then DARAJA_CALLS_PER_REQUEST Daraja calls of
  // MPESA_TIMEOUT_MS each (a callback's confirming STK query as long); the sweep's job in flight
  // makes one STK query at a time. Then the same closing as the gateway (relay, producers,
  // provider and rate clients, MongoDB).
  shutdownSeconds: (config) =>
    Math.ceil(
      (Number(config.POLICY_TIMEOUT_MS) + DARAJA_CALLS_PER_REQUEST * Number(config.MPESA_TIMEOUT_MS)) / 1000,
    ) + 20,
};

export const SERVICES: readonly DeployedService[] = [gateway, webhooks, policy, determinations, payments];

export function service(name: string): DeployedService {
  const found = SERVICES.find((s) => s.name === name);
  if (!found) throw new Error(`no entry for service ${name} in test/deploy/services.ts`);
  return found;
}

const union = (lists: string[][]): string[] => [...new Set(lists.flat())];

/** Keys of the `platform-secrets` Secret: every service's secret variables. */
export const SECRET_ENV = union(SERVICES.map((s) => s.secretEnv));
/** Variables of the services' own Secrets: in none of the shared ConfigMap, Secret, or other services. */
export const OWN_SECRET_ENV = union(SERVICES.flatMap((s) => Object.values(s.ownSecrets)));
/** The services' own Secrets: name, the service that mounts it, its keys. */
export const OWN_SECRETS = SERVICES.flatMap((s) =>
  Object.entries(s.ownSecrets).map(([secret, keys]) => ({ secret, service: s.name, keys })),
);
/** Non-secret variables some service must be given explicitly. */
export const NON_SECRET_ENV = union(SERVICES.map((s) => s.nonSecretEnv));
/** Internal base URLs of other services: optional, a service runs without them. */
export const OPTIONAL_ENV = union(SERVICES.map((s) => s.optionalEnv));

/**
 * Real secrets are not in git: stand-ins of the shape each service requires, for checking a
 * deployed environment against the schemas.
 */
export function standInSecret(key: string): string {
  if (key === 'WEBHOOK_SECRET_KEY') return Buffer.alloc(32, 7).toString('base64');
  // Hosted providers' shape, with the API key in the path.
  if (key === 'CHAIN_RPC_URL') return 'https://rpc.example.net/v3/stand-in-api-key-0123456789';
  // 32 bytes of hex, and not one of anvil's public dev keys (refused in production).
  if (key === 'CHAIN_PRIVATE_KEY') return `0x${'5a'.repeat(32)}`;
  // PKCS#8 PEM of a fresh Ed25519 key, the shape the determinations service signs with and the
  // gateway signs dashboard tokens with (a key of its own for each).
  if (key === 'DETERMINATION_SIGNING_KEYS' || key === 'DASHBOARD_TOKEN_KEYS') return ed25519Pem(key);
  // M-Pesa shortcodes are 5 to 7 digits (paybill, B2C).
  if (key === 'MPESA_SHORTCODE') return '4123456';
  if (key === 'MPESA_B2C_SHORTCODE') return '3123456';
  return `stand-in-${key.toLowerCase()}-0123456789`;
}

const standInPems = new Map<string, string>();
function ed25519Pem(key: string): string {
  const pem =
    standInPems.get(key) ??
    String(generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }));
  standInPems.set(key, pem);
  return pem;
}
