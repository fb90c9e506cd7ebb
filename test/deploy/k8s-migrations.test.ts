/**
 * The index migrations as every overlay renders them: one Job per deployed service running that
 * service's `migrate` command in the image its Deployment runs, against the Deployment's
 * database, with nothing but the MongoDB connection string, never counted by a Service, PDB or
 * Deployment selector, and allowed to reach MongoDB where the NetworkPolicies isolate the pods.
 */
import { ENVIRONMENTS, named, ofKind, overlayDir, render } from './kustomize';
import { egressOf } from './network-policy';
import { SERVICES } from './services';
import { at, listAt, nameOf, type Obj, objAt, problemsOf, repoFileExists, selects } from './support';

const rendered = Object.fromEntries(ENVIRONMENTS.map((env) => [env, render(overlayDir(env))]));

const containerOf = (workload: Obj) => listAt(workload, 'spec.template.spec.containers')[0] as Obj;
const envOf = (container: Obj, name: string) => listAt(container, 'env').find((e) => e.name === name);

function migrationProblems(objs: readonly Obj[], service: string, isolated: boolean): string[] {
  return problemsOf((problem) => {
    const job = named(objs, 'Job', `${service}-migrate`);
    const deployment = named(objs, 'Deployment', service);
    const container = containerOf(job);
    if (container.image !== containerOf(deployment).image)
      problem(`runs ${String(container.image)}, the Deployment ${String(containerOf(deployment).image)}`);
    const command = JSON.stringify(container.command);
    if (command !== JSON.stringify(['node', `services/${service}/src/migrate.js`]))
      problem(`command ${command}`);
    if (!repoFileExists(`services/${service}/src/migrate.ts`))
      problem(`services/${service}/src/migrate.ts is missing`);
    const mongoUrl = objAt(envOf(container, 'MONGO_URL') ?? {}, 'valueFrom.secretKeyRef');
    if (mongoUrl.name !== 'platform-secrets' || mongoUrl.key !== 'MONGO_URL')
      problem(`MONGO_URL from ${JSON.stringify(mongoUrl)}`);
    const database = envOf(containerOf(deployment), 'MONGO_DB')?.value;
    if (envOf(container, 'MONGO_DB')?.value !== database)
      problem(`MONGO_DB is not the Deployment's ${String(database)}`);
    const others = listAt(container, 'env')
      .map((e) => String(e.name))
      .filter((name) => !['MONGO_URL', 'MONGO_DB', 'LOG_LEVEL'].includes(name));
    if (others.length > 0 || container.envFrom !== undefined)
      problem(`gets more than MongoDB: ${JSON.stringify(others)} ${JSON.stringify(container.envFrom ?? [])}`);
    if (at(job, 'spec.template.spec.restartPolicy') !== 'Never') problem('restartPolicy is not Never');
    if (at(job, 'spec.template.spec.automountServiceAccountToken') !== false)
      problem('mounts a service account token');
    const security = objAt(container, 'securityContext');
    if (security.readOnlyRootFilesystem !== true || security.allowPrivilegeEscalation !== false)
      problem('not read-only / may escalate');
    const labels = at(job, 'spec.template.metadata.labels');
    for (const selecting of [...ofKind(objs, 'Service'), ...ofKind(objs, 'PodDisruptionBudget')]) {
      const selector = at(selecting, 'spec.selector.matchLabels') ?? at(selecting, 'spec.selector');
      if (selects(selector, labels))
        problem(`its pods are selected by ${String(selecting.kind)} ${nameOf(selecting)}`);
    }
    for (const other of ofKind(objs, 'Deployment'))
      if (selects(at(other, 'spec.selector.matchLabels'), labels))
        problem(`Deployment ${nameOf(other)} selects its pods`);
    if (isolated && !egressOf(objs, job).some((allowance) => allowance.peer.endsWith('→ 27017/TCP')))
      problem('no NetworkPolicy lets it reach MongoDB');
  });
}

describe.each(ENVIRONMENTS)('k8s/overlays/%s: index migrations', (env) => {
  const objs = rendered[env] as Obj[];
  const isolated = ofKind(objs, 'NetworkPolicy').length > 0;

  test.each(SERVICES.map((s) => s.name))(
    '%s-migrate runs the service’s migrate command in its image, on its database, with only MongoDB',
    (name) => {
      expect(migrationProblems(objs, name, isolated)).toEqual([]);
    },
  );

  test('there is no other Job', () => {
    expect(ofKind(objs, 'Job').map(nameOf).sort()).toEqual(SERVICES.map((s) => `${s.name}-migrate`).sort());
  });
});

describe('the migration checks fail on a broken copy', () => {
  const broken = (change: (objs: Obj[]) => void) => {
    const objs = structuredClone(rendered.prod as Obj[]);
    change(objs);
    return migrationProblems(objs, 'policy', true);
  };
  test.each([
    [
      'an older image',
      (objs: Obj[]) =>
        (containerOf(named(objs, 'Job', 'policy-migrate')).image =
          'registry.example.com/parametric/policy:0.0.9'),
    ],
    [
      'another database',
      (objs: Obj[]) =>
        ((envOf(containerOf(named(objs, 'Job', 'policy-migrate')), 'MONGO_DB') as Obj).value = 'gateway'),
    ],
    [
      'the service’s own label (its Service would route to the Job)',
      (objs: Obj[]) =>
        ((at(named(objs, 'Job', 'policy-migrate'), 'spec.template.metadata.labels') as Obj)[
          'app.kubernetes.io/name'
        ] = 'policy'),
    ],
    [
      'the platform secrets wholesale',
      (objs: Obj[]) =>
        (containerOf(named(objs, 'Job', 'policy-migrate')).envFrom = [
          { secretRef: { name: 'platform-secrets' } },
        ]),
    ],
    [
      'no MongoDB egress',
      (objs: Obj[]) =>
        objs.splice(
          objs.findIndex((o) => nameOf(o) === 'datastores-egress'),
          1,
        ),
    ],
  ])('%s', (_name, change) => {
    expect(broken(change)).not.toEqual([]);
  });
});
