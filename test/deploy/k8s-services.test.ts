/**
 * The Services and PodDisruptionBudgets of every deployed service: each Service routes to the
 * pods of one Deployment, on ports that exist on its container; each service has its own
 * ClusterIP Service on port 3000; what must stay internal (the gateway's ops port, the whole
 * webhooks service, payments' internal API) is never exposed, and what may be exposed is on a
 * Service of its own (payments' callback listener, for Daraja); a PDB keeps a pod of each
 * service up yet lets nodes drain.
 *
 * Each check returns the problems it finds; the last block runs them on copies of the
 * manifests broken in memory, to show that each can fail.
 */
import { SERVICES, service } from './services';
import {
  at,
  deploymentFileServices,
  isObj,
  listAt,
  nameOf,
  type Obj,
  objAt,
  problemsOf,
  readListedResources,
  readRepoFile,
  resourceIn,
  selects,
  yamlComments,
} from './support';

interface Listed {
  file: string;
  obj: Obj;
  /** The file's text, for its comments. */
  text: string;
}

const listed: Listed[] = readListedResources().map(({ file, obj }) => ({
  file,
  obj,
  text: readRepoFile(`k8s/base/${file}`),
}));
const deployed = deploymentFileServices();

const objects = (l: Listed[]) => l.map((r) => r.obj);
const ofKind = (l: Listed[], kind: string) => l.filter((r) => r.obj.kind === kind);

function deploymentOf(l: Listed[], name: string): Obj {
  const deployment = resourceIn(objects(l), 'Deployment', name);
  if (!deployment) throw new Error(`no Deployment ${name}`);
  return deployment;
}

const podLabels = (deployment: Obj) => objAt(deployment, 'spec.template.metadata.labels');

/** Names of the Deployments whose pods a selector picks. */
function selected(l: Listed[], selector: unknown): string[] {
  return ofKind(l, 'Deployment')
    .filter((d) => selects(selector, podLabels(d.obj)))
    .map((d) => String(nameOf(d.obj)));
}

/** The container port a Service port's targetPort reaches (by name or number), if any. */
function targetContainerPort(deployment: Obj, servicePort: Obj): Obj | undefined {
  const target = servicePort.targetPort ?? servicePort.port;
  return listAt(deployment, 'spec.template.spec.containers')
    .flatMap((c) => (Array.isArray(c.ports) ? c.ports.filter(isObj) : []))
    .find((p) => (typeof target === 'string' ? p.name === target : p.containerPort === target));
}

/** The Service's ports that reach a container port its service keeps internal. */
function internalPorts(l: Listed[], svc: Obj): string[] {
  return selected(l, at(svc, 'spec.selector')).flatMap((name) => {
    const deployment = deploymentOf(l, name);
    return listAt(svc, 'spec.ports')
      .map((port) => String(targetContainerPort(deployment, port)?.name))
      .filter((portName) => !service(name).publicPorts.includes(portName));
  });
}

type PlatformCheck = (l: Listed[]) => string[];
type Check = (l: Listed[], name: string) => string[];

const routing: PlatformCheck = (l) =>
  problemsOf((problem) => {
    for (const { obj: svc } of ofKind(l, 'Service')) {
      const targets = selected(l, at(svc, 'spec.selector'));
      if (targets.length !== 1) {
        problem(`${nameOf(svc)} selects the pods of ${targets.length} Deployments`);
        continue;
      }
      const deployment = deploymentOf(l, targets[0] as string);
      for (const port of listAt(svc, 'spec.ports')) {
        if (!targetContainerPort(deployment, port))
          problem(`${nameOf(svc)} port ${String(port.name)} reaches no container port`);
      }
    }
  });

const ownService: Check = (l, name) =>
  problemsOf((problem) => {
    const svc = resourceIn(objects(l), 'Service', name);
    if (!svc) return problem(`no Service ${name}`);
    if ((at(svc, 'spec.type') ?? 'ClusterIP') !== 'ClusterIP') problem(`Service ${name} is not ClusterIP`);
    if (JSON.stringify(selected(l, at(svc, 'spec.selector'))) !== JSON.stringify([name]))
      problem(`Service ${name} does not select the ${name} pods only`);
    const ports = listAt(svc, 'spec.ports').map((p) => ({
      port: p.port,
      target: targetContainerPort(deploymentOf(l, name), p)?.name,
    }));
    if (JSON.stringify(ports) !== JSON.stringify([{ port: 3000, target: 'http' }]))
      problem(`Service ${name} ports ${JSON.stringify(ports)}, not 3000 to http only`);
  });

