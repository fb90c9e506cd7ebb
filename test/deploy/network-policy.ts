/**
 * Reads rendered NetworkPolicies as a CNI enforces them, for the deploy tests: which peers a pod
 * admits on a port, and which destinations it may reach. Only what the platform's policies use is
 * understood (matchLabels selectors, numeric or named ports, ipBlocks); anything else throws, so
 * a policy the reading would misjudge fails the test instead of passing it.
 */
import { at, isObj, listAt, nameOf, type Obj, objAt, selects } from './support';

export interface Allowance {
  /** The NetworkPolicy that allows it. */
  policy: string;
  /** Who (ingress) or what (egress), described: `pods gateway`, `ns monitoring, pods …`, `cidr …`, `anyone`. */
  peer: string;
}

/** A matchLabels-only selector's labels; `{}` selects everything. */
function matchLabels(selector: unknown, where: string): Record<string, unknown> {
  if (selector === undefined || selector === null) return {};
  if (!isObj(selector)) throw new Error(`${where}: selector is not a mapping`);
  if (selector.matchExpressions !== undefined)
    throw new Error(`${where}: matchExpressions not understood here`);
  return isObj(selector.matchLabels) ? selector.matchLabels : {};
}

const labelText = (labels: Record<string, unknown>) =>
  Object.entries(labels)
    .map(([k, v]) => `${k}=${String(v)}`)
    .join(',');

const podLabels = (deployment: Obj) => objAt(deployment, 'spec.template.metadata.labels');

/** The policy's selector picks these pods (an empty selector picks every pod of the namespace). */
function selectsPods(policy: Obj, labels: Obj): boolean {
  const wanted = matchLabels(at(policy, 'spec.podSelector'), `NetworkPolicy ${nameOf(policy)}`);
  return Object.keys(wanted).length === 0 || selects(wanted, labels);
}

export function policyTypes(policy: Obj): string[] {
  const spec = objAt(policy, 'spec');
  if (Array.isArray(spec.policyTypes)) return spec.policyTypes.map(String);
  return ['Ingress', ...(spec.egress !== undefined ? ['Egress'] : [])];
}

/** Describes one `from`/`to` entry; pods of this namespace by the Deployments they are. */
function describePeer(peer: Obj, deployments: readonly Obj[], where: string): string {
  if (isObj(peer.ipBlock)) {
    const except = Array.isArray(peer.ipBlock.except) ? peer.ipBlock.except.map(String) : [];
    return `cidr ${String(peer.ipBlock.cidr)}${except.length ? ` except ${except.join(' ')}` : ''}`;
  }
  const pods = peer.podSelector === undefined ? undefined : matchLabels(peer.podSelector, where);
  if (peer.namespaceSelector !== undefined) {
    const ns = matchLabels(peer.namespaceSelector, where);
    const name = ns['kubernetes.io/metadata.name'];
    const others = Object.fromEntries(
      Object.entries(ns).filter(([k]) => k !== 'kubernetes.io/metadata.name'),
    );
    const nsText =
      Object.keys(ns).length === 0
        ? 'every namespace'
        : `ns ${name === undefined ? '' : String(name)}${Object.keys(others).length ? ` labelled ${labelText(others)}` : ''}`;
    return pods && Object.keys(pods).length > 0 ? `${nsText}, pods ${labelText(pods)}` : nsText;
  }
  if (!pods || Object.keys(pods).length === 0) return 'every pod of the namespace';
  const names = deployments.filter((d) => selects(pods, podLabels(d))).map((d) => String(nameOf(d)));
  return names.length > 0 ? `pods ${names.sort().join('|')}` : `no pod (${labelText(pods)})`;
}

/** A rule's `ports` let this container port through (no `ports`: every port). */
function portAllowed(rule: Obj, port: number, portName: string | undefined, protocol: string): boolean {
  if (!Array.isArray(rule.ports) || rule.ports.length === 0) return true;
  return rule.ports.filter(isObj).some((p) => {
    if ((p.protocol ?? 'TCP') !== protocol) return false;
    if (p.port === undefined) return true;
    if (typeof p.port === 'string') return p.port === portName;
    if (typeof p.port !== 'number') return false;
    const end = typeof p.endPort === 'number' ? p.endPort : p.port;
    return port >= p.port && port <= end;
  });
}

/** The policies that select this Deployment's pods for that direction (and so isolate them). */
function isolating(objs: readonly Obj[], deployment: Obj, type: 'Ingress' | 'Egress'): Obj[] {
  return objs
    .filter((o) => o.kind === 'NetworkPolicy')
    .filter((p) => policyTypes(p).includes(type) && selectsPods(p, podLabels(deployment)));
}

const rulesOf = (policy: Obj, field: 'ingress' | 'egress'): Obj[] =>
  Array.isArray(objAt(policy, 'spec')[field]) ? listAt(policy, `spec.${field}`) : [];

/**
 * Who may open a connection to a pod of this Deployment on this container port: `anyone` when no
 * policy isolates the pods for ingress, otherwise every peer of every rule that lets the port in.
 */
