/**
 * What ops rely on in the Deployment of every service (each `k8s/base/<name>-deployment.yaml`)
 * and in the platform's configuration: probes on the right paths and port, a locked-down
 * non-root container with resources, a grace period that covers the service's shutdown, and
 * an environment that comes only from platform-config / platform-secrets (plus, for a secret
 * only one service may see, such as the gateway's dashboard token keys, the determinations
 * signing keys or the payments service's M-Pesa credentials, that service's own Secret, which
 * no other Deployment mounts), that each
 * service's own config schema accepts, and that never allows insecure webhook targets.
 *
 * Each check is a function returning the problems it finds. The tests run them on the
 * manifests, then on altered in-memory copies, to show that every check can fail.
 */
import { parseAllDocuments } from 'yaml';
import {
  NON_SECRET_ENV,
  OPTIONAL_ENV,
  OPTIONAL_SECRETS,
  OWN_SECRET_ENV,
  OWN_SECRETS,
  SECRET_ENV,
  SERVICES,
  service,
  standInSecret,
} from './services';
import {
  at,
  configData,
  deploymentFileServices,
  isObj,
  k8sFiles,
  listAt,
  type Obj,
  objAt,
  problemsOf,
  readK8sFile,
  readListedResources,
  resourceIn,
} from './support';

interface Platform {
  /** The resources listed in the kustomization. */
  resources: Obj[];
  /** platform-secrets.example.yaml: the keys the real Secret has. */
  exampleSecret: Obj;
  /** `<secret>.example.yaml` of each service's own Secret, by Secret name. */
  ownSecrets: Record<string, Obj>;
}

type Check = (platform: Platform, name: string) => string[];

const platform: Platform = {
  resources: readListedResources().map(({ obj }) => obj),
  exampleSecret: readK8sFile('platform-secrets.example.yaml'),
  ownSecrets: Object.fromEntries(
    OWN_SECRETS.map(({ secret }) => [secret, readK8sFile(`${secret}.example.yaml`)]),
  ),
};
const deployed = deploymentFileServices();

function deploymentOf(p: Platform, name: string): Obj {
  const deployment = resourceIn(p.resources, 'Deployment', name);
  if (!deployment) throw new Error(`no Deployment ${name} in the kustomization's resources`);
  return deployment;
}

function podSpecOf(p: Platform, name: string): Obj {
  return objAt(deploymentOf(p, name), 'spec.template.spec');
}

/** The service's container: the one named after it. */
function containerOf(p: Platform, name: string): Obj {
  const container = listAt(podSpecOf(p, name), 'containers').find((c) => c.name === name);
  if (!container) throw new Error(`Deployment ${name} has no container named ${name}`);
  return container;
}

function configOf(p: Platform): Record<string, unknown> {
  const configMap = resourceIn(p.resources, 'ConfigMap', 'platform-config');
  if (!configMap) throw new Error('no ConfigMap platform-config in the kustomization');
  return configData(configMap);
}

function secretKeysOf(p: Platform): string[] {
  return Object.keys(configData(p.exampleSecret));
}

/** Keys of a service's own Secret (its example), none when there is no such example. */
function ownSecretKeysOf(p: Platform, secret: string): string[] {
  const example = p.ownSecrets[secret];
  return example ? Object.keys(configData(example)) : [];
}

/** `env` entries of the container that take their value from somewhere (`valueFrom`). */
function referencedEnv(container: Obj): Obj[] {
  return (Array.isArray(container.env) ? container.env.filter(isObj) : []).filter(
    (e) => e.valueFrom !== undefined,
  );
}

/**
 * The container's variables set from a key of a service's own Secret, with stand-ins: those
 * whose `secretKeyRef` names an own Secret's example and one of its keys (any other reference
 * sets nothing here, so the schema then misses the variable).
 */
function ownSecretEnv(p: Platform, container: Obj): Record<string, string> {
  const out: Record<string, string> = {};
  for (const entry of referencedEnv(container)) {
    const ref = isObj(entry.valueFrom) ? entry.valueFrom.secretKeyRef : undefined;
    if (!isObj(ref) || !ownSecretKeysOf(p, String(ref.name)).includes(String(ref.key))) continue;
    out[String(entry.name)] = standInSecret(String(ref.key));
  }
  return out;
}

/** Names of the Secrets a pod spec refers to: envFrom, env `secretKeyRef`, secret and projected volumes. */
function secretsReferenced(node: unknown): string[] {
  if (Array.isArray(node)) return node.flatMap(secretsReferenced);
  if (!isObj(node)) return [];
  return Object.entries(node).flatMap(([key, value]) => {
    const here =
      isObj(value) && ['secretRef', 'secretKeyRef', 'secret'].includes(key)
        ? [String(value.secretName ?? value.name)]
        : [];
    return [...here, ...secretsReferenced(value)];
  });
}

/** Every variable the service's container receives, by any means (names only). */
function envNamesOf(p: Platform, name: string): string[] {
  const container = containerOf(p, name);
  const fromSources = (Array.isArray(container.envFrom) ? container.envFrom.filter(isObj) : []).flatMap(
    (source) => {
      if (isObj(source.configMapRef) && source.configMapRef.name === 'platform-config')
        return Object.keys(configOf(p));
      if (isObj(source.secretRef) && source.secretRef.name === 'platform-secrets') return secretKeysOf(p);
      if (isObj(source.secretRef)) return ownSecretKeysOf(p, String(source.secretRef.name));
      return [];
    },
  );
  const entries = (Array.isArray(container.env) ? container.env.filter(isObj) : []).map((e) =>
    String(e.name),
  );
  return [...new Set([...fromSources, ...entries])];
}

/** Values of `env` entries set literally in the container (not from a ConfigMap/Secret key). */
function literalEnv(container: Obj): Record<string, string> {
  const out: Record<string, string> = {};
  for (const entry of Array.isArray(container.env) ? container.env.filter(isObj) : []) {
    if (typeof entry.value === 'string') out[String(entry.name)] = entry.value;
  }
  return out;
}

/**
 * The environment the service's process gets: ConfigMap, Secret (stand-ins), then its own `env`
 * (keys of its own Secret, stand-ins too, and literal values).
 */
function deployedEnv(p: Platform, name: string): NodeJS.ProcessEnv {
  const config = Object.fromEntries(Object.entries(configOf(p)).map(([k, v]) => [k, String(v)]));
  const secrets = Object.fromEntries(secretKeysOf(p).map((key) => [key, standInSecret(key)]));
  const container = containerOf(p, name);
  return { ...config, ...secrets, ...ownSecretEnv(p, container), ...literalEnv(container) };
}

/** The service's configuration as its own schema reads the deployed environment. */
function parsedConfig(p: Platform, name: string): Record<string, unknown> {
  const parsed = service(name).schema.safeParse(deployedEnv(p, name));
  if (!parsed.success || !isObj(parsed.data)) {
    throw new Error(`${name}'s config schema rejects the deployed environment`);
  }
  return parsed.data;
}

function portNumber(container: Obj, portName: string): number {
  const port = listAt(container, 'ports').find((p) => p.name === portName);
  if (!port || typeof port.containerPort !== 'number') throw new Error(`no container port ${portName}`);
  return port.containerPort;
}

/** A probe's port (a name or a number) as a container port number. */
function probePort(container: Obj, probe: string): number {
  const port = at(container, `${probe}.httpGet.port`);
  return typeof port === 'string' ? portNumber(container, port) : Number(port);
}

/** A Kubernetes quantity ("100m", "1", "256Mi", "1G") as a plain number. */
function quantity(value: unknown): number {
  const match = /^(\d+(?:\.\d+)?)(m|Ki|Mi|Gi|k|M|G)?$/.exec(String(value));
  if (!match) throw new Error(`not a quantity: ${String(value)}`);
  const unit =
    { m: 1e-3, Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, k: 1e3, M: 1e6, G: 1e9 }[match[2] ?? ''] ?? 1;
  return Number(match[1]) * unit;
}