const ownSelector: Check = (l, name) =>
  problemsOf((problem) => {
    const deployment = deploymentOf(l, name);
    if (!selects(at(deployment, 'spec.selector.matchLabels'), podLabels(deployment)))
      problem(`Deployment ${name}'s selector does not match its pod template`);
    if (JSON.stringify(selected(l, at(deployment, 'spec.selector.matchLabels'))) !== JSON.stringify([name]))
      problem(`Deployment ${name}'s selector also matches other Deployments' pods`);
  });

const disruptionBudget: Check = (l, name) =>
  problemsOf((problem) => {
    const deployment = deploymentOf(l, name);
    const pdbs = ofKind(l, 'PodDisruptionBudget').filter((r) =>
      selects(at(r.obj, 'spec.selector.matchLabels'), podLabels(deployment)),
    );
    if (pdbs.length !== 1) return problem(`${pdbs.length} PodDisruptionBudgets select the ${name} pods`);
    const replicas = Number(at(deployment, 'spec.replicas'));
    const minAvailable = at(pdbs[0]?.obj, 'spec.minAvailable');
    // At least one pod up, yet fewer than all: otherwise no node could ever be drained.
    if (typeof minAvailable !== 'number' || minAvailable < 1 || minAvailable >= replicas)
      problem(`minAvailable ${String(minAvailable)} with ${replicas} replicas`);
  });

/** Services reaching an internal port: ClusterIP, no external IPs, and a warning in the file. */
const internalServices: PlatformCheck = (l) =>
  problemsOf((problem) => {
    for (const { file, obj: svc, text } of ofKind(l, 'Service')) {
      if (internalPorts(l, svc).length === 0) continue;
      if ((at(svc, 'spec.type') ?? 'ClusterIP') !== 'ClusterIP') problem(`${file}: not ClusterIP`);
      if (JSON.stringify(at(svc, 'spec.externalIPs') ?? []) !== '[]') problem(`${file}: externalIPs`);
      const comments = yamlComments(text);
      if (!/never be exposed/i.test(comments) || !/ingress/i.test(comments))
        problem(`${file}: no comment saying it must never be exposed through an ingress`);
    }
  });

/** The Services (name and port, a number or a name) an Ingress or a Gateway API route sends to. */
function backendsOf(obj: Obj): { name: unknown; port: unknown }[] {
  const spec = isObj(obj.spec) ? obj.spec : {};
  const rules = Array.isArray(spec.rules) ? spec.rules.filter(isObj) : [];
  if (obj.kind === 'Ingress') {
    const paths = rules.flatMap((rule) =>
      isObj(rule.http) && Array.isArray(rule.http.paths) ? rule.http.paths.filter(isObj) : [],
    );
    return [spec.defaultBackend, ...paths.map((p) => p.backend)]
      .map((backend) => (isObj(backend) && isObj(backend.service) ? backend.service : undefined))
      .filter(isObj)
      .map((svc) => ({
        name: svc.name,
        port: isObj(svc.port) ? (svc.port.number ?? svc.port.name) : undefined,
      }));
  }
  return rules
    .flatMap((rule) => (Array.isArray(rule.backendRefs) ? rule.backendRefs.filter(isObj) : []))
    .filter((ref) => (ref.kind ?? 'Service') === 'Service')
    .map((ref) => ({ name: ref.name, port: ref.port }));
}

/**
 * No Ingress or Gateway API route of the base names an internal Service or an internal-only
 * port; every backend it has is a Service port that reaches a public container port only.
 */
