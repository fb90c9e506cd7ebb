/**
 * The Services route to the gateway pods: their selectors match the pod template's labels and
 * their target ports exist on the container. The ops port stays internal.
 */
import {
  at,
  findResource,
  isObj,
  listAt,
  type Obj,
  objAt,
  readListedResources,
  readRepoFile,
} from './support';

const deployment = findResource('Deployment', 'gateway');
const podLabels = objAt(deployment, 'spec.template.metadata.labels');
const containerPorts = listAt(deployment, 'spec.template.spec.containers').flatMap((c) =>
  Array.isArray(c.ports) ? c.ports.filter(isObj) : [],
);
const partner = findResource('Service', 'gateway');
const ops = findResource('Service', 'gateway-ops');

/** The container port a Service port's targetPort reaches (by name or number), if any. */
function targetContainerPort(servicePort: Obj): Obj | undefined {
  const target = servicePort.targetPort ?? servicePort.port;
  return containerPorts.find((p) =>
    typeof target === 'string' ? p.name === target : p.containerPort === target,
  );
}

function selects(selector: Obj, labels: Obj): boolean {
  return Object.keys(selector).length > 0 && Object.entries(selector).every(([k, v]) => labels[k] === v);
}

describe('gateway Services', () => {
  test.each([
    ['gateway', partner],
    ['gateway-ops', ops],
  ])('%s selects the gateway pods', (_name, service) => {
    expect(selects(objAt(service, 'spec.selector'), podLabels)).toBe(true);
  });

  test.each([
    ['gateway', partner],
    ['gateway-ops', ops],
  ])('%s targets ports that exist on the container', (_name, service) => {
    for (const port of listAt(service, 'spec.ports')) {
      expect([port.name, targetContainerPort(port)]).toEqual([port.name, expect.anything()]);
    }
  });

  test('the Deployment selector matches its own pod template', () => {
    expect(selects(objAt(deployment, 'spec.selector.matchLabels'), podLabels)).toBe(true);
  });

  test('the partner Service is ClusterIP on 3000 and reaches the http port only', () => {
    expect(at(partner, 'spec.type') ?? 'ClusterIP').toBe('ClusterIP');
    const ports = listAt(partner, 'spec.ports');
    expect(ports.map((p) => p.port)).toEqual([3000]);
    expect(ports.map((p) => targetContainerPort(p)?.containerPort)).toEqual([3000]);
  });

  test('the ops Service is ClusterIP on 3001 and reaches the ops port only', () => {
    expect(at(ops, 'spec.type') ?? 'ClusterIP').toBe('ClusterIP');
    const ports = listAt(ops, 'spec.ports');
    expect(ports.map((p) => p.port)).toEqual([3001]);
    expect(ports.map((p) => targetContainerPort(p)?.name)).toEqual(['ops']);
    expect(at(ops, 'spec.externalIPs') ?? []).toEqual([]);
  });

  test('the ops Service file warns that it must never be exposed through an ingress', () => {
    const text = readRepoFile('k8s/base/gateway-ops-service.yaml');
    const comments = text
      .split('\n')
      .filter((line) => line.trimStart().startsWith('#'))
      .join(' ');
    expect(comments).toMatch(/never be exposed/i);
    expect(comments).toMatch(/ingress/i);
  });

  test('nothing in the base exposes the ops port: no Ingress/Gateway route to it, no public Service type', () => {
    for (const { file, obj } of readListedResources()) {
      const text = JSON.stringify(obj);
      if (obj.kind === 'Service') {
        const ports = listAt(obj, 'spec.ports');
        const reachesOps = ports.some((p) => targetContainerPort(p)?.name === 'ops');
        const type = at(obj, 'spec.type') ?? 'ClusterIP';
        expect([file, reachesOps && type !== 'ClusterIP']).toEqual([file, false]);
      } else if (['Ingress', 'HTTPRoute', 'GRPCRoute', 'TCPRoute'].includes(String(obj.kind))) {
        expect([file, /gateway-ops|"?3001"?/.test(text)]).toEqual([file, false]);
      }
    }
  });

  test('a PodDisruptionBudget keeps a gateway pod serving yet still lets a node drain', () => {
    const pdbs = readListedResources().filter(({ obj }) => obj.kind === 'PodDisruptionBudget');
    for (const { obj } of pdbs) {
      if (!selects(objAt(obj, 'spec.selector.matchLabels'), podLabels)) continue;
      const replicas = Number(at(deployment, 'spec.replicas'));
      const minAvailable = at(obj, 'spec.minAvailable');
      if (typeof minAvailable === 'number') {
        expect(minAvailable).toBeGreaterThanOrEqual(1);
        expect(minAvailable).toBeLessThan(replicas); // otherwise no node could ever be drained
      }
    }
    expect(pdbs.some(({ obj }) => selects(objAt(obj, 'spec.selector.matchLabels'), podLabels))).toBe(true);
  });
});
