/**
 * The platform's topology, written once: its services, the ports each listens on (`npm start`'s
 * and in a container), what each needs from the others (base URLs, shared and own secrets, the
 * stores), and the local stand-ins for third parties. `npm start` (scripts/start.ts) wires and
 * stops the platform from it, the fault suite (test/faults) wires its stacks from it, and the
 * deploy checks (test/deploy) hold docker-compose.yml and k8s/ against it, so a service, port or
 * URL added here and not there (or there and not here) fails a test instead of drifting.
 *
 * Plain data and small functions: no dependencies, nothing started.
 */

export type ServiceName = 'gateway' | 'webhooks' | 'policy' | 'determinations' | 'payments';
export type StandInName = 'webhook-receiver' | 'mpesa-simulator' | 'rate-simulator';
export type StoreName = 'mongo' | 'redis' | 'chain';
/** Every process `npm start` runs or starts: services, stand-ins and stores. */
export type ProcessName = ServiceName | StandInName | StoreName;

/** One port a process listens on. */
export interface Listener {
  /** The variable the port is read from: the service's config, or `npm start`'s for a stand-in. */
  portEnv: string;
  /** `npm start`'s port (the variable above moves it). */
  localPort: number;
  /** The port inside its container (docker-compose, Kubernetes); absent when never deployed. */
  containerPort?: number;
  /** The variable of the address it binds, when the process reads one. */
  hostEnv?: string;
  /**
   * The address `npm start` binds it to: loopback for everything only this machine may reach;
   * absent for the partner API, which keeps the service's default (every interface), as in
   * containers.
   */
  localHost?: string;
  /** Reached from outside the platform (partners, a provider's callbacks): published, or an Ingress. */
  public: boolean;
  /** A path that answers 200 once the process is ready to serve. */
  readyPath?: string;
}

/** A base URL a service is given to reach another process's listener. */
export interface Call {
  to: ServiceName | StandInName;
  /** The listener's name in `to`'s ports. */
  port: string;
  /** The service runs without it (the routes that need it fail until it is there). */
  optional?: boolean;
}

export interface ServiceSpec {
  name: ServiceName;
  /** Its entry point, from the repository root (libs/runtime's `runService`). */
  main: string;
  /** Its listeners by name; `http` is the one other services call. */
  ports: Record<string, Listener>;
  /** Base URLs it needs, by variable. */
  calls: Record<string, Call>;
  /** URLs of its own listeners it hands to others (a provider's callbacks), by variable. */
  ownUrls: Record<string, string>;
  stores: StoreName[];
  /** Third parties it reaches without being given their URL (partners' webhook endpoints). */
  reaches: StandInName[];
  /** Secrets every service that has them must hold the same value of. */
  sharedSecrets: string[];
  /** Secrets given to this service only (never in a shared Secret, never to another service). */
  ownSecrets: string[];
  /**
   * Own secrets (this service's only, like `ownSecrets`) that a deployment may leave unset: the
   * service runs without what they enable. No deployment requires them, and npm start gives them
   * only when it has a value.
   */
  optionalSecrets: string[];
}

export interface StandInSpec {
  name: StandInName;
  /** The third party it stands in for, locally and in docker-compose. */
  standsInFor: string;
  ports: { http: Listener };
}

/** How a deployment gives a store's variable: a secret shared by its users, one user's own secret, or plain config. */
export type StoreVariable = 'shared-secret' | 'own-secret' | 'config';

export interface StoreSpec {
  name: StoreName;
  /** For people: `[start] Redis stopped`. */
  label: string;
  /** The variables a service using it is given. */
  env: Record<string, StoreVariable>;
}

const PLATFORM_SECRETS = ['INTERNAL_SIGNING_SECRET'];

const gateway: ServiceSpec = {
  name: 'gateway',
  main: 'services/gateway/src/main.ts',
  ports: {
    http: {
      portEnv: 'GATEWAY_PORT',
      localPort: 3000,
      containerPort: 3000,
      hostEnv: 'GATEWAY_HOST',
      public: true,
      readyPath: '/readyz',
    },
    // The ops API is for operators on this machine only (containers keep 0.0.0.0).
    ops: {
      portEnv: 'OPS_PORT',
      localPort: 3001,
      containerPort: 3001,
      hostEnv: 'OPS_HOST',
      localHost: '127.0.0.1',
      public: false,
    },
  },
  calls: {
    WEBHOOKS_URL: { to: 'webhooks', port: 'http', optional: true },
    POLICY_URL: { to: 'policy', port: 'http', optional: true },
    DETERMINATIONS_URL: { to: 'determinations', port: 'http', optional: true },
    PAYMENTS_URL: { to: 'payments', port: 'http', optional: true },
  },
  ownUrls: {},
  stores: ['mongo', 'redis'],
  reaches: [],
  sharedSecrets: PLATFORM_SECRETS,
  // The ops token and the key pepper (only the gateway serves ops and checks keys), the
  // dashboard token keys (only the gateway signs and verifies sign-ins).
  ownSecrets: ['OPS_TOKEN', 'API_KEY_PEPPER', 'DASHBOARD_TOKEN_KEYS'],
  optionalSecrets: [],
};

