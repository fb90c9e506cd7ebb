/**
 * The per-environment overlays (k8s/overlays/{dev,staging,prod}), rendered with the real
 * kustomize (test/deploy/kustomize.ts) and checked on what `kubectl apply -k` would send:
 * a namespace with Pod Security Admission `restricted`, every object in it, pinned images,
 * the hashed platform-config behind every Deployment, the two public hosts over TLS and routed to
 * their public ports only, and (prod) an autoscaler per service that PodDisruptionBudgets never
 * block. NetworkPolicies: k8s-network-policies.test.ts. Offline; no cluster.
 */

import { Deployment, type IDeployment } from 'kubernetes-models/apps/v1';
import { HorizontalPodAutoscaler, type IHorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { type IJob, Job } from 'kubernetes-models/batch/v1';
import { type INetworkPolicy, NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1';
import { type IPodDisruptionBudget, PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import {
  ConfigMap,
  type IConfigMap,
  type INamespace,
  type IService,
  Namespace,
  Service,
} from 'kubernetes-models/v1';
import { ENVIRONMENTS, type Environment, named, ofKind, overlayDir, render, renderWith } from './kustomize';
import { SERVICES } from './services';
import { at, configData, isObj, listAt, nameOf, type Obj, objAt, problemsOf, selects } from './support';

const rendered = Object.fromEntries(ENVIRONMENTS.map((env) => [env, render(overlayDir(env))])) as Record<
  Environment,
  Obj[]
>;
const NAMESPACE: Record<Environment, string> = {
  dev: 'parametric-dev',
  staging: 'parametric-staging',
  prod: 'parametric-prod',
};
const deployments = (objs: Obj[]) => ofKind(objs, 'Deployment');
const containersOf = (d: Obj) => listAt(d, 'spec.template.spec.containers');

// ---------------------------------------------------------------------------------------------
// Row 1: namespace, images, replicas and resources, configuration, public hosts.

const PSA_MODES = ['enforce', 'audit', 'warn'];

/** The Namespace object, its PSA labels, and that every namespaced object of the render is in it. */
function namespaceProblems(objs: Obj[], expected: string): string[] {
  return problemsOf((problem) => {
    const namespaces = ofKind(objs, 'Namespace');
    if (namespaces.length !== 1 || nameOf(namespaces[0]) !== expected)
      return problem(`expected one Namespace ${expected}, got ${namespaces.map(nameOf).join(', ')}`);
    const labels = objAt(namespaces[0], 'metadata.labels');
    for (const mode of PSA_MODES)
      if (labels[`pod-security.kubernetes.io/${mode}`] !== 'restricted')
        problem(`Namespace ${expected}: pod-security.kubernetes.io/${mode} is not restricted`);
    for (const obj of objs) {
      if (obj.kind === 'Namespace') continue;
      const ns = isObj(obj.metadata) ? obj.metadata.namespace : undefined;
      if (ns !== expected) problem(`${String(obj.kind)} ${nameOf(obj)} is in namespace ${String(ns)}`);
    }
  });
}

/** An image pinned: a registry name, a tag that is not `latest`, and (prod) a sha256 digest. */
function imageProblems(objs: Obj[], env: Environment): string[] {
  return problemsOf((problem) => {
    for (const d of deployments(objs)) {
      for (const c of containersOf(d)) {
        const image = String(c.image);
        const m = /^([a-z0-9.-]+\/[a-z0-9/_.-]+):([\w][\w.-]{0,127})(@sha256:[0-9a-f]{64})?$/.exec(image);
        if (!m) {
          problem(`${nameOf(d)}: ${image} has no registry/name:tag`);
          continue;
        }
        if (m[2] === 'latest') problem(`${nameOf(d)}: ${image} uses :latest`);
        if (!m[1]?.endsWith(`/${nameOf(d)}`)) problem(`${nameOf(d)}: ${image} is not its own image`);
        if (env === 'prod' && !m[3]) problem(`${nameOf(d)}: ${image} is not pinned by digest`);
      }
    }
  });
}

/**
 * The one generated platform-config (name `platform-config-<hash>`), and every Deployment's
 * envFrom naming exactly it: the reference changes with the data, so the pods roll.
 */
function configProblems(objs: Obj[]): string[] {
  return problemsOf((problem) => {
    const maps = ofKind(objs, 'ConfigMap').filter((c) => String(nameOf(c)).startsWith('platform-config'));
    const hashed = maps.filter((c) => /^platform-config-[a-z0-9]{10}$/.test(String(nameOf(c))));
    if (maps.length !== 1 || hashed.length !== 1)
      return problem(`platform-config not one hash-suffixed ConfigMap: ${maps.map(nameOf).join(', ')}`);
    const name = nameOf(hashed[0]);
    for (const d of deployments(objs)) {
      const refs = containersOf(d).flatMap((c) =>
        (Array.isArray(c.envFrom) ? c.envFrom.filter(isObj) : [])
          .map((s) => (isObj(s.configMapRef) ? s.configMapRef.name : undefined))
          .filter((n) => n !== undefined),
      );
      if (JSON.stringify(refs) !== JSON.stringify([name]))
        problem(`Deployment ${nameOf(d)} refers to ConfigMaps ${JSON.stringify(refs)}, not ${name}`);
    }
  });
}

const PUBLIC_BACKENDS: Record<string, { service: string; port: number; path: string }> = {
  'partner-api': { service: 'gateway', port: 3000, path: '/api' },
  'payments-callbacks': { service: 'payments-callbacks', port: 3001, path: '/mpesa' },
};

/**
 * The Gateway's listeners are HTTPS only, each with a certificate (a Secret, kept by the
 * cert-manager the Gateway names); the partner host and the callback host each have one, and
 * exactly one route each, to its public Service port only; PAYMENTS_CALLBACK_BASE_URL is the
 * callback host's https URL.
 */
function publicEntryProblems(objs: Obj[]): string[] {
  return problemsOf((problem) => {
    const gateways = ofKind(objs, 'Gateway');
    if (gateways.length !== 1) return problem(`expected one Gateway, got ${gateways.length}`);
    const gateway = gateways[0] as Obj;
    const annotations = isObj(at(gateway, 'metadata')) ? objAt(gateway, 'metadata').annotations : undefined;
    if (!isObj(annotations) || !Object.keys(annotations).some((k) => k.startsWith('cert-manager.io/')))
      problem('the Gateway names no cert-manager issuer for its certificates');
    const listeners = listAt(gateway, 'spec.listeners');
    for (const l of listeners) {
      if (l.protocol !== 'HTTPS' || l.port !== 443) problem(`listener ${String(l.name)} is not HTTPS on 443`);
      const tls = isObj(l.tls) ? l.tls : {};
      const refs = Array.isArray(tls.certificateRefs) ? tls.certificateRefs.filter(isObj) : [];
      if (tls.mode !== 'Terminate' || refs.length !== 1 || (refs[0]?.kind ?? 'Secret') !== 'Secret')
        problem(`listener ${String(l.name)} does not terminate TLS with one certificate Secret`);
      if (typeof l.hostname !== 'string' || l.hostname.endsWith('.invalid'))
        problem(`listener ${String(l.name)} has the component's placeholder host ${String(l.hostname)}`);
    }
    const routes = ofKind(objs, 'HTTPRoute');
    if (routes.map(nameOf).sort().join() !== Object.keys(PUBLIC_BACKENDS).sort().join())
      problem(`routes ${routes.map(nameOf).join(', ')}, not ${Object.keys(PUBLIC_BACKENDS).join(', ')}`);
    const hostOf: Record<string, string> = {};
    for (const route of routes) {
      const want = PUBLIC_BACKENDS[String(nameOf(route))];
      if (!want) continue;
      const parents = listAt(route, 'spec.parentRefs');
      const listener = listeners.find((l) =>
        parents.some((p) => p.name === nameOf(gateway) && p.sectionName === l.name),
      );
      const hostnames = at(route, 'spec.hostnames');
      if (!listener || JSON.stringify(hostnames) !== JSON.stringify([listener.hostname]))
        problem(
          `route ${nameOf(route)} is not on one HTTPS listener with its host (${JSON.stringify(hostnames)})`,
        );
      else hostOf[String(nameOf(route))] = String(listener.hostname);
      const rules = listAt(route, 'spec.rules');
      const backends = rules.flatMap((r) =>
        Array.isArray(r.backendRefs) ? r.backendRefs.filter(isObj) : [],
      );
      const paths = rules.flatMap((r) =>
        (Array.isArray(r.matches) ? r.matches.filter(isObj) : []).map((m) => m.path),
      );
      if (JSON.stringify(backends) !== JSON.stringify([{ name: want.service, port: want.port }]))
        problem(
          `route ${nameOf(route)} sends to ${JSON.stringify(backends)}, not ${want.service}:${want.port} only`,
        );
      if (JSON.stringify(paths) !== JSON.stringify([{ type: 'PathPrefix', value: want.path }]))
        problem(`route ${nameOf(route)} matches ${JSON.stringify(paths)}, not ${want.path} only`);
    }
    if (hostOf['partner-api'] && hostOf['partner-api'] === hostOf['payments-callbacks'])
      problem('the partner API and the callbacks share a host');
    const config = ofKind(objs, 'ConfigMap').find((c) => String(nameOf(c)).startsWith('platform-config'));
    const callbackUrl = config ? configData(config).PAYMENTS_CALLBACK_BASE_URL : undefined;
    if (callbackUrl !== `https://${hostOf['payments-callbacks']}`)
      problem(`PAYMENTS_CALLBACK_BASE_URL ${String(callbackUrl)} is not https://<the callback host>`);
  });
}

/** Kubernetes' own models for the built-in kinds; Gateway API objects are checked above. */
const MODELS: Record<string, (o: Obj) => { validate(): void }> = {
  Namespace: (o) => new Namespace(o as unknown as INamespace),
  ConfigMap: (o) => new ConfigMap(o as unknown as IConfigMap),
  Service: (o) => new Service(o as unknown as IService),
  Deployment: (o) => new Deployment(o as unknown as IDeployment),
  Job: (o) => new Job(o as unknown as IJob),
  PodDisruptionBudget: (o) => new PodDisruptionBudget(o as unknown as IPodDisruptionBudget),
  NetworkPolicy: (o) => new NetworkPolicy(o as unknown as INetworkPolicy),
  HorizontalPodAutoscaler: (o) => new HorizontalPodAutoscaler(o as unknown as IHorizontalPodAutoscaler),
};
const CRDS = ['Gateway', 'HTTPRoute'];

describe.each(ENVIRONMENTS)('k8s/overlays/%s, rendered', (env) => {
  const objs = rendered[env];

  test('every object is a known kind, and the built-in ones validate against the Kubernetes schema', () => {
    for (const obj of objs) {
      const kind = String(obj.kind);
      if (CRDS.includes(kind)) continue;
      const model = MODELS[kind];
      if (!model) throw new Error(`${kind} ${nameOf(obj)}: no schema model in this test`);
      expect(() => model(obj).validate()).not.toThrow();
    }
  });

  test(`its namespace, ${NAMESPACE[env]}, enforces, audits and warns on the restricted Pod Security level`, () => {
    expect(namespaceProblems(objs, NAMESPACE[env])).toEqual([]);
  });

  test('every image is pinned: registry/name:tag, never :latest (prod: by digest too)', () => {
    expect(imageProblems(objs, env)).toEqual([]);
  });

  test('every Deployment refers to the one hash-suffixed platform-config', () => {
    expect(configProblems(objs)).toEqual([]);
    expect(deployments(objs).map(nameOf).sort()).toEqual(SERVICES.map((s) => s.name).sort());
  });

  test('the partner API host and the provider callback host are HTTPS, each routed to its public port only', () => {
    expect(publicEntryProblems(objs)).toEqual([]);
  });

  test('requests and limits are set on every container', () => {
    for (const d of deployments(objs))
      for (const c of containersOf(d)) {
        const r = objAt(c, 'resources');
        expect([isObj(r.requests), isObj(r.limits)]).toEqual([true, true]);
      }
  });
});

test('the environments differ where they must: namespaces, hosts, Daraja and replicas', () => {
  const summary = Object.fromEntries(
    ENVIRONMENTS.map((env) => {
      const objs = rendered[env];
      const config = configData(ofKind(objs, 'ConfigMap')[0] as Obj);
      return [
        env,
        {
          hosts: listAt(named(objs, 'Gateway', 'parametric'), 'spec.listeners').map((l) => l.hostname),
          mpesa: config.MPESA_BASE_URL,
          replicas: deployments(objs).map((d) => at(d, 'spec.replicas') ?? 'hpa'),
        },
      ];
    }),
  );
  expect(summary).toEqual({
    dev: {
      hosts: ['api.dev.parametric.example', 'callbacks.dev.parametric.example'],
      mpesa: 'https://sandbox.safaricom.co.ke',
      replicas: [1, 1, 1, 1, 1],
    },
    staging: {
      hosts: ['api.staging.parametric.example', 'callbacks.staging.parametric.example'],
      mpesa: 'https://sandbox.safaricom.co.ke',
      replicas: [2, 2, 2, 2, 2],
    },
    prod: {
      hosts: ['api.parametric.example', 'callbacks.parametric.example'],
      mpesa: 'https://api.safaricom.co.ke',
      replicas: ['hpa', 'hpa', 'hpa', 'hpa', 'hpa'],
    },
  });
});

test('a configuration change in an overlay renames platform-config and every Deployment follows (the pods roll)', () => {
  const changed = renderWith(
    [
      'resources: [../../k8s/overlays/prod]',
      'configMapGenerator:',
      '  - name: platform-config',
      '    behavior: merge',
      '    literals: [LOG_LEVEL=warn]',
      '',
    ].join('\n'),
  );
  const before = String(nameOf(ofKind(rendered.prod, 'ConfigMap')[0]));
  const after = String(nameOf(ofKind(changed, 'ConfigMap')[0]));
  expect(after).not.toBe(before);
  expect(configProblems(changed)).toEqual([]);
  expect(configData(ofKind(changed, 'ConfigMap')[0] as Obj).LOG_LEVEL).toBe('warn');
});

describe('the row 1 checks fail on broken copies of the prod render', () => {
  const copy = () => structuredClone(rendered.prod);
  const deploymentIn = (objs: Obj[], name: string) => named(objs, 'Deployment', name);

  test.each<[string, (objs: Obj[]) => string[]]>([
    [
      'a namespace without the enforce label',
      (objs) => {
        delete objAt(named(objs, 'Namespace', 'parametric-prod'), 'metadata.labels')[
          'pod-security.kubernetes.io/enforce'
        ];
        return namespaceProblems(objs, 'parametric-prod');
      },
    ],
    [
      'an object outside the namespace',
      (objs) => {
        objAt(named(objs, 'Service', 'gateway'), 'metadata').namespace = 'default';
        return namespaceProblems(objs, 'parametric-prod');
      },
    ],
    [
      'an image on :latest',
      (objs) => {
        (containersOf(deploymentIn(objs, 'policy'))[0] as Obj).image =
          'registry.example.com/parametric/policy:latest';
        return imageProblems(objs, 'prod');
      },
    ],
    [
      'a prod image by tag only',
      (objs) => {
        (containersOf(deploymentIn(objs, 'policy'))[0] as Obj).image =
          'registry.example.com/parametric/policy:1.4.2';
        return imageProblems(objs, 'prod');
      },
    ],
    [
      'a Deployment on the unhashed ConfigMap name',
      (objs) => {
        (containersOf(deploymentIn(objs, 'webhooks'))[0] as Obj).envFrom = [
          { configMapRef: { name: 'platform-config' } },
        ];
        return configProblems(objs);
      },
    ],
    [
      'an HTTP listener',
      (objs) => {
        const listener = listAt(named(objs, 'Gateway', 'parametric'), 'spec.listeners')[1] as Obj;
        listener.protocol = 'HTTP';
        listener.port = 80;
        delete listener.tls;
        return publicEntryProblems(objs);
      },
    ],
    [
      'the callback route sent to the payments internal API',
      (objs) => {
        const rule = listAt(named(objs, 'HTTPRoute', 'payments-callbacks'), 'spec.rules')[0] as Obj;
        rule.backendRefs = [{ name: 'payments', port: 3000 }];
        return publicEntryProblems(objs);
      },
    ],
    [
      'the partner route opened to every path',
      (objs) => {
        const rule = listAt(named(objs, 'HTTPRoute', 'partner-api'), 'spec.rules')[0] as Obj;
        rule.matches = [{ path: { type: 'PathPrefix', value: '/' } }];
        return publicEntryProblems(objs);
      },
    ],
    [
      'a callback URL on another host',
      (objs) => {
        (ofKind(objs, 'ConfigMap')[0]?.data as Obj).PAYMENTS_CALLBACK_BASE_URL = 'https://elsewhere.example';
        return publicEntryProblems(objs);
      },
    ],
  ])('%s', (_what, breakIt) => {
    expect(breakIt(copy()).length).toBeGreaterThan(0);
  });
});

// ---------------------------------------------------------------------------------------------
// Row 3: autoscaling in prod, and PodDisruptionBudgets that never block a drain.

/** The fewest pods each Deployment runs: its HPA's (or ScaledObject's) minimum, else its replicas. */
function minimumPods(objs: Obj[]): Record<string, number | undefined> {
  const out: Record<string, number | undefined> = {};
  for (const d of deployments(objs)) {
    const name = String(nameOf(d));
    const hpa = ofKind(objs, 'HorizontalPodAutoscaler').find(
      (h) => at(h, 'spec.scaleTargetRef.name') === name,
    );
    const scaled = ofKind(objs, 'ScaledObject').find((s) => at(s, 'spec.scaleTargetRef.name') === name);
    const replicas = at(d, 'spec.replicas');
    out[name] = hpa
      ? Number(at(hpa, 'spec.minReplicas'))
      : scaled
        ? Number(at(scaled, 'spec.minReplicaCount'))
        : typeof replicas === 'number'
          ? replicas
          : undefined;
  }
  return out;
}

/**
 * Every PDB selects one Deployment, and lets at least one of its pods go at its minimum size:
 * `minAvailable` below the minimum, or `maxUnavailable` of at least 1.
 */
function pdbProblems(objs: Obj[]): string[] {
  return problemsOf((problem) => {
    const minimum = minimumPods(objs);
    const pdbs = ofKind(objs, 'PodDisruptionBudget');
    for (const d of deployments(objs))
      if (
        !pdbs.some((p) => selects(at(p, 'spec.selector.matchLabels'), at(d, 'spec.template.metadata.labels')))
      )
        problem(`Deployment ${nameOf(d)} has no PodDisruptionBudget`);
    for (const pdb of pdbs) {
      const selected = deployments(objs).filter((d) =>
        selects(at(pdb, 'spec.selector.matchLabels'), at(d, 'spec.template.metadata.labels')),
      );
      if (selected.length !== 1) {
        problem(`PDB ${nameOf(pdb)} selects ${selected.length} Deployments`);
        continue;
      }
      const pods = minimum[String(nameOf(selected[0]))];
      const spec = objAt(pdb, 'spec');
      if (pods === undefined) problem(`Deployment ${nameOf(selected[0])}: no replicas and no autoscaler`);
      else if (typeof spec.minAvailable === 'number' && spec.minAvailable >= pods)
        problem(`PDB ${nameOf(pdb)}: minAvailable ${spec.minAvailable} with ${pods} pods blocks every drain`);
      else if (typeof spec.maxUnavailable === 'number' && spec.maxUnavailable < 1)
        problem(`PDB ${nameOf(pdb)}: maxUnavailable ${spec.maxUnavailable} blocks every drain`);
      else if (typeof spec.minAvailable !== 'number' && typeof spec.maxUnavailable !== 'number')
        problem(`PDB ${nameOf(pdb)}: neither a numeric minAvailable nor maxUnavailable`);
    }
  });
}

/** The queues each service's workers consume (libs/queue/src/registry.ts), which its HPA scales on. */
const WORKER_QUEUES: Record<string, string[]> = {
  webhooks: ['events', 'webhook-deliveries'],
  policy: ['policy-activations', 'policy-summaries'],
  determinations: ['determination-ingest'],
  payments: ['payout-originations', 'payout-attempts'],
};

/** What each prod HPA scales on: `cpu` and `queue:<name>`. */
function hpaSignals(objs: Obj[]): Record<string, string[]> {
  return Object.fromEntries(
    ofKind(objs, 'HorizontalPodAutoscaler').map((h) => [
      String(at(h, 'spec.scaleTargetRef.name')),
      listAt(h, 'spec.metrics').map((m) =>
        m.type === 'Resource'
          ? String(at(m, 'resource.name'))
          : `queue:${String(at(m, 'external.metric.selector.matchLabels.queue'))} (${String(at(m, 'external.metric.name'))})`,
      ),
    ]),
  );
}

describe('autoscaling (prod)', () => {
  const objs = rendered.prod;

  test('one HPA per service, minReplicas ≥ 2, maxReplicas above it; no Deployment sets replicas', () => {
    const hpas = ofKind(objs, 'HorizontalPodAutoscaler');
    expect(
      hpas
        .map((h) => at(h, 'spec.scaleTargetRef'))
        .sort((a, b) => String((a as Obj).name).localeCompare(String((b as Obj).name))),
    ).toEqual(
      SERVICES.map((s) => s.name)
        .sort()
        .map((name) => ({ apiVersion: 'apps/v1', kind: 'Deployment', name })),
    );
    for (const h of hpas) {
      expect(Number(at(h, 'spec.minReplicas'))).toBeGreaterThanOrEqual(2);
      expect(Number(at(h, 'spec.maxReplicas'))).toBeGreaterThan(Number(at(h, 'spec.minReplicas')));
    }
    expect(
      deployments(objs)
        .filter((d) => at(d, 'spec.replicas') !== undefined)
        .map(nameOf),
    ).toEqual([]);
  });

  test('the gateway scales on CPU; each service with workers on the depth of the queues it consumes, and CPU', () => {
    const metric = 'parametric_queue_jobs_waiting';
    expect(hpaSignals(objs)).toEqual({
      gateway: ['cpu'],
      ...Object.fromEntries(
        Object.entries(WORKER_QUEUES).map(([svc, queues]) => [
          svc,
          [...queues.map((q) => `queue:${q} (${metric})`), 'cpu'],
        ]),
      ),
    });
  });

  test.each(ENVIRONMENTS)(
    '%s: every PodDisruptionBudget lets a drain evict a pod at the smallest size',
    (env) => {
      expect(pdbProblems(rendered[env])).toEqual([]);
    },
  );

  test('the PDB check fails on a minAvailable equal to the HPA minimum, and on a missing autoscaler', () => {
    const high = structuredClone(objs);
    objAt(named(high, 'PodDisruptionBudget', 'policy'), 'spec').minAvailable = 2;
    expect(pdbProblems(high)).toEqual(['PDB policy: minAvailable 2 with 2 pods blocks every drain']);
    const noHpa = structuredClone(objs).filter(
      (o) => !(o.kind === 'HorizontalPodAutoscaler' && nameOf(o) === 'webhooks'),
    );
    expect(pdbProblems(noHpa)).toEqual(['Deployment webhooks: no replicas and no autoscaler']);
  });

  test('the optional KEDA component replaces the workers’ HPAs by ScaledObjects on the same queues', () => {
    const keda = renderWith(
      'resources: [../../k8s/overlays/prod]\ncomponents: [../../k8s/components/keda]\n',
    );
    expect(ofKind(keda, 'HorizontalPodAutoscaler').map(nameOf)).toEqual(['gateway']);
    const scaled = Object.fromEntries(
      ofKind(keda, 'ScaledObject').map((s) => [
        String(at(s, 'spec.scaleTargetRef.name')),
        {
          min: at(s, 'spec.minReplicaCount'),
          triggers: listAt(s, 'spec.triggers').map((t) =>
            t.type === 'cpu' ? 'cpu' : String(/queue="([^"]+)"/.exec(String(at(t, 'metadata.query')))?.[1]),
          ),
        },
      ]),
    );
    expect(scaled).toEqual(
      Object.fromEntries(
        Object.entries(WORKER_QUEUES).map(([svc, queues]) => [svc, { min: 2, triggers: [...queues, 'cpu'] }]),
      ),
    );
    for (const s of ofKind(keda, 'ScaledObject'))
      for (const t of listAt(s, 'spec.triggers').filter((t) => t.type === 'prometheus'))
        expect(String(at(t, 'metadata.query'))).toContain('namespace="parametric-prod"');
    expect(pdbProblems(keda)).toEqual([]);
  });
});
