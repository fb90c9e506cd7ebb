/**
 * What ops rely on in the gateway's Deployment and the platform's configuration: probes on the
 * right paths and port, a locked-down non-root container with resources, and an environment
 * that comes only from platform-config / platform-secrets and covers every variable.
 */
import { gatewayConfigSchema } from '../../services/gateway/src/config';
import {
  at,
  configData,
  findResource,
  isObj,
  listAt,
  NON_SECRET_ENV,
  type Obj,
  OPTIONAL_ENV,
  objAt,
  readK8sFile,
  SECRET_ENV,
} from './support';

const deployment = findResource('Deployment', 'gateway');
const podSpec = objAt(deployment, 'spec.template.spec');
const containers = listAt(podSpec, 'containers');
const gateway = containers.find((c) => c.name === 'gateway') as Obj;
const configMap = findResource('ConfigMap', 'platform-config');
const exampleSecret = readK8sFile('platform-secrets.example.yaml');
const config = configData(configMap);
const secretKeys = Object.keys(configData(exampleSecret));

function portNumber(name: string): number {
  const port = listAt(gateway, 'ports').find((p) => p.name === name);
  if (!port || typeof port.containerPort !== 'number')
    throw new Error(`gateway has no container port ${name}`);
  return port.containerPort;
}

/** Resolves a probe's port (a name or a number) to a container port number. */
function probePort(probe: string): number {
  const port = at(gateway, `${probe}.httpGet.port`);
  return typeof port === 'string' ? portNumber(port) : Number(port);
}

/** A Kubernetes quantity ("100m", "1", "256Mi", "1G") as a plain number. */
function quantity(value: unknown): number {
  const match = /^(\d+(?:\.\d+)?)(m|Ki|Mi|Gi|k|M|G)?$/.exec(String(value));
  if (!match) throw new Error(`not a quantity: ${String(value)}`);
  const unit =
    { m: 1e-3, Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, k: 1e3, M: 1e6, G: 1e9 }[match[2] ?? ''] ?? 1;
  return Number(match[1]) * unit;
}

/** Values of `env` entries set literally in the container (not from a ConfigMap/Secret key). */
function literalEnv(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const entry of Array.isArray(gateway.env) ? gateway.env.filter(isObj) : []) {
    if (typeof entry.value === 'string') out[String(entry.name)] = entry.value;
  }
  return out;
}

describe('gateway Deployment', () => {
  test('has a gateway container with the gateway image and 2 replicas', () => {
    expect(gateway).toBeDefined();
    expect(String(gateway.image)).toMatch(/^parametric\/gateway:/);
    expect(at(deployment, 'spec.replicas')).toBe(2);
  });

  test('names its ports: http 3000 (partner API) and ops 3001', () => {
    expect(portNumber('http')).toBe(3000);
    expect(portNumber('ops')).toBe(3001);
  });

  test('the ConfigMap ports match the container ports', () => {
    expect(Number(config.GATEWAY_PORT)).toBe(portNumber('http'));
    expect(Number(config.OPS_PORT)).toBe(portNumber('ops'));
  });

  test('liveness and startup probe GET /healthz, readiness GET /readyz, all on the partner port', () => {
    expect(at(gateway, 'livenessProbe.httpGet.path')).toBe('/healthz');
    expect(at(gateway, 'startupProbe.httpGet.path')).toBe('/healthz');
    expect(at(gateway, 'readinessProbe.httpGet.path')).toBe('/readyz');
    for (const probe of ['livenessProbe', 'readinessProbe', 'startupProbe']) {
      expect([probe, probePort(probe)]).toEqual([probe, portNumber('http')]);
    }
  });

  test('the startup probe allows at least 30 s to boot before liveness can kill the pod', () => {
    const period = Number(at(gateway, 'startupProbe.periodSeconds') ?? 10);
    const failures = Number(at(gateway, 'startupProbe.failureThreshold') ?? 3);
    expect(period * failures).toBeGreaterThanOrEqual(30);
  });

  test('the grace period covers the preStop pause plus a graceful shutdown', () => {
    const grace = Number(podSpec.terminationGracePeriodSeconds);
    const preStop = at(gateway, 'lifecycle');
    const command = isObj(preStop) ? (at(preStop, 'preStop.exec.command') as string[]) : [];
    const pause = command[0] === 'sleep' ? Number(command[1]) : 0;
    expect(grace).toBeGreaterThanOrEqual(30);
    expect(grace - pause).toBeGreaterThanOrEqual(20);
  });

  test('runs as non-root uid 1000, read-only root, no privilege escalation, all capabilities dropped', () => {
    const pod = objAt(podSpec, 'securityContext');
    const container = objAt(gateway, 'securityContext');
    expect(container.runAsNonRoot ?? pod.runAsNonRoot).toBe(true);
    expect(container.runAsUser ?? pod.runAsUser).toBe(1000);
    expect(container.readOnlyRootFilesystem).toBe(true);
    expect(container.allowPrivilegeEscalation).toBe(false);
    expect(container.privileged ?? false).toBe(false);
    expect(at(container, 'capabilities.drop')).toEqual(['ALL']);
    expect(at(container, 'capabilities.add') ?? []).toEqual([]);
  });

  test('/tmp is a writable emptyDir (the only writable path under a read-only root)', () => {
    const mount = listAt(gateway, 'volumeMounts').find((m) => m.mountPath === '/tmp');
    expect(mount).toBeDefined();
    expect(mount?.readOnly ?? false).toBe(false);
    const volume = listAt(podSpec, 'volumes').find((v) => v.name === mount?.name);
    expect(volume && isObj(volume.emptyDir)).toBe(true);
  });

  test('every container sets cpu and memory requests and limits, requests within limits', () => {
    for (const c of containers) {
      const requests = objAt(c, 'resources.requests');
      const limits = objAt(c, 'resources.limits');
      expect({ container: c.name, requests: Object.keys(requests), limits: Object.keys(limits) }).toEqual({
        container: c.name,
        requests: expect.arrayContaining(['cpu', 'memory']),
        limits: expect.arrayContaining(['cpu', 'memory']),
      });
      expect(quantity(requests.memory)).toBeLessThanOrEqual(quantity(limits.memory));
      expect(quantity(requests.cpu)).toBeLessThanOrEqual(quantity(limits.cpu));
    }
  });

  test('env comes from the platform-config ConfigMap and platform-secrets Secret, by reference', () => {
    const envFrom = listAt(gateway, 'envFrom');
    expect(envFrom).toContainEqual({ configMapRef: { name: 'platform-config' } });
    expect(envFrom).toContainEqual({ secretRef: { name: 'platform-secrets' } });
    for (const source of envFrom) expect(source.prefix).toBeUndefined();
  });

  test('no literal env value carries a secret; only per-service values are set inline', () => {
    const inline = literalEnv();
    for (const key of SECRET_ENV) expect(inline[key]).toBeUndefined();
    expect(Object.keys(inline).sort()).toEqual(['MONGO_DB']);
    expect(inline.MONGO_DB).toBe('gateway');
  });

  test('service links are off, so Kubernetes does not inject GATEWAY_PORT=tcp://… into the pod', () => {
    expect(podSpec.enableServiceLinks).toBe(false);
  });
});

