/**
 * The kustomize base parses and every resource in it is a valid Kubernetes object, checked
 * offline against the Kubernetes OpenAPI schemas bundled in `kubernetes-models`.
 */
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { Deployment, type IDeployment } from 'kubernetes-models/apps/v1';
import { HorizontalPodAutoscaler, type IHorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { type IJob, Job } from 'kubernetes-models/batch/v1';
import {
  type IIngress,
  type INetworkPolicy,
  Ingress,
  NetworkPolicy,
} from 'kubernetes-models/networking.k8s.io/v1';
import { type IPodDisruptionBudget, PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import {
  ConfigMap,
  type IConfigMap,
  type ISecret,
  type IService,
  type IServiceAccount,
  Secret,
  Service,
  ServiceAccount,
} from 'kubernetes-models/v1';
import { parseAllDocuments, parse as parseYamlLoose } from 'yaml';
import { OWN_SECRETS } from './services';
import {
  isObj,
  k8sBase,
  type Obj,
  parseYaml,
  readK8sFile,
  readKustomization,
  readListedResources,
  readPlatformConfig,
  readRepoFile,
  repoFileExists,
} from './support';

/**
 * Schema-checked model per `apiVersion/kind`. A kind missing here fails the test: add its
 * model when the base gains a new kind of resource.
 */
const MODELS: Record<string, (obj: Obj) => { validate(): void }> = {
  'apps/v1/Deployment': (o) => new Deployment(o as unknown as IDeployment),
  'batch/v1/Job': (o) => new Job(o as unknown as IJob),
  'v1/Service': (o) => new Service(o as unknown as IService),
  'v1/ConfigMap': (o) => new ConfigMap(o as unknown as IConfigMap),
  'v1/Secret': (o) => new Secret(o as unknown as ISecret),
  'v1/ServiceAccount': (o) => new ServiceAccount(o as unknown as IServiceAccount),
  'policy/v1/PodDisruptionBudget': (o) => new PodDisruptionBudget(o as unknown as IPodDisruptionBudget),
  'networking.k8s.io/v1/Ingress': (o) => new Ingress(o as unknown as IIngress),
  'networking.k8s.io/v1/NetworkPolicy': (o) => new NetworkPolicy(o as unknown as INetworkPolicy),
  'autoscaling/v2/HorizontalPodAutoscaler': (o) =>
    new HorizontalPodAutoscaler(o as unknown as IHorizontalPodAutoscaler),
};

/** Validates like `kubectl apply` would on the schema side; throws with the failing paths. */
function validateK8s(obj: Obj): void {
  const key = `${String(obj.apiVersion)}/${String(obj.kind)}`;
  const model = MODELS[key];
  if (!model) throw new Error(`no schema model for ${key}: add it to MODELS in this test`);
  model(obj).validate();
}

const clone = (o: Obj): Obj => structuredClone(o);

/** The example Secrets: platform-secrets and each service's own Secret. Never listed, never applied. */
const EXAMPLE_SECRETS = ['platform-secrets', ...OWN_SECRETS.map((s) => s.secret)];

/** Manifests not in the kustomization's resources, but for the kustomization and the example Secrets. */
function unlisted(files: string[], resources: string[]): string[] {
  const exempt = ['kustomization.yaml', ...EXAMPLE_SECRETS.map((name) => `${name}.example.yaml`)];
  return files.filter((file) => !exempt.includes(file) && !resources.includes(file));
}

describe('k8s/base kustomization', () => {
  const kustomization = readKustomization();

  test('is a kustomize Kustomization that labels everything part-of the platform', () => {
    expect(kustomization.raw.apiVersion).toBe('kustomize.config.k8s.io/v1beta1');
    expect(kustomization.raw.kind).toBe('Kustomization');
    const labels = kustomization.raw.labels;
    const commonLabels = kustomization.raw.commonLabels;
    const partOf = [
      ...(Array.isArray(labels) ? labels.filter(isObj).map((l) => (isObj(l.pairs) ? l.pairs : {})) : []),
      ...(isObj(commonLabels) ? [commonLabels] : []),
    ].map((pairs) => pairs['app.kubernetes.io/part-of']);
    expect(partOf).toContain('parametric');
  });

  test('generates the platform ConfigMap from platform-config.env, so its name carries a hash of it', () => {
    expect(kustomization.raw.configMapGenerator).toEqual([
      { name: 'platform-config', envs: ['platform-config.env'] },
    ]);
    const configMap = readPlatformConfig();
    expect(() => validateK8s(configMap)).not.toThrow();
    expect(Object.keys(configMap.data as Obj).length).toBeGreaterThan(0);
  });

  test('lists at least the gateway and the webhooks resources, each once', () => {
    expect(kustomization.resources).toEqual(
      expect.arrayContaining([
        'gateway-deployment.yaml',
        'gateway-service.yaml',
        'gateway-ops-service.yaml',
        'gateway-pdb.yaml',
        'webhooks-deployment.yaml',
        'webhooks-service.yaml',
        'webhooks-pdb.yaml',
      ]),
    );
    expect(new Set(kustomization.resources).size).toBe(kustomization.resources.length);
  });

  test('lists every manifest of k8s/base (an unlisted file would silently never be applied)', () => {
    const onDisk = readdirSync(k8sBase).filter((file) => /\.ya?ml$/.test(file));
    expect(unlisted(onDisk, kustomization.resources)).toEqual([]);
    // The check itself: a new file left out of the list is reported.
    expect(unlisted([...onDisk, 'webhooks-hpa.yaml'], kustomization.resources)).toEqual([
      'webhooks-hpa.yaml',
    ]);
    // Only the known examples are exempt, not any *.example.yaml.
    expect(unlisted([...onDisk, 'other.example.yaml'], kustomization.resources)).toEqual([
      'other.example.yaml',
    ]);
  });

  test.each(kustomization.resources)('%s exists, parses and is a single named resource', (file) => {
    expect(existsSync(path.join(k8sBase, file))).toBe(true);
    const docs = parseAllDocuments(readRepoFile(`k8s/base/${file}`)).filter((doc) => doc.contents !== null);
    expect(docs).toHaveLength(1);
    const obj = readK8sFile(file);
    expect(typeof obj.apiVersion).toBe('string');
    expect(typeof obj.kind).toBe('string');
    expect(isObj(obj.metadata) && typeof obj.metadata.name === 'string').toBe(true);
  });

  test.each(kustomization.resources)('%s validates against the Kubernetes schema', (file) => {
    expect(() => validateK8s(readK8sFile(file))).not.toThrow();
  });

  test('no two resources share a kind and name', () => {
    const ids = readListedResources().map(({ obj }) => `${String(obj.kind)}/${String(nameOf(obj))}`);
    expect(new Set(ids).size).toBe(ids.length);
  });

  test('ships no Secret: secrets are created by ops, never applied from git', () => {
    expect(readListedResources().filter(({ obj }) => obj.kind === 'Secret')).toEqual([]);
    for (const name of EXAMPLE_SECRETS) expect(kustomization.resources).not.toContain(`${name}.example.yaml`);
    expect(kustomization.raw.secretGenerator).toBeUndefined();
  });

  test('the example Secrets are platform-secrets and each service’s own', () => {
    expect(EXAMPLE_SECRETS).toEqual([
      'platform-secrets',
      'gateway-credentials',
      'gateway-dashboard-token-key',
      'webhooks-encryption-key',
      'policy-chain-credentials',
      'determinations-signing-key',
      'payments-provider-credentials',
    ]);
  });

  test.each(EXAMPLE_SECRETS)(
    'the example Secret %s exists, is a valid Secret of that name, with placeholders only',
    (name) => {
      expect(repoFileExists(`k8s/base/${name}.example.yaml`)).toBe(true);
      const secret = readK8sFile(`${name}.example.yaml`);
      expect(() => validateK8s(secret)).not.toThrow();
      expect(secret.kind).toBe('Secret');
      expect(isObj(secret.metadata) && secret.metadata.name).toBe(name);
      expect(secret.data).toBeUndefined();
      const values = Object.values(isObj(secret.stringData) ? secret.stringData : {});
      expect(values.length).toBeGreaterThan(0);
      for (const value of values) expect(String(value)).toMatch(/CHANGE_ME/);
    },
  );
});

describe('the offline schema validator rejects broken manifests', () => {
  const deployment = readK8sFile('gateway-deployment.yaml');

  test('a Deployment with replicas as a string', () => {
    const broken = clone(deployment);
    (broken.spec as Obj).replicas = '2';
    expect(() => validateK8s(broken)).toThrow(/replicas must be integer/);
  });

  test('a Deployment whose pod has no containers', () => {
    const broken = clone(deployment);
    delete ((broken.spec as Obj).template as { spec: Obj }).spec.containers;
    expect(() => validateK8s(broken)).toThrow(/containers/);
  });

  test('a container port given as a string', () => {
    const broken = clone(deployment);
    const containers = ((broken.spec as Obj).template as { spec: { containers: { ports: Obj[] }[] } }).spec
      .containers;
    const first = containers[0]?.ports[0];
    if (!first) throw new Error('gateway container has no ports');
    first.containerPort = '3000';
    expect(() => validateK8s(broken)).toThrow(/containerPort must be integer/);
  });

  test('a ConfigMap with an unquoted number (YAML 1.1, as Kubernetes reads it)', () => {
    const broken = parseYaml(
      'apiVersion: v1\nkind: ConfigMap\nmetadata: { name: x }\ndata:\n  PORT: 3000\n  DEBUG: yes\n',
      'inline',
      '1.1',
    );
    if (!isObj(broken)) throw new Error('not a mapping');
    expect(() => validateK8s(broken)).toThrow(/must be string/);
  });

  test('a resource kind the test has no schema for', () => {
    expect(() =>
      validateK8s({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' } }),
    ).toThrow(/no schema model/);
  });

  test('YAML with a duplicated key (the last would silently win in kubectl)', () => {
    expect(() => parseYaml('a: 1\na: 2\n', 'inline')).toThrow();
    // The loose parser would accept it, which is why parseYaml is strict.
    expect(parseYamlLoose('a: 1\na: 2\n', { uniqueKeys: false })).toEqual({ a: 2 });
  });
});

function nameOf(obj: Obj): unknown {
  return isObj(obj.metadata) ? obj.metadata.name : undefined;
}