const noRouteToInternal: PlatformCheck = (l) =>
  problemsOf((problem) => {
    const services = ofKind(l, 'Service').map((r) => r.obj);
    const internalNames = services
      .filter((s) => internalPorts(l, s).length > 0)
      .map((s) => String(nameOf(s)));
    const publicNumbers = services.flatMap((s) =>
      internalPorts(l, s).length > 0 ? [] : listAt(s, 'spec.ports').map((p) => p.port),
    );
    const internalNumbers = services
      .filter((s) => internalPorts(l, s).length > 0)
      .flatMap((s) => listAt(s, 'spec.ports').map((p) => p.port))
      .filter((port) => !publicNumbers.includes(port));
    for (const { file, obj } of l) {
      if (!['Ingress', 'HTTPRoute', 'GRPCRoute', 'TCPRoute'].includes(String(obj.kind))) continue;
      const text = JSON.stringify(obj);
      for (const name of internalNames) if (text.includes(`"${name}"`)) problem(`${file} routes to ${name}`);
      for (const port of internalNumbers)
        if (new RegExp(`[:\\[,]"?${String(port)}"?[,}\\]]`).test(text))
          problem(`${file} uses port ${String(port)}`);
      for (const backend of backendsOf(obj)) {
        const svc = services.find((s) => nameOf(s) === backend.name);
        const port = svc
          ? listAt(svc, 'spec.ports').find((p) => p.port === backend.port || p.name === backend.port)
          : undefined;
        if (!svc || !port) {
          problem(`${file} routes to ${String(backend.name)}:${String(backend.port)}, no Service port`);
          continue;
        }
        const selectedNames = selected(l, at(svc, 'spec.selector'));
        const reaches = selectedNames.map((name) =>
          String(targetContainerPort(deploymentOf(l, name), port)?.name),
        );
        if (
          selectedNames.length === 0 ||
          selectedNames.some((name, i) => !service(name).publicPorts.includes(reaches[i] as string))
        )
          problem(`${file} routes to ${String(backend.name)}:${String(backend.port)}, not a public port`);
      }
    }
  });

const opsService: PlatformCheck = (l) =>
  problemsOf((problem) => {
    const ops = resourceIn(objects(l), 'Service', 'gateway-ops');
    if (!ops) return problem('no Service gateway-ops');
    const ports = listAt(ops, 'spec.ports').map((p) => ({
      port: p.port,
      target: targetContainerPort(deploymentOf(l, 'gateway'), p)?.name,
    }));
    if (JSON.stringify(ports) !== JSON.stringify([{ port: 3001, target: 'ops' }]))
      problem(`gateway-ops ports ${JSON.stringify(ports)}, not 3001 to ops only`);
  });

/**
 * Payments' callback listener has a Service of its own, the one an overlay exposes to Daraja: it
 * selects the payments pods only and reaches their `callbacks` port only (never `http`, the
 * internal API), it is ClusterIP in the base (the Ingress is the overlay's), and its file says
 * that partners' API must never be exposed through it.
 */