/** An internal service's one listener: reached through the gateway only. */
const internal = (portEnv: string, hostEnv: string, localPort: number): Listener => ({
  portEnv,
  localPort,
  containerPort: 3000,
  hostEnv,
  localHost: '127.0.0.1',
  public: false,
  readyPath: '/readyz',
});

const webhooks: ServiceSpec = {
  name: 'webhooks',
  main: 'services/webhooks/src/main.ts',
  ports: { http: internal('WEBHOOKS_PORT', 'WEBHOOKS_HOST', 3002) },
  calls: {},
  ownUrls: {},
  stores: ['mongo', 'redis'],
  reaches: ['webhook-receiver'],
  sharedSecrets: PLATFORM_SECRETS,
  // The key sealing partners' webhook signing secrets at rest.
  ownSecrets: ['WEBHOOK_SECRET_KEY'],
  optionalSecrets: [],
};

const policy: ServiceSpec = {
  name: 'policy',
  main: 'services/policy/src/main.ts',
  ports: { http: internal('POLICY_PORT', 'POLICY_HOST', 3003) },
  calls: {},
  ownUrls: {},
  stores: ['mongo', 'redis', 'chain'],
  reaches: [],
  sharedSecrets: PLATFORM_SECRETS,
  ownSecrets: [],
  optionalSecrets: [],
};

const determinations: ServiceSpec = {
  name: 'determinations',
  main: 'services/determinations/src/main.ts',
  ports: { http: internal('DETERMINATIONS_PORT', 'DETERMINATIONS_HOST', 3004) },
  // Attribution reads policies: required here, unlike the gateway's.
  calls: { POLICY_URL: { to: 'policy', port: 'http' } },
  ownUrls: {},
  stores: ['mongo', 'redis'],
  reaches: [],
  sharedSecrets: PLATFORM_SECRETS,
  // The keys determinations are signed with.
  ownSecrets: ['DETERMINATION_SIGNING_KEYS'],
  // Sandbox organizations' test determinations are signed with these; unset (production),
  // there are none (docs/determinations.md, "Public keys").
  optionalSecrets: ['SANDBOX_SIGNING_KEYS'],
};

/** The M-Pesa (Daraja) credentials: payments' own. */
export const MPESA_CREDENTIAL_ENV = [
  'MPESA_CONSUMER_KEY',
  'MPESA_CONSUMER_SECRET',
  'MPESA_SHORTCODE',
  'MPESA_PASSKEY',
  'MPESA_B2C_SHORTCODE',
  'MPESA_INITIATOR_NAME',
  'MPESA_SECURITY_CREDENTIAL',
] as const;

const payments: ServiceSpec = {
  name: 'payments',
  main: 'services/payments/src/main.ts',
  ports: {
    http: internal('PAYMENTS_PORT', 'PAYMENTS_HOST', 3005),
    // Daraja's entry point, never partners': public in a deployment (its own Ingress), loopback
    // here, where the simulator calls it back.
    callbacks: {
      portEnv: 'PAYMENTS_CALLBACK_PORT',
      localPort: 3006,
      containerPort: 3001,
      hostEnv: 'PAYMENTS_CALLBACK_HOST',
      localHost: '127.0.0.1',
      public: true,
      readyPath: '/readyz',
    },
  },
  calls: {
    POLICY_URL: { to: 'policy', port: 'http' },
    // Payouts read what each determination makes owed there.
    DETERMINATIONS_URL: { to: 'determinations', port: 'http' },
    MPESA_BASE_URL: { to: 'mpesa-simulator', port: 'http' },
    RATE_SOURCE_URL: { to: 'rate-simulator', port: 'http' },
  },
  ownUrls: { PAYMENTS_CALLBACK_BASE_URL: 'callbacks' },
  stores: ['mongo', 'redis'],
  reaches: [],
  sharedSecrets: PLATFORM_SECRETS,
  ownSecrets: [...MPESA_CREDENTIAL_ENV, 'PAYMENTS_CALLBACK_TOKEN'],
  optionalSecrets: [],
};