describe('platform-config and platform-secrets', () => {
  test('together with the Deployment they define every environment variable', () => {
    const defined = new Set([...Object.keys(config), ...secretKeys, ...Object.keys(literalEnv())]);
    const missing = [...NON_SECRET_ENV, ...SECRET_ENV].filter((key) => !defined.has(key));
    expect(missing).toEqual([]);
  });

  test('the example Secret lists exactly the secret variables', () => {
    expect([...secretKeys].sort()).toEqual([...SECRET_ENV].sort());
  });

  test('no secret key is in the ConfigMap (and no key is in both)', () => {
    expect(Object.keys(config).filter((key) => SECRET_ENV.includes(key) || secretKeys.includes(key))).toEqual(
      [],
    );
  });

  test('ConfigMap values look like what the services expect', () => {
    expect(config.NODE_ENV).toBe('production');
    expect(config.LOG_LEVEL).toBe('info');
    for (const key of OPTIONAL_ENV) {
      // Internal base URLs: in-cluster Service DNS names, plain http, no trailing slash.
      expect([key, config[key]]).toEqual([
        key,
        expect.stringMatching(/^http:\/\/[a-z0-9-]+(\.[a-z0-9-]+)*:\d+$/),
      ]);
    }
  });

  test("the gateway's own config schema accepts the deployed environment", () => {
    // Real secrets are not in git: stand-ins of the right shape.
    const secrets = Object.fromEntries(
      SECRET_ENV.map((key) => [key, `stand-in-${key.toLowerCase()}-0123456789`]),
    );
    const env = { ...config, ...secrets, ...literalEnv() } as NodeJS.ProcessEnv;
    const parsed = gatewayConfigSchema.safeParse(env);
    expect(parsed.error?.issues ?? []).toEqual([]);
    expect(parsed.data).toMatchObject({
      NODE_ENV: 'production',
      GATEWAY_PORT: 3000,
      OPS_PORT: 3001,
      MONGO_DB: 'gateway',
      RATE_LIMIT_POINTS: 100,
      RATE_LIMIT_WINDOW_SECONDS: 60,
    });
  });

  test('every ConfigMap key is a setting a service reads (no typo silently falling back to a default)', () => {
    // The union of the deployed services' config schemas: add each new service's schema here.
    const known = new Set(Object.keys(gatewayConfigSchema.shape));
    expect(Object.keys(config).filter((key) => !known.has(key))).toEqual([]);
  });
});
