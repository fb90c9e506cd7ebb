/**
 * The platform's deployed services, as the deployment tests know them: each one's own config
 * schema and loader (imported from the service, so the tests follow its code), and from
 * tools/topology (the one description `npm start` and the fault suite run the platform from)
 * its name, its ports, which of them are public, the URLs of the other services and third
 * parties it needs, and the stores and secrets it is given. What only a deployment decides is
 * written here: which Kubernetes Secret holds which own secret, the settings a deployment must
 * set explicitly, the time a service needs to stop. Every `k8s/base/<name>-deployment.yaml`
 * needs an entry here, and every entry needs one (the tests check both ways); an entry here is
 * a service of the topology, so docker-compose.yml and k8s/ drifting from the topology (a
 * service, a port, a URL, a secret) fails the checks that read these entries.
 */
import { generateKeyPairSync } from 'node:crypto';
import {
  type ServiceName,
  type ServiceSpec,
  storeEnv,
  SERVICES as TOPOLOGY_SERVICES,
  service as topologyService,
} from '@parametric/topology';
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
  /** Its entry in tools/topology. */
  topology: ServiceSpec;
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
  /**
   * tools/topology's optional secrets of the service, by the own Secret that may hold them:
   * mounted by its Deployment only, each `secretKeyRef` `optional: true`, shown (commented out)
   * in the Secret's example; never required, here or in compose.
   */
  optionalSecrets: Record<string, string[]>;
  /** Variables a deployment must set explicitly (a default would be wrong or ambiguous there). */
  nonSecretEnv: string[];
  /** Of `nonSecretEnv`, those the service runs without (another service's URL, not deployed yet). */
  optionalEnv: string[];
  /** Seconds the process may need after SIGTERM to shut down gracefully, given its config. */
  shutdownSeconds(config: Record<string, unknown>): number;
}

/** What only a deployment decides about a service; the rest is tools/topology's. */
interface DeploymentOnly {
  schema: ConfigSchema;
  load(env: NodeJS.ProcessEnv): Record<string, unknown>;
  /** The topology's own secrets of the service (its stores' included), by the Secret that holds them. */
  ownSecrets: Record<string, string[]>;
  /** The topology's optional secrets of the service, by the Secret that may hold them. */
  optionalSecrets?: Record<string, string[]>;
  /** Settings beyond the topology's wiring that a deployment must set explicitly. */
  settings?: string[];
  shutdownSeconds(config: Record<string, unknown>): number;
}

/** A deployed service: its topology entry, read the way the deployment checks use it. */
function deployed(name: ServiceName, only: DeploymentOnly): DeployedService {
  const spec = topologyService(name);
  const stores = Object.entries(storeEnv(name));
  const storeVariables = (how: string) =>
    stores.filter(([, given]) => given === how).map(([variable]) => variable);
  return {
    name,
    topology: spec,
    schema: only.schema,
    load: only.load,
    ports: Object.fromEntries(
      Object.entries(spec.ports).map(([portName, listener]) => {
        if (listener.containerPort === undefined)
          throw new Error(`tools/topology gives ${name}'s ${portName} port no container port`);
        return [portName, { containerPort: listener.containerPort, env: listener.portEnv }];
      }),
    ),
    publicPorts: Object.entries(spec.ports)
      .filter(([, listener]) => listener.public)
      .map(([portName]) => portName),
    secretEnv: [...storeVariables('shared-secret'), ...spec.sharedSecrets],
    ownSecrets: only.ownSecrets,
    optionalSecrets: only.optionalSecrets ?? {},
    nonSecretEnv: [
      'NODE_ENV',
      'LOG_LEVEL',
      // Every port explicitly, to match the container ports.
      ...Object.values(spec.ports).map((listener) => listener.portEnv),
      ...(spec.stores.includes('mongo') ? ['MONGO_DB'] : []),
      ...(spec.stores.includes('redis') ? ['REDIS_PREFIX'] : []),
      // The other services' and the third parties' URLs, and its own public ones: they differ
      // per environment.
      ...Object.keys(spec.calls),
      ...Object.keys(spec.ownUrls),
      // CHAIN_REGISTRY_ADDRESS: each chain has its own registry.
      ...storeVariables('config'),
      ...(only.settings ?? []),
    ],
    optionalEnv: Object.entries(spec.calls)
      .filter(([, call]) => call.optional)
      .map(([variable]) => variable),
    shutdownSeconds: only.shutdownSeconds,
  };
}