/**
 * What every service's `node` is started with, wherever it runs: `npm start` (scripts/start.ts),
 * the image's CMD (Dockerfile; test/deploy/dockerfile.test.ts holds it to this list), the fault
 * suite's stacks and the benchmarks' processes (bench/support/run.ts).
 *
 * `--no-allocation-site-pretenuring`: without it, about a quarter of what a gateway request
 * allocates survived each young collection and was promoted (10.6 MB per collection, 13-18 ms each,
 * against 3.5 MB and 5-6 ms with it) though nothing kept the requests: what fits is V8 allocating
 * request-scoped objects straight into the old generation, whose dead copies keep the young
 * objects they point to alive; garbage collection was the largest cost of
 * `GET /api/organizations/me` after socket writes
 * (docs/performance.md, "Young-generation collections: V8's pretenuring").
 *
 * `--no-memory-reducer`: V8's memory reducer, once a process has been quiet for a few seconds,
 * runs full collections to hand memory back, shrinking the young generation with the rest. A
 * service's next burst then starts with a young generation of a megabyte or so: young
 * collections every 20-35 ms, and full collections of the whole heap (about 60 MB of code,
 * schemas and pools in the policy service) every second or two until it has grown back. Served
 * in bursts with quiet spells between them, `GET /api/policies/{id}` cost the gateway and the
 * policy service together 2,160-2,420 µs of CPU with the reducer and 1,690-1,960 without; a
 * second process of each scaled-out service grew the drought day's CPU per determination
 * 1.26-1.29 times with it and 1.13-1.15 without; and an idle policy process spent 25 ms of CPU a
 * second in its first minute of rest, 40 % of it in those collections (docs/performance.md,
 * "Bursts after a quiet spell: V8's memory reducer"). A pod keeps the heap its last burst needed
 * instead; V8's heap limits and the pod's memory limit still bound it.
 */
export const SERVICE_NODE_FLAGS: readonly string[] = [
  '--no-allocation-site-pretenuring',
  '--no-memory-reducer',
];

/**
 * `node`'s arguments for a TypeScript entry point run from source as a service runs: the
 * service flags, `extra` (e.g. a benchmark's `--cpu-prof`), then tsx and the entry. The one
 * spelling of it for `npm start`, the fault suite and the benchmarks (the image runs compiled
 * JavaScript with the same flags: its CMD).
 */
export function serviceNodeArgs(entry: string, extra: readonly string[] = []): string[] {
  return [...SERVICE_NODE_FLAGS, ...extra, '--import', 'tsx', entry];
}

/** The deployed services, in the order `npm start` lists them. */
export const SERVICES: readonly ServiceSpec[] = [gateway, webhooks, policy, determinations, payments];

const standInPort = (portEnv: string, localPort: number, containerPort?: number, readyPath?: string) => ({
  portEnv,
  localPort,
  ...(containerPort === undefined ? {} : { containerPort }),
  localHost: '127.0.0.1',
  public: false,
  ...(readyPath === undefined ? {} : { readyPath }),
});

export const STAND_INS: readonly StandInSpec[] = [
  {
    name: 'mpesa-simulator',
    standsInFor: 'Safaricom Daraja (M-Pesa)',
    ports: { http: standInPort('MPESA_SIMULATOR_PORT', 4200, 4010, '/_requests') },
  },
  {
    name: 'rate-simulator',
    standsInFor: "Coinbase's exchange rates",
    ports: { http: standInPort('RATE_SIMULATOR_PORT', 4100, 4100, '/_requests') },
  },
  {
    // Locally only: a deployment's partners run their own endpoints.
    name: 'webhook-receiver',
    standsInFor: "a partner's webhook endpoint",
    ports: { http: standInPort('WEBHOOK_RECEIVER_PORT', 4000, undefined, '/_received') },
  },
];

export const STORES: readonly StoreSpec[] = [
  { name: 'mongo', label: 'MongoDB', env: { MONGO_URL: 'shared-secret' } },
  { name: 'redis', label: 'Redis', env: { REDIS_URL: 'shared-secret' } },
  {
    name: 'chain',
    label: 'Chain',
    // Hosted RPC providers put their API key in the URL: a secret, like the registry owner's key.
    env: { CHAIN_RPC_URL: 'own-secret', CHAIN_REGISTRY_ADDRESS: 'config', CHAIN_PRIVATE_KEY: 'own-secret' },
  },
];