export function admittedTo(
  objs: readonly Obj[],
  deployment: Obj,
  port: number,
  protocol = 'TCP',
): Allowance[] {
  const deployments = objs.filter((o) => o.kind === 'Deployment');
  const container = listAt(deployment, 'spec.template.spec.containers').flatMap((c) =>
    Array.isArray(c.ports) ? c.ports.filter(isObj) : [],
  );
  const portName = container.find((p) => p.containerPort === port)?.name;
  const policies = isolating(objs, deployment, 'Ingress');
  if (policies.length === 0) return [{ policy: '(none isolates these pods)', peer: 'anyone' }];
  return policies.flatMap((policy) => {
    return rulesOf(policy, 'ingress')
      .filter((rule) =>
        portAllowed(rule, port, portName === undefined ? undefined : String(portName), protocol),
      )
      .flatMap((rule) =>
        (Array.isArray(rule.from) && rule.from.length > 0 ? rule.from.filter(isObj) : [undefined]).map(
          (peer) => ({
            policy: String(nameOf(policy)),
            peer: peer ? describePeer(peer, deployments, `NetworkPolicy ${nameOf(policy)}`) : 'anyone',
          }),
        ),
      );
  });
}

/** Where a pod of this Deployment may connect, as `<peer> → <port>/<protocol>`. */
export function egressOf(objs: readonly Obj[], deployment: Obj): Allowance[] {
  const deployments = objs.filter((o) => o.kind === 'Deployment');
  const policies = isolating(objs, deployment, 'Egress');
  if (policies.length === 0) return [{ policy: '(none isolates these pods)', peer: 'anywhere → every port' }];
  return policies.flatMap((policy) => {
    return rulesOf(policy, 'egress').flatMap((rule) => {
      const peers =
        Array.isArray(rule.to) && rule.to.length > 0
          ? rule.to
              .filter(isObj)
              .map((peer) => describePeer(peer, deployments, `NetworkPolicy ${nameOf(policy)}`))
          : ['anywhere'];
      const ports =
        Array.isArray(rule.ports) && rule.ports.length > 0
          ? rule.ports
              .filter(isObj)
              .map((p) => `${String(p.port ?? 'every port')}/${String(p.protocol ?? 'TCP')}`)
          : ['every port'];
      return peers.flatMap((peer) =>
        ports.map((port) => ({ policy: String(nameOf(policy)), peer: `${peer} → ${port}` })),
      );
    });
  });
}

export interface Row {
  port: string;
  podPort: string;
  allowances: Allowance[];
}

/** Every port of every Service, the container port it reaches, and who is admitted there. */
export function ingressRows(objs: readonly Obj[]): Row[] {
  const deployments = objs.filter((o) => o.kind === 'Deployment');
  return objs
    .filter((o) => o.kind === 'Service')
    .flatMap((svc) =>
      listAt(svc, 'spec.ports').map((p) => {
        const selected = deployments.filter((d) =>
          selects(at(svc, 'spec.selector'), at(d, 'spec.template.metadata.labels')),
        );
        if (selected.length !== 1)
          throw new Error(`Service ${nameOf(svc)} selects ${selected.length} Deployments`);
        const deployment = selected[0] as Obj;
        const containerPort = listAt(deployment, 'spec.template.spec.containers')
          .flatMap((c) => (Array.isArray(c.ports) ? c.ports.filter(isObj) : []))
          .find((cp) => cp.name === p.targetPort || cp.containerPort === p.targetPort);
        if (!containerPort)
          throw new Error(`Service ${nameOf(svc)} port ${String(p.port)}: no container port`);
        const number = Number(containerPort.containerPort);
        return {
          port: `${nameOf(svc)}:${String(p.port)}`,
          podPort: `${nameOf(deployment)} ${number} (${String(containerPort.name)})`,
          allowances: admittedTo(objs, deployment, number, String(p.protocol ?? 'TCP')),
        };
      }),
    );
}

export function egressRows(objs: readonly Obj[]): { service: string; allowances: Allowance[] }[] {
  return objs
    .filter((o) => o.kind === 'Deployment')
    .map((d) => ({ service: String(nameOf(d)), allowances: egressOf(objs, d) }));
}

function table(header: string[], rows: string[][]): string {
  return [
    `| ${header.join(' | ')} |`,
    `| ${header.map(() => '---').join(' | ')} |`,
    ...rows.map((r) => `| ${r.join(' | ')} |`),
  ].join('\n');
}

export function ingressTable(objs: readonly Obj[]): string {
  return table(
    ['Service port', 'reaches', 'admitted from', 'by NetworkPolicy'],
    ingressRows(objs).flatMap((row) =>
      row.allowances.map((a) => [`\`${row.port}\``, row.podPort, a.peer, `\`${a.policy}\``]),
    ),
  );
}

export function egressTable(objs: readonly Obj[]): string {
  return table(
    ['pods of', 'may connect to', 'by NetworkPolicy'],
    egressRows(objs).flatMap((row) => row.allowances.map((a) => [row.service, a.peer, `\`${a.policy}\``])),
  );
}