const gateway = deployed('gateway', {
  schema: gatewayConfigSchema,
  load: loadGatewayConfig,
  ownSecrets: {
    // The ops API's token and the API key pepper: only the gateway serves the ops API and checks keys.
    'gateway-credentials': ['OPS_TOKEN', 'API_KEY_PEPPER'],
    // The dashboard token keys: every gateway replica signs and verifies with them (required in
    // production), and no other service may see them.
    'gateway-dashboard-token-key': ['DASHBOARD_TOKEN_KEYS'],
  },
  settings: ['RATE_LIMIT_POINTS', 'RATE_LIMIT_WINDOW_SECONDS'],
  // HTTP, its workers, Redis and MongoDB close within seconds.
  shutdownSeconds: () => 20,
});

const webhooks = deployed('webhooks', {
  schema: webhooksConfigSchema,
  load: loadWebhooksConfig,
  // The key sealing partners' webhook signing secrets at rest: no other service may see it.
  ownSecrets: { 'webhooks-encryption-key': ['WEBHOOK_SECRET_KEY'] },
  // The delivery workers let the attempts in flight finish (each bounded by
  // DELIVERY_TIMEOUT_MS), then the same closing as the gateway.
  shutdownSeconds: (config) => Math.ceil(Number(config.DELIVERY_TIMEOUT_MS) / 1000) + 20,
});

/**
 * Chain calls one activation can make, each bounded by CHAIN_TIMEOUT_MS (libs/chain's registry
 * client): idOf, the send, the receipt wait, and after a reverted receipt idOf and the
 * PolicyRegistered lookup again.
 */
const CHAIN_CALLS_PER_ACTIVATION = 5;

const policy = deployed('policy', {
  schema: policyConfigSchema,
  load: loadPolicyConfig,
  // The registry owner's key, and CHAIN_RPC_URL (a secret: hosted RPC providers put the API key
  // in the URL): only the policy service talks to the chain.
  ownSecrets: { 'policy-chain-credentials': ['CHAIN_RPC_URL', 'CHAIN_PRIVATE_KEY'] },
  // HTTP closes once the Tier 1 activations in flight answered, the activation workers let the
  // Tier 2 ones finish: one activation is at most CHAIN_CALLS_PER_ACTIVATION chain calls of
  // CHAIN_TIMEOUT_MS each. Then the same closing as the gateway (relay, Redis, MongoDB).
  shutdownSeconds: (config) =>
    Math.ceil((CHAIN_CALLS_PER_ACTIVATION * Number(config.CHAIN_TIMEOUT_MS)) / 1000) + 20,
});

const determinations = deployed('determinations', {
  schema: determinationsConfigSchema,
  load: loadDeterminationsConfig,
  // The signing keys: the one secret no other service may see.
  ownSecrets: { 'determinations-signing-key': ['DETERMINATION_SIGNING_KEYS'] },
  // The sandbox signing keys, beside the live ones when a deployment serves sandbox organizations.
  optionalSecrets: { 'determinations-signing-key': ['SANDBOX_SIGNING_KEYS'] },
  // HTTP closes once the requests in flight answered, the ingest worker lets its jobs finish:
  // each waits at most POLICY_TIMEOUT_MS for the policy service. Then the same closing as the
  // gateway (sweep, relays, producers, MongoDB).
  shutdownSeconds: (config) => Math.ceil(Number(config.POLICY_TIMEOUT_MS) / 1000) + 20,
});

/**
 * Daraja calls one request can make, each bounded by MPESA_TIMEOUT_MS (the payments service's
 * Daraja client): the OAuth token, the push or STK query, and after an Invalid Access Token
 * answer a fresh token and the request again.
 */
const DARAJA_CALLS_PER_REQUEST = 4;

const payments = deployed('payments', {
  schema: paymentsConfigSchema,
  load: loadPaymentsConfig,
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
  // Both listeners close once the requests in flight answered: an initiation waits at most
  // POLICY_TIMEOUT_MS for the policy service, then DARAJA_CALLS_PER_REQUEST Daraja calls of
  // MPESA_TIMEOUT_MS each (a callback's confirming STK query as long); the sweep's job in flight
  // makes one STK query at a time. Then the same closing as the gateway (relay, producers,
  // provider and rate clients, MongoDB).
  shutdownSeconds: (config) =>
    Math.ceil(
      (Number(config.POLICY_TIMEOUT_MS) + DARAJA_CALLS_PER_REQUEST * Number(config.MPESA_TIMEOUT_MS)) / 1000,
    ) + 20,
});

const ENTRIES: Record<ServiceName, DeployedService> = { gateway, webhooks, policy, determinations, payments };

/** Every service of tools/topology, in its order: each one is deployed. */
export const SERVICES: readonly DeployedService[] = TOPOLOGY_SERVICES.map((spec) => ENTRIES[spec.name]);

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
/** The services' optional secrets: the Secret that may hold each, the service that mounts it. */
export const OPTIONAL_SECRETS = SERVICES.flatMap((s) =>
  Object.entries(s.optionalSecrets).flatMap(([secret, keys]) =>
    keys.map((key) => ({ key, secret, service: s.name })),
  ),
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