export function service(name: ServiceName): ServiceSpec {
  return SERVICES.find((s) => s.name === name) as ServiceSpec;
}

export function standIn(name: StandInName): StandInSpec {
  return STAND_INS.find((s) => s.name === name) as StandInSpec;
}

export function store(name: StoreName): StoreSpec {
  return STORES.find((s) => s.name === name) as StoreSpec;
}

/** Every listener of the platform's processes, each with its process's name. */
export function listeners(): Array<{ process: ServiceName | StandInName; name: string; listener: Listener }> {
  return [...SERVICES, ...STAND_INS].flatMap((p) =>
    Object.entries(p.ports).map(([name, listener]) => ({ process: p.name, name, listener })),
  );
}

/** The ports of some of the processes, by process and listener name. */
export type Ports = Partial<Record<ServiceName | StandInName, Record<string, number>>>;

/**
 * `npm start`'s ports: each listener's variable when set (GATEWAY_PORT, MPESA_SIMULATOR_PORT,
 * …), else its default. Throws on a value that is not a port.
 */
export function localPorts(env: NodeJS.ProcessEnv): Ports {
  const ports: Ports = {};
  for (const { process, name, listener } of listeners()) {
    const raw = env[listener.portEnv] || undefined;
    const port = raw === undefined ? listener.localPort : Number(raw);
    if (raw !== undefined && (!/^\d+$/.test(raw) || port < 1 || port > 65535))
      throw new Error(`${listener.portEnv} must be a port number (1-65535), not "${raw}"`);
    ports[process] = { ...ports[process], [name]: port };
  }
  return ports;
}

/** The loopback URL of a process's listener, when its port is known. */
export function localUrl(ports: Ports, to: ServiceName | StandInName, port = 'http'): string | undefined {
  const number = ports[to]?.[port];
  return number === undefined ? undefined : `http://127.0.0.1:${number}`;
}

/**
 * The environment that places service `name` among processes on this machine: the port (and
 * `npm start`'s bind address) of each of its listeners found in `ports`, and the URL of each
 * process it calls, and of its own listeners it hands out, found there too. What `ports` lacks
 * is left out (a fault scenario runs a few services, and gives the rest itself).
 */
export function localWiring(name: ServiceName, ports: Ports): Record<string, string> {
  const spec = service(name);
  const env: Record<string, string> = {};
  for (const [portName, listener] of Object.entries(spec.ports)) {
    const port = ports[name]?.[portName];
    if (port === undefined) continue;
    env[listener.portEnv] = String(port);
    if (listener.hostEnv && listener.localHost) env[listener.hostEnv] = listener.localHost;
  }
  for (const [variable, call] of Object.entries(spec.calls)) {
    const url = localUrl(ports, call.to, call.port);
    if (url) env[variable] = url;
  }
  for (const [variable, portName] of Object.entries(spec.ownUrls)) {
    const url = localUrl(ports, name, portName);
    if (url) env[variable] = url;
  }
  return env;
}

/** The store variables service `name` is given, by how a deployment gives them. */
export function storeEnv(name: ServiceName): Record<string, StoreVariable> {
  return Object.assign({}, ...service(name).stores.map((s) => store(s).env));
}

/** Every secret some service holds: shared ones, own ones (optional included) and the stores' secret variables. */
export function secretNames(): string[] {
  const names = SERVICES.flatMap((s) => [
    ...s.sharedSecrets,
    ...s.ownSecrets,
    ...s.optionalSecrets,
    ...Object.entries(storeEnv(s.name))
      .filter(([, how]) => how !== 'config')
      .map(([variable]) => variable),
  ]);
  return [...new Set(names)];
}

/** What process `name` needs running while it runs: the services and stand-ins it calls or reaches, its stores. */
export function usesOf(name: ProcessName): ProcessName[] {
  const spec = SERVICES.find((s) => s.name === name);
  if (!spec) return [];
  return [
    ...new Set<ProcessName>([...Object.values(spec.calls).map((c) => c.to), ...spec.reaches, ...spec.stores]),
  ];
}

/**
 * The processes that need `name` running: a graceful stop stops these first, so that each drains
 * its work while what it calls still answers, and `name` once they are all gone.
 */
export function usersOf(name: ProcessName): ServiceName[] {
  return SERVICES.filter((s) => usesOf(s.name).includes(name)).map((s) => s.name);
}