const callbacksService: PlatformCheck = (l) =>
  problemsOf((problem) => {
    const entry = ofKind(l, 'Service').find((r) => nameOf(r.obj) === 'payments-callbacks');
    if (!entry) return problem('no Service payments-callbacks');
    const svc = entry.obj;
    if (JSON.stringify(selected(l, at(svc, 'spec.selector'))) !== JSON.stringify(['payments']))
      problem('payments-callbacks does not select the payments pods only');
    if ((at(svc, 'spec.type') ?? 'ClusterIP') !== 'ClusterIP') problem('payments-callbacks is not ClusterIP');
    if (JSON.stringify(at(svc, 'spec.externalIPs') ?? []) !== '[]')
      problem('payments-callbacks has externalIPs');
    const ports = listAt(svc, 'spec.ports').map((p) => ({
      port: p.port,
      target: targetContainerPort(deploymentOf(l, 'payments'), p)?.name,
    }));
    if (JSON.stringify(ports) !== JSON.stringify([{ port: 3001, target: 'callbacks' }]))
      problem(`payments-callbacks ports ${JSON.stringify(ports)}, not 3001 to callbacks only`);
    const comments = yamlComments(entry.text);
    if (!/partners'? API must never be exposed/i.test(comments))
      problem(`${entry.file}: no comment saying partners' API must never be exposed through it`);
  });

const SERVICE_CHECKS: [string, Check][] = [
  ['has its own ClusterIP Service <name> on 3000, reaching its http port only', ownService],
  ['its Deployment selector matches its own pod template and no other', ownSelector],
  ['a PodDisruptionBudget keeps one pod up yet still lets a node drain', disruptionBudget],
];

const PLATFORM_CHECKS: [string, PlatformCheck][] = [
  ['every Service selects the pods of one Deployment, on ports its container has', routing],
  ['Services reaching an internal port are ClusterIP and warn never to be exposed', internalServices],
  ['no Ingress or route in the base reaches an internal Service or port', noRouteToInternal],
  ['the ops Service is on 3001 and reaches the gateway’s ops port only', opsService],
  [
    'payments-callbacks reaches the payments pods’ callbacks port only, and warns about partners',
    callbacksService,
  ],
];

describe.each(deployed)('%s Service and PodDisruptionBudget', (name) => {
  test.each(SERVICE_CHECKS)('%s', (_title, check) => {
    expect(check(listed, name)).toEqual([]);
  });
});

describe('Services of the platform', () => {
  test.each(PLATFORM_CHECKS)('%s', (_title, check) => {
    expect(check(listed)).toEqual([]);
  });

  test('the internal ones are gateway-ops and the services’ own Services but the gateway’s, and only the gateway’s http port and payments’ callbacks port may be public', () => {
    const internal = ofKind(listed, 'Service')
      .filter((r) => internalPorts(listed, r.obj).length > 0)
      .map((r) => nameOf(r.obj));
    const httpInternal = SERVICES.filter((s) => !s.publicPorts.includes('http')).map((s) => s.name);
    expect(internal.sort()).toEqual(['gateway-ops', ...httpInternal].sort());
    expect(httpInternal).toEqual(
      expect.arrayContaining(['webhooks', 'policy', 'determinations', 'payments']),
    );
    expect(SERVICES.flatMap((s) => s.publicPorts.map((p) => `${s.name}:${p}`))).toEqual([
      'gateway:http',
      'payments:callbacks',
    ]);
    // What may be exposed: the gateway's partner Service and payments' callbacks Service only.
    const exposable = ofKind(listed, 'Service')
      .filter((r) => internalPorts(listed, r.obj).length === 0)
      .map((r) => nameOf(r.obj));
    expect(exposable.sort()).toEqual(['gateway', 'payments-callbacks']);
  });
});

// ---------------------------------------------------------------------------------------------
// Every check above fails on a manifest broken in memory (a copy; the files are not touched).

/** A copy of the listed resources with the resource of that kind and name altered. */
function altered(kind: string, name: string, edit: (obj: Obj, entry: Listed) => void): Listed[] {
  const copy = structuredClone(listed);
  const entry = copy.find((r) => r.obj.kind === kind && nameOf(r.obj) === name);
  if (!entry) throw new Error(`no ${kind} ${name} to alter`);
  edit(entry.obj, entry);
  return copy;
}

const withResource = (obj: Obj): Listed[] => [
  ...structuredClone(listed),
  { file: 'extra.yaml', obj, text: '' },
];

const INGRESS_TO = (service: string, port: number): Obj => ({
  apiVersion: 'networking.k8s.io/v1',
  kind: 'Ingress',
  metadata: { name: 'public' },
  spec: {
    rules: [
      {
        http: {
          paths: [
            {
              path: '/',
              pathType: 'Prefix',
              backend: { service: { name: service, port: { number: port } } },
            },
          ],
        },
      },
    ],
  },
});

describe('each check fails on a broken copy of the manifests', () => {
  const BREAKS: [string, () => string[]][] = [
    [
      'a Service selecting the pods of every Deployment',
      () =>
        routing(
          altered(
            'Service',
            'webhooks',
            (s) => ((s.spec as Obj).selector = { 'app.kubernetes.io/component': 'api' }),
          ),
        ),
    ],
    [
      'webhooks Service selecting the gateway pods',
      () =>
        ownService(
          altered(
            'Service',
            'webhooks',
            (s) => (objAt(s, 'spec.selector')['app.kubernetes.io/name'] = 'gateway'),
          ),
          'webhooks',
        ),
    ],
    [
      'webhooks Service targeting a port its container lacks',
      () =>
        routing(
          altered(
            'Service',
            'webhooks',
            (s) => (listAt(s, 'spec.ports')[0] = { port: 3000, targetPort: 'ops' }),
          ),
        ),
    ],
    [
      'no webhooks Service',
      () =>
        ownService(
          listed.filter((r) => r.file !== 'webhooks-service.yaml'),
          'webhooks',
        ),
    ],
    [
      'webhooks Service as a LoadBalancer',
      () =>
        ownService(
          altered('Service', 'webhooks', (s) => ((s.spec as Obj).type = 'LoadBalancer')),
          'webhooks',
        ),
    ],
    [
      'webhooks Service on port 80',
      () =>
        ownService(
          altered(
            'Service',
            'webhooks',
            (s) => (listAt(s, 'spec.ports')[0] = { port: 80, targetPort: 'http' }),
          ),
          'webhooks',
        ),
    ],
    [
      'webhooks selector not matching its pods',
      () =>
        ownSelector(
          altered(
            'Deployment',
            'webhooks',
            (d) => (objAt(d, 'spec.selector.matchLabels')['app.kubernetes.io/name'] = 'hooks'),
          ),
          'webhooks',
        ),
    ],
    [
      'webhooks selector matching the gateway pods too',
      () =>
        ownSelector(
          altered(
            'Deployment',
            'webhooks',
            (d) => (objAt(d, 'spec.selector').matchLabels = { 'app.kubernetes.io/component': 'api' }),
          ),
          'webhooks',
        ),
    ],
    [
      'no webhooks PDB',
      () =>
        disruptionBudget(
          listed.filter((r) => r.file !== 'webhooks-pdb.yaml'),
          'webhooks',
        ),
    ],
    [
      'webhooks PDB with minAvailable = replicas',
      () =>
        disruptionBudget(
          altered('PodDisruptionBudget', 'webhooks', (b) => ((b.spec as Obj).minAvailable = 2)),
          'webhooks',
        ),
    ],
    [
      'policy Service as a NodePort',
      () => internalServices(altered('Service', 'policy', (s) => ((s.spec as Obj).type = 'NodePort'))),
    ],
    [
      'webhooks Service as a NodePort',
      () => internalServices(altered('Service', 'webhooks', (s) => ((s.spec as Obj).type = 'NodePort'))),
    ],
    [
      'webhooks Service with an external IP',
      () =>
        internalServices(
          altered('Service', 'webhooks', (s) => ((s.spec as Obj).externalIPs = ['203.0.113.7'])),
        ),
    ],
    [
      'webhooks Service file without its warning',
      () =>
        internalServices(
          altered(
            'Service',
            'webhooks',
            (_s, entry) => (entry.text = entry.text.replace(/never be exposed/gi, '')),
          ),
        ),
    ],
    [
      'a LoadBalancer for the ops port',
      () =>
        internalServices(
          withResource({
            apiVersion: 'v1',
            kind: 'Service',
            metadata: { name: 'ops-lb' },
            spec: {
              type: 'LoadBalancer',
              selector: { 'app.kubernetes.io/name': 'gateway' },
              ports: [{ port: 3001, targetPort: 'ops' }],
            },
          }),
        ),
    ],
    [
      'an Ingress to the webhooks Service',
      () => noRouteToInternal(withResource(INGRESS_TO('webhooks', 3000))),
    ],
    ['an Ingress to gateway-ops', () => noRouteToInternal(withResource(INGRESS_TO('gateway-ops', 3001)))],
    ['an Ingress to port 3001', () => noRouteToInternal(withResource(INGRESS_TO('gateway', 3001)))],
    [
      'an Ingress to the payments Service',
      () => noRouteToInternal(withResource(INGRESS_TO('payments', 3000))),
    ],
    [
      'an Ingress to payments-callbacks on a port it lacks',
      () => noRouteToInternal(withResource(INGRESS_TO('payments-callbacks', 3000))),
    ],
    [
      'an Ingress to payments-callbacks with the partner API’s port added to it',
      () =>
        noRouteToInternal(
          withResource(INGRESS_TO('payments-callbacks', 3000)).map((r) =>
            nameOf(r.obj) === 'payments-callbacks'
              ? {
                  ...r,
                  obj: {
                    ...r.obj,
                    spec: {
                      ...(r.obj.spec as Obj),
                      ports: [
                        ...listAt(r.obj, 'spec.ports'),
                        { name: 'http', port: 3000, targetPort: 'http' },
                      ],
                    },
                  },
                }
              : r,
          ),
        ),
    ],
    [
      'an HTTPRoute to the payments Service',
      () =>
        noRouteToInternal(
          withResource({
            apiVersion: 'gateway.networking.k8s.io/v1',
            kind: 'HTTPRoute',
            metadata: { name: 'callbacks' },
            spec: { rules: [{ backendRefs: [{ name: 'payments', port: 3000 }] }] },
          }),
        ),
    ],
    [
      'payments-callbacks selecting the gateway pods',
      () =>
        callbacksService(
          altered(
            'Service',
            'payments-callbacks',
            (s) => (objAt(s, 'spec.selector')['app.kubernetes.io/name'] = 'gateway'),
          ),
        ),
    ],
    [
      'payments-callbacks reaching the internal API',
      () =>
        callbacksService(
          altered(
            'Service',
            'payments-callbacks',
            (s) => (listAt(s, 'spec.ports')[0] = { name: 'callbacks', port: 3001, targetPort: 'http' }),
          ),
        ),
    ],
    [
      'payments-callbacks with the internal API as a second port',
      () =>
        callbacksService(
          altered('Service', 'payments-callbacks', (s) =>
            listAt(s, 'spec.ports').push({ name: 'http', port: 3000, targetPort: 'http' }),
          ),
        ),
    ],
    [
      'payments-callbacks as a LoadBalancer in the base',
      () =>
        callbacksService(
          altered('Service', 'payments-callbacks', (s) => ((s.spec as Obj).type = 'LoadBalancer')),
        ),
    ],
    [
      'payments-callbacks file without its warning',
      () =>
        callbacksService(
          altered(
            'Service',
            'payments-callbacks',
            (_s, entry) => (entry.text = entry.text.replace(/must never be exposed/gi, '')),
          ),
        ),
    ],
    [
      'no payments-callbacks Service',
      () => callbacksService(listed.filter((r) => r.file !== 'payments-callbacks-service.yaml')),
    ],
    [
      'payments Service also reaching the callbacks port',
      () =>
        ownService(
          altered('Service', 'payments', (s) =>
            listAt(s, 'spec.ports').push({ name: 'callbacks', port: 3001, targetPort: 'callbacks' }),
          ),
          'payments',
        ),
    ],
    [
      'payments Service file without its warning',
      () =>
        internalServices(
          altered(
            'Service',
            'payments',
            (_s, entry) => (entry.text = entry.text.replace(/never be exposed/gi, '')),
          ),
        ),
    ],
    [
      'ops Service on the http port',
      () =>
        opsService(
          altered(
            'Service',
            'gateway-ops',
            (s) => (listAt(s, 'spec.ports')[0] = { port: 3001, targetPort: 'http' }),
          ),
        ),
    ],
  ];

  test('an Ingress to the gateway partner Service is fine (so the checks are not just failing)', () => {
    expect(noRouteToInternal(withResource(INGRESS_TO('gateway', 3000)))).toEqual([]);
  });

  test('an Ingress to payments-callbacks, by port number or name, is fine too', () => {
    expect(noRouteToInternal(withResource(INGRESS_TO('payments-callbacks', 3001)))).toEqual([]);
    const byName = INGRESS_TO('payments-callbacks', 3001);
    objAt(byName, 'spec.rules.0.http.paths.0.backend.service').port = { name: 'callbacks' };
    expect(noRouteToInternal(withResource(byName))).toEqual([]);
  });

  test.each(BREAKS)('%s', (_what, run) => {
    expect(run()).not.toEqual([]);
  });
});