/** Seconds of the container's preStop `sleep`, 0 without one. */
function preStopPause(container: Obj): number {
  const command = isObj(container.lifecycle) ? at(container, 'lifecycle.preStop.exec.command') : undefined;
  return Array.isArray(command) && command[0] === 'sleep' ? Number(command[1]) : 0;
}

// ---------------------------------------------------------------------------------------------
// Checks of one service's Deployment.

const image: Check = (p, name) =>
  problemsOf((problem) => {
    const container = containerOf(p, name);
    if (!String(container.image).startsWith(`parametric/${name}:`))
      problem(`image ${String(container.image)} is not parametric/${name}:<tag>`);
    const replicas = at(deploymentOf(p, name), 'spec.replicas');
    if (typeof replicas !== 'number' || replicas < 2) problem(`replicas ${String(replicas)}, not at least 2`);
  });

const ports: Check = (p, name) =>
  problemsOf((problem) => {
    const container = containerOf(p, name);
    const expected = service(name).ports;
    const actual = Object.fromEntries(
      listAt(container, 'ports').map((port) => [port.name, port.containerPort]),
    );
    const wanted = Object.fromEntries(Object.entries(expected).map(([n, port]) => [n, port.containerPort]));
    if (
      JSON.stringify(actual, Object.keys(actual).sort()) !==
      JSON.stringify(wanted, Object.keys(wanted).sort())
    )
      problem(`container ports ${JSON.stringify(actual)}, expected ${JSON.stringify(wanted)}`);
    // The process listens where the container port says (as its schema reads the deployed env).
    const config = parsedConfig(p, name);
    for (const [portName, { containerPort, env }] of Object.entries(expected)) {
      if (config[env] !== containerPort)
        problem(`${env} is ${String(config[env])}, port ${portName} is ${containerPort}`);
    }
  });

const probes: Check = (p, name) =>
  problemsOf((problem) => {
    const container = containerOf(p, name);
    // Readiness is probed where outside traffic arrives (the payments callback listener; the
    // gateway's partner port is `http`), liveness and start-up on the internal `http` port: so a
    // service with a second, public listener has both of its ports probed.
    const readinessPort = service(name).publicPorts[0] ?? 'http';
    const probed = {
      livenessProbe: ['/healthz', 'http'],
      startupProbe: ['/healthz', 'http'],
      readinessProbe: ['/readyz', readinessPort],
    };
    for (const [probe, [path, port]] of Object.entries(probed)) {
      if (at(container, `${probe}.httpGet.path`) !== path) problem(`${probe} does not GET ${path}`);
      if (probePort(container, probe) !== portNumber(container, port as string))
        problem(`${probe} is not on port ${port}`);
    }
  });

const startup: Check = (p, name) =>
  problemsOf((problem) => {
    const container = containerOf(p, name);
    const period = Number(at(container, 'startupProbe.periodSeconds') ?? 10);
    const failures = Number(at(container, 'startupProbe.failureThreshold') ?? 3);
    if (period * failures < 30) problem(`the startup probe allows ${period * failures} s to boot, not 30`);
  });

const shutdown: Check = (p, name) =>
  problemsOf((problem) => {
    const grace = Number(podSpecOf(p, name).terminationGracePeriodSeconds ?? 30);
    const pause = preStopPause(containerOf(p, name));
    const needed = service(name).shutdownSeconds(parsedConfig(p, name));
    if (grace < 30) problem(`terminationGracePeriodSeconds ${grace} < 30`);
    if (grace - pause < needed)
      problem(
        `${grace} s of grace minus the ${pause} s preStop pause leaves less than the ${needed} s needed`,
      );
  });

const security: Check = (p, name) =>
  problemsOf((problem) => {
    const pod = objAt(podSpecOf(p, name), 'securityContext');
    const container = objAt(containerOf(p, name), 'securityContext');
    const expectations: [string, unknown, unknown][] = [
      ['runAsNonRoot', container.runAsNonRoot ?? pod.runAsNonRoot, true],
      ['runAsUser', container.runAsUser ?? pod.runAsUser, 1000],
      ['readOnlyRootFilesystem', container.readOnlyRootFilesystem, true],
      ['allowPrivilegeEscalation', container.allowPrivilegeEscalation, false],
      ['privileged', container.privileged ?? false, false],
      ['capabilities.drop', JSON.stringify(at(container, 'capabilities.drop')), '["ALL"]'],
      ['capabilities.add', JSON.stringify(at(container, 'capabilities.add') ?? []), '[]'],
    ];
    for (const [key, actual, wanted] of expectations) {
      if (actual !== wanted) problem(`securityContext ${key} is ${String(actual)}, not ${String(wanted)}`);
    }
  });

const tmp: Check = (p, name) =>
  problemsOf((problem) => {
    const mount = listAt(containerOf(p, name), 'volumeMounts').find((m) => m.mountPath === '/tmp');
    if (!mount || mount.readOnly === true) return problem('/tmp is not a writable mount');
    const volume = listAt(podSpecOf(p, name), 'volumes').find((v) => v.name === mount.name);
    if (!volume || !isObj(volume.emptyDir)) problem('/tmp is not an emptyDir');
  });

const resources: Check = (p, name) =>
  problemsOf((problem) => {
    for (const c of listAt(podSpecOf(p, name), 'containers')) {
      const requests = objAt(c, 'resources.requests');
      const limits = objAt(c, 'resources.limits');
      for (const kind of ['cpu', 'memory']) {
        if (requests[kind] === undefined || limits[kind] === undefined)
          problem(`${String(c.name)}: no ${kind} request or limit`);
        else if (quantity(requests[kind]) > quantity(limits[kind]))
          problem(`${String(c.name)}: ${kind} request above its limit`);
      }
    }
  });

const SHARED_SOURCES = [
  { configMapRef: { name: 'platform-config' } },
  { secretRef: { name: 'platform-secrets' } },
];

const envFrom: Check = (p, name) =>
  problemsOf((problem) => {
    const sources = listAt(containerOf(p, name), 'envFrom').map((s) => JSON.stringify(s));
    for (const wanted of SHARED_SOURCES) {
      if (!sources.includes(JSON.stringify(wanted))) problem(`envFrom lacks ${JSON.stringify(wanted)}`);
    }
    // Nothing else: a service's own Secret is read key by key (secretKeyRef), never wholesale.
    const shared = SHARED_SOURCES.map((s) => JSON.stringify(s));
    for (const source of sources) if (!shared.includes(source)) problem(`envFrom also has ${source}`);
  });

/**
 * The variables of the service's own Secrets come from there, one required `secretKeyRef` each
 * (key = variable name; an optional secret's is `optional: true`), and no other variable is a
 * reference.
 */
const ownSecretRefs: Check = (p, name) =>
  problemsOf((problem) => {
    const wanted = [
      ...Object.entries(service(name).ownSecrets).flatMap(([secret, keys]) =>
        keys.map((key) => ({ name: key, valueFrom: { secretKeyRef: { name: secret, key } } })),
      ),
      // An optional secret's reference is optional: a Secret without the key still starts the pod.
      ...Object.entries(service(name).optionalSecrets).flatMap(([secret, keys]) =>
        keys.map((key) => ({
          name: key,
          valueFrom: { secretKeyRef: { name: secret, key, optional: true } },
        })),
      ),
    ];
    const actual = referencedEnv(containerOf(p, name));
    const canonical = (entries: Obj[]) => entries.map((e) => JSON.stringify(e)).sort();
    if (JSON.stringify(canonical(actual)) !== JSON.stringify(canonical(wanted)))
      problem(`env references ${JSON.stringify(actual)}, expected exactly ${JSON.stringify(wanted)}`);
    for (const [secret, keys] of Object.entries(service(name).ownSecrets)) {
      if (!p.ownSecrets[secret]) problem(`no example of its Secret ${secret}`);
      const exampleKeys = [...ownSecretKeysOf(p, secret)].sort();
      if (JSON.stringify(exampleKeys) !== JSON.stringify([...keys].sort()))
        problem(`Secret ${secret} has keys ${exampleKeys.join(', ')}, not ${keys.join(', ')}`);
    }
  });

const inlineEnv: Check = (p, name) =>
  problemsOf((problem) => {
    const inline = literalEnv(containerOf(p, name));
    for (const key of [...SECRET_ENV, ...OWN_SECRET_ENV, ...OPTIONAL_SECRETS.map((o) => o.key)])
      if (inline[key] !== undefined) problem(`secret ${key} set inline`);
    const keys = Object.keys(inline).sort();
    if (JSON.stringify(keys) !== '["MONGO_DB"]') problem(`inline env ${keys.join(', ')}: only MONGO_DB`);
    if (inline.MONGO_DB !== name) problem(`MONGO_DB is ${String(inline.MONGO_DB)}, not ${name}`);
  });

const serviceLinks: Check = (p, name) =>
  problemsOf((problem) => {
    if (podSpecOf(p, name).enableServiceLinks !== false) problem('enableServiceLinks is not false');
  });

const environment: Check = (p, name) =>
  problemsOf((problem) => {
    const own = service(name);
    const env = deployedEnv(p, name);
    const explicit = new Set([...Object.keys(configOf(p)), ...Object.keys(literalEnv(containerOf(p, name)))]);
    for (const key of own.nonSecretEnv) if (!explicit.has(key)) problem(`${key} is not set`);
    for (const key of own.secretEnv)
      if (!secretKeysOf(p).includes(key)) problem(`${key} is not in the Secret`);
    for (const [secret, keys] of Object.entries(own.ownSecrets))
      for (const key of keys)
        if (env[key] === undefined) problem(`${key} does not come from Secret ${secret}`);
    const parsed = own.schema.safeParse(env);
    for (const issue of parsed.error?.issues ?? []) problem(`schema: ${JSON.stringify(issue)}`);
    // The loader adds the rules across variables (e.g. no insecure webhooks in production).
    own.load(env);
    if (at(parsed.data, 'NODE_ENV') !== 'production') problem('NODE_ENV is not production');
  });

const DEPLOYMENT_CHECKS: [string, Check][] = [
  ['runs parametric/<name>:<tag> with at least 2 replicas', image],
  ['names its ports as the service expects, and its port variables match them', ports],
  [
    'liveness and startup probes GET /healthz on port http, readiness GET /readyz on its public port (else http)',
    probes,
  ],
  ['the startup probe allows at least 30 s to boot before liveness can kill the pod', startup],
  ['the grace period covers the preStop pause plus the service’s graceful shutdown', shutdown],
  ['runs as non-root uid 1000, read-only root, no privilege escalation, all capabilities dropped', security],
  ['/tmp is a writable emptyDir (the only writable path under a read-only root)', tmp],
  ['every container sets cpu and memory requests and limits, requests within limits', resources],
  ['envFrom is the platform-config ConfigMap and the platform-secrets Secret, nothing else', envFrom],
  [
    'its own Secret’s variables (if any) come from there by secretKeyRef, and nothing else is a reference',
    ownSecretRefs,
  ],
  ['no literal env value carries a secret; only MONGO_DB (= the service name) is inline', inlineEnv],
  ['service links are off (no injected <SERVICE>_PORT=tcp://…)', serviceLinks],
  ['the service’s own config schema and loader accept the deployed environment', environment],
];

describe('the deployed services', () => {
  test('every k8s/base/<name>-deployment.yaml is listed, holds Deployment <name>, and the tests know it', () => {
    const listed = readListedResources();
    for (const name of deployed) {
      const file = listed.find((r) => r.file === `${name}-deployment.yaml`);
      expect([name, file?.obj.kind, isObj(file?.obj.metadata) && file?.obj.metadata.name]).toEqual([
        name,
        'Deployment',
        name,
      ]);
      expect(() => service(name)).not.toThrow();
    }
    expect(SERVICES.map((s) => s.name).sort()).toEqual(deployed);
    expect(deployed).toEqual(expect.arrayContaining(['gateway', 'webhooks']));
  });
});

/** The payments service's provider credentials: its own Secret's keys. */
const PROVIDER_CREDENTIALS = [
  'MPESA_CONSUMER_KEY',
  'MPESA_CONSUMER_SECRET',
  'MPESA_SHORTCODE',
  'MPESA_PASSKEY',
  'MPESA_B2C_SHORTCODE',
  'MPESA_INITIATOR_NAME',
  'MPESA_SECURITY_CREDENTIAL',
  'PAYMENTS_CALLBACK_TOKEN',
];

describe('the services’ own Secrets', () => {
  test('are the gateway credentials and dashboard token key, the webhooks encryption key, the policy chain credentials, the determinations signing key and the payments provider credentials', () => {
    expect(OWN_SECRETS).toEqual([
      { secret: 'gateway-credentials', service: 'gateway', keys: ['OPS_TOKEN', 'API_KEY_PEPPER'] },
      { secret: 'gateway-dashboard-token-key', service: 'gateway', keys: ['DASHBOARD_TOKEN_KEYS'] },
      { secret: 'webhooks-encryption-key', service: 'webhooks', keys: ['WEBHOOK_SECRET_KEY'] },
      {
        secret: 'policy-chain-credentials',
        service: 'policy',
        keys: ['CHAIN_RPC_URL', 'CHAIN_PRIVATE_KEY'],
      },
      {
        secret: 'determinations-signing-key',
        service: 'determinations',
        keys: ['DETERMINATION_SIGNING_KEYS'],
      },
      { secret: 'payments-provider-credentials', service: 'payments', keys: PROVIDER_CREDENTIALS },
    ]);
  });

  test.each(
    OWN_SECRETS.flatMap(({ secret, service: owner, keys }) => keys.map((key) => [key, secret, owner])),
  )('%s comes from Secret %s, which only the %s Deployment mounts', (key, secret, owner) => {
    expect(deployed.filter((name) => envNamesOf(platform, name).includes(key))).toEqual([owner]);
    expect(deployed.filter((name) => secretsReferenced(podSpecOf(platform, name)).includes(secret))).toEqual([
      owner,
    ]);
    expect(secretKeysOf(platform)).not.toContain(key);
    expect(Object.keys(configOf(platform))).not.toContain(key);
  });
});

describe('the services’ optional secrets', () => {
  test('are the sandbox signing keys, in the determinations signing key Secret', () => {
    expect(OPTIONAL_SECRETS).toEqual([
      { key: 'SANDBOX_SIGNING_KEYS', secret: 'determinations-signing-key', service: 'determinations' },
    ]);
  });

  test.each(OPTIONAL_SECRETS.map((o) => [o.key, o.secret, o.service]))(
    '%s may come from Secret %s, only to the %s Deployment, and is nowhere required',
    (key, secret, owner) => {
      expect(deployed.filter((name) => envNamesOf(platform, name).includes(key))).toEqual([owner]);
      expect(
        deployed.filter((name) => secretsReferenced(podSpecOf(platform, name)).includes(secret)),
      ).toEqual([owner]);
      expect(secretKeysOf(platform)).not.toContain(key);
      expect(Object.keys(configOf(platform))).not.toContain(key);
      // Not in the example Secret as a key (only commented out): the deployment runs without it.
      expect(ownSecretKeysOf(platform, secret)).not.toContain(key);
    },
  );
});

describe.each(deployed)('%s Deployment', (name) => {
  test.each(DEPLOYMENT_CHECKS)('%s', (_title, check) => {
    expect(check(platform, name)).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------------
// Checks of the shared configuration.

type PlatformCheck = (p: Platform) => string[];

const secretKeys: PlatformCheck = (p) =>
  problemsOf((problem) => {
    const keys = [...secretKeysOf(p)].sort();
    if (JSON.stringify(keys) !== JSON.stringify([...SECRET_ENV].sort()))
      problem(`example Secret keys ${keys.join(', ')} are not the services' secret variables`);
  });

const noSecretInConfigMap: PlatformCheck = (p) =>
  problemsOf((problem) => {
    for (const key of Object.keys(configOf(p))) {
      if (SECRET_ENV.includes(key) || OWN_SECRET_ENV.includes(key) || secretKeysOf(p).includes(key))
        problem(`${key} in the ConfigMap`);
    }
  });

const everyVariableDefined: PlatformCheck = (p) =>
  problemsOf((problem) => {
    const inline = deployed.flatMap((name) => Object.keys(literalEnv(containerOf(p, name))));
    const own = Object.keys(p.ownSecrets).flatMap((secret) => ownSecretKeysOf(p, secret));
    const defined = new Set([...Object.keys(configOf(p)), ...secretKeysOf(p), ...own, ...inline]);
    for (const key of [...NON_SECRET_ENV, ...SECRET_ENV, ...OWN_SECRET_ENV])
      if (!defined.has(key)) problem(`${key} undefined`);
  });

/**
 * A service's own Secret (the gateway's dashboard token keys, the determinations signing keys,
 * the payments provider credentials) reaches that service only: no other
 * Deployment refers to the Secret in any way, no other receives its variables by any means,
 * and they are in neither platform-secrets nor the ConfigMap, which every service reads.
 */
const ownSecretsPrivate: PlatformCheck = (p) =>
  problemsOf((problem) => {
    for (const { secret, service: owner, keys } of OWN_SECRETS) {
      const referring = deployed.filter((name) => secretsReferenced(podSpecOf(p, name)).includes(secret));
      if (JSON.stringify(referring) !== JSON.stringify([owner]))
        problem(
          `Secret ${secret} is referred to by ${referring.join(', ') || 'no Deployment'}, not ${owner} only`,
        );
      for (const key of keys) {
        const holders = deployed.filter((name) => envNamesOf(p, name).includes(key));
        if (JSON.stringify(holders) !== JSON.stringify([owner]))
          problem(`${key} reaches ${holders.join(', ') || 'no Deployment'}, not ${owner} only`);
        if (secretKeysOf(p).includes(key)) problem(`${key} is in platform-secrets`);
      }
    }
  });

const configValues: PlatformCheck = (p) =>
  problemsOf((problem) => {
    const config = configOf(p);
    if (config.NODE_ENV !== 'production') problem(`NODE_ENV ${String(config.NODE_ENV)}`);
    if (config.LOG_LEVEL !== 'info') problem(`LOG_LEVEL ${String(config.LOG_LEVEL)}`);
    // Internal base URLs: in-cluster Service DNS names, plain http, no trailing slash.
    for (const key of OPTIONAL_ENV) {
      if (!/^http:\/\/[a-z0-9-]+(\.[a-z0-9-]+)*:\d+$/.test(String(config[key])))
        problem(`${key} is ${String(config[key])}`);
    }
  });

/** `<NAME>_URL` of each deployed service reaches its Service's http port. */
const serviceUrls: PlatformCheck = (p) =>
  problemsOf((problem) => {
    const config = configOf(p);
    for (const name of deployed) {
      const key = `${name.toUpperCase()}_URL`;
      if (config[key] === undefined) continue; // not called by another service (the gateway)
      const url = new URL(String(config[key]));
      const svc = resourceIn(p.resources, 'Service', name);
      const http = svc ? listAt(svc, 'spec.ports').find((port) => port.targetPort === 'http') : undefined;
      if (url.hostname !== name || !http || Number(url.port) !== http.port)
        problem(`${key} ${url.href} does not reach Service ${name} on its http port`);
    }
    if (config.WEBHOOKS_URL === undefined) problem('WEBHOOKS_URL is not set: the gateway needs it');
  });

const everyKeyRead: PlatformCheck = (p) =>
  problemsOf((problem) => {
    // The union of the deployed services' config schemas.
    const known = new Set(SERVICES.flatMap((s) => Object.keys(s.schema.shape)));
    for (const key of Object.keys(configOf(p))) if (!known.has(key)) problem(`no service reads ${key}`);
  });

const sharedRedisPrefix: PlatformCheck = (p) =>
  problemsOf((problem) => {
    if (configOf(p).REDIS_PREFIX === undefined) problem('REDIS_PREFIX is not in the shared ConfigMap');
    // Of the services that use Redis.
    const prefixes = deployed
      .filter((name) => 'REDIS_PREFIX' in service(name).schema.shape)
      .map((name) => `${name}=${String(parsedConfig(p, name).REDIS_PREFIX)}`);
    if (new Set(prefixes.map((entry) => entry.split('=')[1])).size !== 1)
      problem(`services disagree on REDIS_PREFIX: ${prefixes.join(', ')}`);
  });

/**
 * Payments' third parties and its public callback URL: HTTPS in the base (Daraja calls back on
 * HTTPS URLs only, and credentials never travel in clear), no trailing slash, and the callback
 * URL never an in-cluster name (Daraja is on the internet: it is the overlay's Ingress host).
 */
const paymentsUrls: PlatformCheck = (p) =>
  problemsOf((problem) => {
    const config = configOf(p);
    for (const key of ['PAYMENTS_CALLBACK_BASE_URL', 'MPESA_BASE_URL', 'RATE_SOURCE_URL']) {
      const value = String(config[key]);
      if (!/^https:\/\/[^/]+(\/.*[^/])?$/.test(value)) problem(`${key} is ${value}, not an https URL`);
    }
    const callbackHost = URL.canParse(String(config.PAYMENTS_CALLBACK_BASE_URL))
      ? new URL(String(config.PAYMENTS_CALLBACK_BASE_URL)).hostname
      : '';
    if (!callbackHost.includes('.') || callbackHost.endsWith('.svc') || callbackHost.includes('.svc.'))
      problem(`PAYMENTS_CALLBACK_BASE_URL host ${callbackHost} is not a public name`);
  });

const PLATFORM_CHECKS: [string, PlatformCheck][] = [
  ['the example Secret lists exactly the services’ secret variables', secretKeys],
  ['no secret key is in the ConfigMap (and no key is in both)', noSecretInConfigMap],
  ['together with the Deployments they define every variable the services need', everyVariableDefined],
  [
    'a service’s own Secret (signing keys, provider credentials) is mounted by its Deployment only',
    ownSecretsPrivate,
  ],
  ['ConfigMap values look like what the services expect', configValues],
  ['each deployed service’s <NAME>_URL reaches its Service (the gateway’s WEBHOOKS_URL)', serviceUrls],
  ['every ConfigMap key is a setting some service reads (no typo silently falling back)', everyKeyRead],
  ['REDIS_PREFIX is in the shared ConfigMap and every service reads the same value', sharedRedisPrefix],
  ['payments’ callback base URL, Daraja and the rate source are public https URLs', paymentsUrls],
];

describe('platform-config and platform-secrets', () => {
  test.each(PLATFORM_CHECKS)('%s', (_title, check) => {
    expect(check(platform)).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------------
// ALLOW_INSECURE_WEBHOOKS: local runs only, never in any manifest.

const INSECURE = 'ALLOW_INSECURE_WEBHOOKS';

/** Sets the flag: as a key (ConfigMap data), an env entry, or KEY=value (generator literals, args). */
function setsInsecure(node: unknown): boolean {
  if (typeof node === 'string') return new RegExp(`\\b${INSECURE}\\s*=`).test(node);
  if (Array.isArray(node)) return node.some(setsInsecure);
  if (!isObj(node)) return false;
  if (node.name === INSECURE) return true;
  return Object.entries(node).some(([key, value]) => key === INSECURE || setsInsecure(value));
}

/** Files under k8s/ that set the flag (comments aside). YAML is read as data; other files by line. */
function insecureSetters(files: { file: string; text: string }[]): string[] {
  return files
    .filter(({ file, text }) => {
      if (!/\.ya?ml$/.test(file)) return new RegExp(`^\\s*(export\\s+)?${INSECURE}\\s*=`, 'm').test(text);
      return parseAllDocuments(text, { version: '1.1' }).some((doc) => setsInsecure(doc.toJS()));
    })
    .map(({ file }) => file);
}

describe(`${INSECURE}`, () => {
  const files = k8sFiles();

  test('no file under k8s/ sets it (the webhooks service would refuse http:// only in production)', () => {
    expect(files.map((f) => f.file)).toContain('k8s/base/webhooks-deployment.yaml');
    expect(insecureSetters(files)).toEqual([]);
  });

  test('the webhooks service runs with it off in the deployed environment', () => {
    expect(parsedConfig(platform, 'webhooks')[INSECURE]).toBe(false);
  });

  const withText = (file: string, edit: (text: string) => string) =>
    files.map((f) => (f.file === file ? { file, text: edit(f.text) } : f));
  test.each([
    ['a ConfigMap key', withText('k8s/base/platform-config.env', (t) => `${t}${INSECURE}=true\n`)],
    [
      'a Deployment env entry',
      withText('k8s/base/webhooks-deployment.yaml', (t) =>
        t.replace(
          '            - name: MONGO_DB\n',
          `            - name: ${INSECURE}\n              value: "1"\n$&`,
        ),
      ),
    ],
    [
      'a configMapGenerator literal in an overlay',
      [
        ...files,
        {
          file: 'k8s/overlays/dev/kustomization.yaml',
          text: `configMapGenerator:\n  - name: platform-config\n    behavior: merge\n    literals: [${INSECURE}=true]\n`,
        },
      ],
    ],
    [
      'an env file of a generator',
      [...files, { file: 'k8s/overlays/dev/webhooks.env', text: `${INSECURE}=true\n` }],
    ],
  ])('the check finds it set through %s', (_how, altered) => {
    expect(insecureSetters(altered).length).toBeGreaterThan(0);
  });
});

// ---------------------------------------------------------------------------------------------
// Every check above fails on a manifest broken in memory (a copy; the files are not touched).

type Break = (p: Platform, name: string) => void;

const broke = (check: Check, name: string, breakIt: Break): string[] => {
  const copy = structuredClone(platform);
  breakIt(copy, name);
  return check(copy, name);
};

const configMapOf = (p: Platform) => resourceIn(p.resources, 'ConfigMap', 'platform-config') as Obj;
const setEnv = (container: Obj, key: string, value: string) => {
  container.env = [...(Array.isArray(container.env) ? container.env : []), { name: key, value }];
};
const setEnvFrom = (container: Obj, key: string, secret: string) => {
  container.env = [
    ...(Array.isArray(container.env) ? container.env : []),
    { name: key, valueFrom: { secretKeyRef: { name: secret, key } } },
  ];
};
const signingKeySecretOf = (p: Platform) => p.ownSecrets['determinations-signing-key'] as Obj;
const dashboardKeySecretOf = (p: Platform) => p.ownSecrets['gateway-dashboard-token-key'] as Obj;
/** The gateway's `env` entry for its dashboard token keys. */
const dashboardKeyRef = (p: Platform) =>
  referencedEnv(containerOf(p, 'gateway')).find((e) => e.name === 'DASHBOARD_TOKEN_KEYS');
const providerCredentialsOf = (p: Platform) => p.ownSecrets['payments-provider-credentials'] as Obj;

describe('each check fails on a broken copy of the manifests', () => {
  const BREAKS: [string, Check, string, Break][] = [
    [
      'image of another service',
      image,
      'webhooks',
      (p, n) => (containerOf(p, n).image = 'parametric/gateway:1'),
    ],
    ['a single replica', image, 'webhooks', (p, n) => ((deploymentOf(p, n).spec as Obj).replicas = 1)],
    [
      'an extra ops port',
      ports,
      'webhooks',
      (p, n) => listAt(containerOf(p, n), 'ports').push({ name: 'ops', containerPort: 3001 }),
    ],
    [
      'WEBHOOKS_PORT off the container port',
      ports,
      'webhooks',
      (p) => ((configMapOf(p).data as Obj).WEBHOOKS_PORT = '3002'),
    ],
    [
      'GATEWAY_PORT off the container port',
      ports,
      'gateway',
      (p) => ((configMapOf(p).data as Obj).GATEWAY_PORT = '8080'),
    ],
    [
      'readiness on /healthz',
      probes,
      'webhooks',
      (p, n) => (objAt(containerOf(p, n), 'readinessProbe.httpGet').path = '/healthz'),
    ],
    [
      'liveness on another port',
      probes,
      'gateway',
      (p, n) => (objAt(containerOf(p, n), 'livenessProbe.httpGet').port = 'ops'),
    ],
    ['no startup probe', probes, 'webhooks', (p, n) => delete containerOf(p, n).startupProbe],
    [
      '10 s to boot',
      startup,
      'webhooks',
      (p, n) => (objAt(containerOf(p, n), 'startupProbe').failureThreshold = 5),
    ],
    [
      'grace period of 30 s',
      shutdown,
      'webhooks',
      (p, n) => (podSpecOf(p, n).terminationGracePeriodSeconds = 30),
    ],
    [
      'no grace period (30 s default)',
      shutdown,
      'webhooks',
      (p, n) => delete podSpecOf(p, n).terminationGracePeriodSeconds,
    ],
    [
      'a longer delivery timeout',
      shutdown,
      'webhooks',
      (p, n) => setEnv(containerOf(p, n), 'DELIVERY_TIMEOUT_MS', '60000'),
    ],
    [
      'grace period of 20 s',
      shutdown,
      'gateway',
      (p, n) => (podSpecOf(p, n).terminationGracePeriodSeconds = 20),
    ],
    [
      'runs as root',
      security,
      'webhooks',
      (p, n) => (objAt(containerOf(p, n), 'securityContext').runAsUser = 0),
    ],
    [
      'writable root',
      security,
      'webhooks',
      (p, n) => (objAt(containerOf(p, n), 'securityContext').readOnlyRootFilesystem = false),
    ],
    [
      'an added capability',
      security,
      'webhooks',
      (p, n) => (objAt(containerOf(p, n), 'securityContext.capabilities').add = ['NET_ADMIN']),
    ],
    ['no /tmp mount', tmp, 'webhooks', (p, n) => (containerOf(p, n).volumeMounts = [])],
    [
      '/tmp on a hostPath',
      tmp,
      'webhooks',
      (p, n) => (listAt(podSpecOf(p, n), 'volumes')[0] = { name: 'tmp', hostPath: { path: '/tmp' } }),
    ],
    [
      'no memory limit',
      resources,
      'webhooks',
      (p, n) => delete objAt(containerOf(p, n), 'resources.limits').memory,
    ],
    [
      'cpu request above limit',
      resources,
      'webhooks',
      (p, n) => (objAt(containerOf(p, n), 'resources.requests').cpu = '2'),
    ],
    [
      'no Secret in envFrom',
      envFrom,
      'webhooks',
      (p, n) => (containerOf(p, n).envFrom = [{ configMapRef: { name: 'platform-config' } }]),
    ],
    [
      'a prefixed ConfigMap',
      envFrom,
      'webhooks',
      (p, n) =>
        (listAt(containerOf(p, n), 'envFrom')[0] = {
          configMapRef: { name: 'platform-config' },
          prefix: 'X_',
        }),
    ],
    [
      'a secret inline',
      inlineEnv,
      'webhooks',
      (p, n) => setEnv(containerOf(p, n), 'WEBHOOK_SECRET_KEY', 'x'),
    ],
    [
      'MONGO_DB of another service',
      inlineEnv,
      'webhooks',
      (p, n) => (listAt(containerOf(p, n), 'env')[0] = { name: 'MONGO_DB', value: 'gateway' }),
    ],
    ['service links on', serviceLinks, 'webhooks', (p, n) => delete podSpecOf(p, n).enableServiceLinks],
    [
      'the signing key Secret read wholesale through envFrom',
      envFrom,
      'determinations',
      (p, n) =>
        listAt(containerOf(p, n), 'envFrom').push({ secretRef: { name: 'determinations-signing-key' } }),
    ],
    [
      'no secretKeyRef for the signing keys',
      ownSecretRefs,
      'determinations',
      (p, n) => (containerOf(p, n).env = listAt(containerOf(p, n), 'env').filter((e) => !e.valueFrom)),
    ],
    [
      'the signing keys from platform-secrets',
      ownSecretRefs,
      'determinations',
      (p, n) =>
        (objAt(referencedEnv(containerOf(p, n))[0], 'valueFrom.secretKeyRef').name = 'platform-secrets'),
    ],
    [
      'the signing key Secret optional',
      ownSecretRefs,
      'determinations',
      (p, n) => (objAt(referencedEnv(containerOf(p, n))[0], 'valueFrom.secretKeyRef').optional = true),
    ],
    [
      'another variable taken from the signing key Secret',
      ownSecretRefs,
      'determinations',
      (p, n) =>
        listAt(containerOf(p, n), 'env').push({
          name: 'INTERNAL_SIGNING_SECRET',
          valueFrom: {
            secretKeyRef: { name: 'determinations-signing-key', key: 'DETERMINATION_SIGNING_KEYS' },
          },
        }),
    ],
    [
      'the gateway taking the signing keys by secretKeyRef',
      ownSecretRefs,
      'gateway',
      (p, n) => setEnvFrom(containerOf(p, n), 'DETERMINATION_SIGNING_KEYS', 'determinations-signing-key'),
    ],
    [
      'an example signing key Secret without its key',
      ownSecretRefs,
      'determinations',
      (p) => delete (signingKeySecretOf(p).stringData as Obj).DETERMINATION_SIGNING_KEYS,
    ],
    [
      'a literal signing key',
      inlineEnv,
      'determinations',
      (p, n) => setEnv(containerOf(p, n), 'DETERMINATION_SIGNING_KEYS', 'x'),
    ],
    [
      'the signing keys missing from their Secret',
      environment,
      'determinations',
      (p) => delete (signingKeySecretOf(p).stringData as Obj).DETERMINATION_SIGNING_KEYS,
    ],
    [
      'the signing keys read from a Secret no example shows',
      environment,
      'determinations',
      (p, n) => (objAt(referencedEnv(containerOf(p, n))[0], 'valueFrom.secretKeyRef').name = 'signing-keys'),
    ],
    [
      'the dashboard token key Secret read wholesale through envFrom',
      envFrom,
      'gateway',
      (p, n) =>
        listAt(containerOf(p, n), 'envFrom').push({ secretRef: { name: 'gateway-dashboard-token-key' } }),
    ],
    [
      'no secretKeyRef for the dashboard token keys',
      ownSecretRefs,
      'gateway',
      (p, n) => (containerOf(p, n).env = listAt(containerOf(p, n), 'env').filter((e) => !e.valueFrom)),
    ],
    [
      'the dashboard token keys from platform-secrets',
      ownSecretRefs,
      'gateway',
      (p) => (objAt(dashboardKeyRef(p), 'valueFrom.secretKeyRef').name = 'platform-secrets'),
    ],
    [
      'the dashboard token key Secret optional',
      ownSecretRefs,
      'gateway',
      (p) => (objAt(dashboardKeyRef(p), 'valueFrom.secretKeyRef').optional = true),
    ],
    [
      'determinations taking the dashboard token keys by secretKeyRef',
      ownSecretRefs,
      'determinations',
      (p, n) => setEnvFrom(containerOf(p, n), 'DASHBOARD_TOKEN_KEYS', 'gateway-dashboard-token-key'),
    ],
    [
      'an example dashboard token key Secret without its key',
      ownSecretRefs,
      'gateway',
      (p) => delete (dashboardKeySecretOf(p).stringData as Obj).DASHBOARD_TOKEN_KEYS,
    ],
    [
      'a literal dashboard token key',
      inlineEnv,
      'gateway',
      (p, n) => setEnv(containerOf(p, n), 'DASHBOARD_TOKEN_KEYS', 'x'),
    ],
    [
      'the dashboard token keys missing from their Secret (the gateway refuses production without them)',
      environment,
      'gateway',
      (p) => delete (dashboardKeySecretOf(p).stringData as Obj).DASHBOARD_TOKEN_KEYS,
    ],
    [
      'the dashboard token keys read from a Secret no example shows',
      environment,
      'gateway',
      (p) => (objAt(dashboardKeyRef(p), 'valueFrom.secretKeyRef').name = 'dashboard-keys'),
    ],
    [
      'a non-numeric access token lifetime',
      environment,
      'gateway',
      (p) => ((configMapOf(p).data as Obj).ACCESS_TOKEN_TTL_SECONDS = '15m'),
    ],
    [
      'a longer policy timeout',
      shutdown,
      'determinations',
      (p, n) => setEnv(containerOf(p, n), 'POLICY_TIMEOUT_MS', '60000'),
    ],
    [
      'no POLICY_URL for determinations',
      environment,
      'determinations',
      (p) => delete (configMapOf(p).data as Obj).POLICY_URL,
    ],
    [
      'no WEBHOOK_SECRET_KEY in its Secret',
      environment,
      'webhooks',
      (p) => delete ((p.ownSecrets['webhooks-encryption-key'] as Obj).stringData as Obj).WEBHOOK_SECRET_KEY,
    ],
    [
      'no INTERNAL_SIGNING_SECRET in the shared Secret',
      environment,
      'webhooks',
      (p) => delete (p.exampleSecret.stringData as Obj).INTERNAL_SIGNING_SECRET,
    ],
    ['no WEBHOOKS_PORT', environment, 'webhooks', (p) => delete (configMapOf(p).data as Obj).WEBHOOKS_PORT],
    [
      'an invalid LOG_LEVEL',
      environment,
      'webhooks',
      (p) => ((configMapOf(p).data as Obj).LOG_LEVEL = 'verbose'),
    ],
    [
      'an insecure production',
      environment,
      'webhooks',
      (p, n) => setEnv(containerOf(p, n), INSECURE, 'true'),
    ],
    [
      'NODE_ENV development',
      environment,
      'gateway',
      (p) => ((configMapOf(p).data as Obj).NODE_ENV = 'development'),
    ],
    [
      'no callbacks port',
      ports,
      'payments',
      (p, n) =>
        (containerOf(p, n).ports = listAt(containerOf(p, n), 'ports').filter((port) => port.name === 'http')),
    ],
    [
      'PAYMENTS_CALLBACK_PORT off the container port',
      ports,
      'payments',
      (p) => ((configMapOf(p).data as Obj).PAYMENTS_CALLBACK_PORT = '3002'),
    ],
    [
      'readiness back on the internal port only (the callback listener unprobed)',
      probes,
      'payments',
      (p, n) => (objAt(containerOf(p, n), 'readinessProbe.httpGet').port = 'http'),
    ],
    [
      'liveness on the callbacks port',
      probes,
      'payments',
      (p, n) => (objAt(containerOf(p, n), 'livenessProbe.httpGet').port = 'callbacks'),
    ],
    [
      'a longer M-Pesa timeout',
      shutdown,
      'payments',
      (p, n) => setEnv(containerOf(p, n), 'MPESA_TIMEOUT_MS', '30000'),
    ],
    [
      'grace period of 45 s for payments',
      shutdown,
      'payments',
      (p, n) => (podSpecOf(p, n).terminationGracePeriodSeconds = 45),
    ],
    [
      'the provider credentials read wholesale through envFrom',
      envFrom,
      'payments',
      (p, n) =>
        listAt(containerOf(p, n), 'envFrom').push({ secretRef: { name: 'payments-provider-credentials' } }),
    ],
    [
      'no secretKeyRef for the passkey',
      ownSecretRefs,
      'payments',
      (p, n) =>
        (containerOf(p, n).env = listAt(containerOf(p, n), 'env').filter((e) => e.name !== 'MPESA_PASSKEY')),
    ],
    [
      'the callback token from platform-secrets',
      ownSecretRefs,
      'payments',
      (p, n) =>
        (objAt(
          referencedEnv(containerOf(p, n)).find((e) => e.name === 'PAYMENTS_CALLBACK_TOKEN'),
          'valueFrom.secretKeyRef',
        ).name = 'platform-secrets'),
    ],
    [
      'the consumer secret read from the key of the consumer key',
      ownSecretRefs,
      'payments',
      (p, n) =>
        (objAt(
          referencedEnv(containerOf(p, n)).find((e) => e.name === 'MPESA_CONSUMER_SECRET'),
          'valueFrom.secretKeyRef',
        ).key = 'MPESA_CONSUMER_KEY'),
    ],
    [
      'determinations taking the security credential by secretKeyRef',
      ownSecretRefs,
      'determinations',
      (p, n) => setEnvFrom(containerOf(p, n), 'MPESA_SECURITY_CREDENTIAL', 'payments-provider-credentials'),
    ],
    [
      'an example provider Secret without the passkey',
      ownSecretRefs,
      'payments',
      (p) => delete (providerCredentialsOf(p).stringData as Obj).MPESA_PASSKEY,
    ],
    [
      'a literal callback token',
      inlineEnv,
      'payments',
      (p, n) => setEnv(containerOf(p, n), 'PAYMENTS_CALLBACK_TOKEN', 'x'.repeat(32)),
    ],
    [
      'an inline MPESA_BASE_URL',
      inlineEnv,
      'payments',
      (p, n) => setEnv(containerOf(p, n), 'MPESA_BASE_URL', 'https://api.safaricom.co.ke'),
    ],
    ['no MPESA_BASE_URL', environment, 'payments', (p) => delete (configMapOf(p).data as Obj).MPESA_BASE_URL],
    [
      'no PAYMENTS_CALLBACK_BASE_URL',
      environment,
      'payments',
      (p) => delete (configMapOf(p).data as Obj).PAYMENTS_CALLBACK_BASE_URL,
    ],
    [
      'no PAYMENTS_CALLBACK_PORT (the default would apply)',
      environment,
      'payments',
      (p) => delete (configMapOf(p).data as Obj).PAYMENTS_CALLBACK_PORT,
    ],
    [
      'the security credential missing from its Secret',
      environment,
      'payments',
      (p) => delete (providerCredentialsOf(p).stringData as Obj).MPESA_SECURITY_CREDENTIAL,
    ],
  ];

  test.each(BREAKS.map(([what, check, name, breakIt]) => [what, check.name, name, check, breakIt] as const))(
    '%s: the %s check of %s fails',
    (_what, _checkName, name, check, breakIt) => {
      expect(check(platform, name)).toEqual([]);
      expect(broke(check, name, breakIt)).not.toEqual([]);
    },
  );

  const PLATFORM_BREAKS: [string, PlatformCheck, (p: Platform) => void][] = [
    [
      'a Secret key no service reads',
      secretKeys,
      (p) => ((p.exampleSecret.stringData as Obj).EXTRA_TOKEN = 'CHANGE_ME'),
    ],
    [
      'a Secret without INTERNAL_SIGNING_SECRET',
      secretKeys,
      (p) => delete (p.exampleSecret.stringData as Obj).INTERNAL_SIGNING_SECRET,
    ],
    [
      'WEBHOOK_SECRET_KEY back in platform-secrets (every service reads it)',
      ownSecretsPrivate,
      (p) => ((p.exampleSecret.stringData as Obj).WEBHOOK_SECRET_KEY = 'CHANGE_ME'),
    ],
    [
      'CHAIN_PRIVATE_KEY back in platform-secrets (every service reads it)',
      ownSecretsPrivate,
      (p) => ((p.exampleSecret.stringData as Obj).CHAIN_PRIVATE_KEY = 'CHANGE_ME'),
    ],
    [
      'the gateway taking the chain key by secretKeyRef',
      ownSecretsPrivate,
      (p) => setEnvFrom(containerOf(p, 'gateway'), 'CHAIN_PRIVATE_KEY', 'policy-chain-credentials'),
    ],
    [
      'payments reading the webhooks encryption key Secret wholesale',
      ownSecretsPrivate,
      (p) =>
        listAt(containerOf(p, 'payments'), 'envFrom').push({
          secretRef: { name: 'webhooks-encryption-key' },
        }),
    ],
    [
      'webhooks given OPS_TOKEN from the gateway credentials',
      ownSecretsPrivate,
      (p) => setEnvFrom(containerOf(p, 'webhooks'), 'OPS_TOKEN', 'gateway-credentials'),
    ],
    [
      'MONGO_URL in the ConfigMap',
      noSecretInConfigMap,
      (p) => ((configMapOf(p).data as Obj).MONGO_URL = 'mongodb://x'),
    ],
    [
      'no REDIS_PREFIX anywhere',
      everyVariableDefined,
      (p) => delete (configMapOf(p).data as Obj).REDIS_PREFIX,
    ],
    ['LOG_LEVEL debug', configValues, (p) => ((configMapOf(p).data as Obj).LOG_LEVEL = 'debug')],
    [
      'a URL with a trailing slash',
      configValues,
      (p) => ((configMapOf(p).data as Obj).WEBHOOKS_URL = 'http://webhooks:3000/'),
    ],
    [
      'WEBHOOKS_URL on the wrong port',
      serviceUrls,
      (p) => ((configMapOf(p).data as Obj).WEBHOOKS_URL = 'http://webhooks:3001'),
    ],
    [
      'WEBHOOKS_URL on another host',
      serviceUrls,
      (p) => ((configMapOf(p).data as Obj).WEBHOOKS_URL = 'http://webhook:3000'),
    ],
    ['no WEBHOOKS_URL', serviceUrls, (p) => delete (configMapOf(p).data as Obj).WEBHOOKS_URL],
    [
      'POLICY_URL on the wrong port',
      serviceUrls,
      (p) => ((configMapOf(p).data as Obj).POLICY_URL = 'http://policy:3001'),
    ],
    ['a misspelled key', everyKeyRead, (p) => ((configMapOf(p).data as Obj).REDIS_PREFFIX = 'platform')],
    [
      'the gateway reading the signing key Secret wholesale',
      ownSecretsPrivate,
      (p) =>
        listAt(containerOf(p, 'gateway'), 'envFrom').push({
          secretRef: { name: 'determinations-signing-key' },
        }),
    ],
    [
      'webhooks taking the signing keys by secretKeyRef',
      ownSecretsPrivate,
      (p) =>
        setEnvFrom(containerOf(p, 'webhooks'), 'DETERMINATION_SIGNING_KEYS', 'determinations-signing-key'),
    ],
    [
      'policy mounting the signing key Secret as a volume',
      ownSecretsPrivate,
      (p) =>
        listAt(podSpecOf(p, 'policy'), 'volumes').push({
          name: 'keys',
          secret: { secretName: 'determinations-signing-key' },
        }),
    ],
    [
      'the gateway given DETERMINATION_SIGNING_KEYS from elsewhere',
      ownSecretsPrivate,
      (p) => setEnvFrom(containerOf(p, 'gateway'), 'DETERMINATION_SIGNING_KEYS', 'platform-secrets'),
    ],
    [
      'DETERMINATION_SIGNING_KEYS in platform-secrets (every service reads it)',
      ownSecretsPrivate,
      (p) => ((p.exampleSecret.stringData as Obj).DETERMINATION_SIGNING_KEYS = 'CHANGE_ME'),
    ],
    [
      'DETERMINATION_SIGNING_KEYS in platform-secrets: not a shared secret variable',
      secretKeys,
      (p) => ((p.exampleSecret.stringData as Obj).DETERMINATION_SIGNING_KEYS = 'CHANGE_ME'),
    ],
    [
      'DETERMINATION_SIGNING_KEYS in the ConfigMap',
      noSecretInConfigMap,
      (p) => ((configMapOf(p).data as Obj).DETERMINATION_SIGNING_KEYS = 'x'),
    ],
    [
      'the determinations Deployment not referring to its Secret',
      ownSecretsPrivate,
      (p) =>
        (containerOf(p, 'determinations').env = listAt(containerOf(p, 'determinations'), 'env').filter(
          (e) => !e.valueFrom,
        )),
    ],
    [
      'no signing keys in their Secret',
      everyVariableDefined,
      (p) => delete (signingKeySecretOf(p).stringData as Obj).DETERMINATION_SIGNING_KEYS,
    ],
    [
      'webhooks reading the dashboard token key Secret wholesale',
      ownSecretsPrivate,
      (p) =>
        listAt(containerOf(p, 'webhooks'), 'envFrom').push({
          secretRef: { name: 'gateway-dashboard-token-key' },
        }),
    ],
    [
      'policy taking the dashboard token keys by secretKeyRef',
      ownSecretsPrivate,
      (p) => setEnvFrom(containerOf(p, 'policy'), 'DASHBOARD_TOKEN_KEYS', 'gateway-dashboard-token-key'),
    ],
    [
      'DASHBOARD_TOKEN_KEYS in platform-secrets (every service reads it)',
      ownSecretsPrivate,
      (p) => ((p.exampleSecret.stringData as Obj).DASHBOARD_TOKEN_KEYS = 'CHANGE_ME'),
    ],
    [
      'DASHBOARD_TOKEN_KEYS in the ConfigMap',
      noSecretInConfigMap,
      (p) => ((configMapOf(p).data as Obj).DASHBOARD_TOKEN_KEYS = 'x'),
    ],
    [
      'the gateway Deployment not referring to its Secret',
      ownSecretsPrivate,
      (p) =>
        (containerOf(p, 'gateway').env = listAt(containerOf(p, 'gateway'), 'env').filter(
          (e) => !e.valueFrom,
        )),
    ],
    [
      'no dashboard token keys in their Secret',
      everyVariableDefined,
      (p) => delete (dashboardKeySecretOf(p).stringData as Obj).DASHBOARD_TOKEN_KEYS,
    ],
    [
      'a misspelled dashboard setting',
      everyKeyRead,
      (p) => ((configMapOf(p).data as Obj).ACCESS_TOKEN_TTL = '900'),
    ],
    [
      'the gateway reading the provider credentials wholesale',
      ownSecretsPrivate,
      (p) =>
        listAt(containerOf(p, 'gateway'), 'envFrom').push({
          secretRef: { name: 'payments-provider-credentials' },
        }),
    ],
    [
      'webhooks taking the consumer secret by secretKeyRef',
      ownSecretsPrivate,
      (p) => setEnvFrom(containerOf(p, 'webhooks'), 'MPESA_CONSUMER_SECRET', 'payments-provider-credentials'),
    ],
    [
      'policy mounting the provider credentials as a volume',
      ownSecretsPrivate,
      (p) =>
        listAt(podSpecOf(p, 'policy'), 'volumes').push({
          name: 'mpesa',
          secret: { secretName: 'payments-provider-credentials' },
        }),
    ],
    [
      'MPESA_PASSKEY in platform-secrets (every service reads it)',
      ownSecretsPrivate,
      (p) => ((p.exampleSecret.stringData as Obj).MPESA_PASSKEY = 'CHANGE_ME'),
    ],
    [
      'PAYMENTS_CALLBACK_TOKEN in the ConfigMap',
      noSecretInConfigMap,
      (p) => ((configMapOf(p).data as Obj).PAYMENTS_CALLBACK_TOKEN = 'x'.repeat(32)),
    ],
    [
      'the payments Deployment not referring to its Secret',
      ownSecretsPrivate,
      (p) =>
        (containerOf(p, 'payments').env = listAt(containerOf(p, 'payments'), 'env').filter(
          (e) => !e.valueFrom,
        )),
    ],
    [
      'no callback token in the provider Secret',
      everyVariableDefined,
      (p) => delete (providerCredentialsOf(p).stringData as Obj).PAYMENTS_CALLBACK_TOKEN,
    ],
    [
      'PAYMENTS_URL on the callbacks port',
      serviceUrls,
      (p) => ((configMapOf(p).data as Obj).PAYMENTS_URL = 'http://payments:3001'),
    ],
    [
      'PAYMENTS_URL to the callbacks Service',
      serviceUrls,
      (p) => ((configMapOf(p).data as Obj).PAYMENTS_URL = 'http://payments-callbacks:3001'),
    ],
    [
      'a plain-http callback base URL',
      paymentsUrls,
      (p) => ((configMapOf(p).data as Obj).PAYMENTS_CALLBACK_BASE_URL = 'http://callbacks.example.com'),
    ],
    [
      'an in-cluster callback base URL',
      paymentsUrls,
      (p) =>
        ((configMapOf(p).data as Obj).PAYMENTS_CALLBACK_BASE_URL =
          'https://payments-callbacks.parametric.svc.cluster.local'),
    ],
    [
      'a callback base URL with a trailing slash',
      paymentsUrls,
      (p) => ((configMapOf(p).data as Obj).PAYMENTS_CALLBACK_BASE_URL = 'https://callbacks.example.com/'),
    ],
    [
      'a plain-http Daraja',
      paymentsUrls,
      (p) => ((configMapOf(p).data as Obj).MPESA_BASE_URL = 'http://sandbox.safaricom.co.ke'),
    ],
    [
      'REDIS_PREFIX only by default',
      sharedRedisPrefix,
      (p) => delete (configMapOf(p).data as Obj).REDIS_PREFIX,
    ],
    [
      'a REDIS_PREFIX of its own for webhooks',
      sharedRedisPrefix,
      (p) => setEnv(containerOf(p, 'webhooks'), 'REDIS_PREFIX', 'webhooks'),
    ],
  ];

  test.each(PLATFORM_BREAKS.map(([what, check, breakIt]) => [what, check.name, check, breakIt] as const))(
    '%s: the %s check fails',
    (_what, _checkName, check, breakIt) => {
      expect(check(platform)).toEqual([]);
      const copy = structuredClone(platform);
      breakIt(copy);
      expect(check(copy)).not.toEqual([]);
    },
  );
});
