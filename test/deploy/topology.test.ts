import {
  type Listener,
  type ServiceSpec,
  STAND_INS,
  type StandInName,
  storeEnv,
  SERVICES as TOPOLOGY_SERVICES,
} from '@parametric/topology';
import { OPTIONAL_SECRETS, SERVICES } from './services';
import {
  at,
  configData,
  deploymentFileServices,
  isObj,
  listAt,
  type Obj,
  objAt,
  parseYaml,
  problemsOf,
  readK8sFile,
  readPlatformConfig,
  readRepoFile,
} from './support';

/**
 * docker-compose.yml and k8s/ wire the services as tools/topology says (the description
 * `npm start` and the fault suite run them from): the same services, each listening on its
 * topology's container ports, given the URL of each service it calls on that service's port, and
 * no URL the topology does not know. The other deploy checks read their entries from the topology
 * too (test/deploy/services.ts); these hold the wiring itself.
 */

const compose = parseYaml(readRepoFile('docker-compose.yml'), 'docker-compose.yml') as Obj;

function composeEnv(name: string): Record<string, string> {
  const env = at(compose, `services.${name}.environment`);
  if (Array.isArray(env))
    return Object.fromEntries(env.map((line) => String(line).split(/=(.*)/s, 2) as [string, string]));
  return Object.fromEntries(Object.entries(isObj(env) ? env : {}).map(([k, v]) => [k, String(v)]));
}

const processes = new Map<string, { ports: Record<string, Listener> }>(
  [...TOPOLOGY_SERVICES, ...STAND_INS].map((p) => [p.name, p]),
);

/** `http://<to>:<its container port>`: a call as a container network resolves it. */
function containerUrl(to: string, portName: string): string {
  return `http://${to}:${processes.get(to)?.ports[portName]?.containerPort}`;
}

/** Variables that are URLs a topology entry accounts for: its calls, its own URLs, its stores'. */
function knownUrlVariables(spec: ServiceSpec): string[] {
  return [...Object.keys(spec.calls), ...Object.keys(spec.ownUrls), ...Object.keys(storeEnv(spec.name))];
}

describe('the deploy checks read their services from tools/topology', () => {
  test('every topology service has a deploy entry, a Deployment and a compose service', () => {
    expect(SERVICES.map((s) => s.name)).toEqual(TOPOLOGY_SERVICES.map((s) => s.name));
    expect(deploymentFileServices()).toEqual(TOPOLOGY_SERVICES.map((s) => s.name).sort());
    // The stand-ins share the one tools image (its build target `tools`), built once with them.
    const built = Object.entries(objAt(compose, 'services'))
      .filter(([, svc]) => isObj(svc) && isObj(svc.build) && svc.build.target !== 'tools')
      .map(([name]) => name);
    expect(built.sort()).toEqual(TOPOLOGY_SERVICES.map((s) => s.name).sort());
  });

  test.each(SERVICES.map((s) => [s.name, s] as const))(
    '%s: its own Secrets hold exactly the topology’s own secrets',
    (_name, entry) => {
      const own = [
        ...entry.topology.ownSecrets,
        ...Object.entries(storeEnv(entry.topology.name))
          .filter(([, how]) => how === 'own-secret')
          .map(([variable]) => variable),
      ];
      expect(Object.values(entry.ownSecrets).flat().sort()).toEqual(own.sort());
      expect(Object.values(entry.optionalSecrets).flat().sort()).toEqual(
        [...entry.topology.optionalSecrets].sort(),
      );
    },
  );

  test.each(OPTIONAL_SECRETS.map((o) => [o.key, o.service, o] as const))(
    '%s (optional, %s): docs/deploy.md lists it unset by default, and its Secret’s example shows it',
    (key, _service, { secret }) => {
      const row = readRepoFile('docs/deploy.md')
        .split('\n')
        .find((line) => line.startsWith(`| \`${key}\``));
      expect(row?.split('|').map((cell) => cell.trim())[2]).toBe('unset');
      expect(readRepoFile(`k8s/base/${secret}.example.yaml`)).toMatch(new RegExp(`^\\s*#\\s*${key}:`, 'm'));
    },
  );
});

/** What compose gives `spec` against what the topology says. */
function composeProblems(spec: ServiceSpec, env: Record<string, string>): string[] {
  return problemsOf((problem) => {
    for (const [portName, listener] of Object.entries(spec.ports))
      if (env[listener.portEnv] !== String(listener.containerPort))
        problem(
          `${listener.portEnv} is ${env[listener.portEnv]}, not ${portName}'s ${listener.containerPort}`,
        );
    for (const [variable, call] of Object.entries(spec.calls)) {
      const expected = containerUrl(call.to, call.port);
      if (env[variable] !== expected) problem(`${variable} is ${env[variable]}, not ${expected}`);
    }
    for (const [variable, portName] of Object.entries(spec.ownUrls)) {
      const expected = containerUrl(spec.name, portName);
      if (env[variable] !== expected) problem(`${variable} is ${env[variable]}, not ${expected}`);
    }
    for (const [variable, value] of Object.entries(env))
      if (/^https?:\/\//.test(value) && !knownUrlVariables(spec).includes(variable))
        problem(`${variable} (${value}) is a URL tools/topology does not give ${spec.name}`);
  });
}

describe('docker-compose.yml wires the services as tools/topology does', () => {
  test.each(TOPOLOGY_SERVICES.map((s) => [s.name, s] as const))('%s', (name, spec) => {
    expect(composeProblems(spec, composeEnv(name))).toEqual([]);
  });

  test.each(STAND_INS.filter((s) => s.ports.http.containerPort !== undefined).map((s) => [s.name] as const))(
    'the %s stand-in listens on its topology port',
    (name: StandInName) => {
      const command = at(compose, `services.${name}.command`);
      const args = Array.isArray(command) ? command.map(String) : [];
      const port = STAND_INS.find((s) => s.name === name)?.ports.http.containerPort;
      expect(args[args.indexOf('--port') + 1]).toBe(String(port));
    },
  );

  test('a drift is caught: a URL on another port, a URL the topology does not know, a port moved', () => {
    const gateway = TOPOLOGY_SERVICES.find((s) => s.name === 'gateway') as ServiceSpec;
    const env = composeEnv('gateway');
    expect(composeProblems(gateway, { ...env, POLICY_URL: 'http://policy:3001' })).toEqual([
      'POLICY_URL is http://policy:3001, not http://policy:3000',
    ]);
    expect(composeProblems(gateway, { ...env, AUDIT_URL: 'http://audit:3000' })).toEqual([
      'AUDIT_URL (http://audit:3000) is a URL tools/topology does not give gateway',
    ]);
    expect(composeProblems(gateway, { ...env, OPS_PORT: '3002' })).toEqual([
      "OPS_PORT is 3002, not ops's 3001",
    ]);
  });
});

/** What the Kubernetes base gives the services against what the topology says. */
function k8sProblems(
  config: Record<string, unknown>,
  servicePort: (name: string, portName: string) => unknown,
): string[] {
  // One ConfigMap for every service: a URL two services call is one problem, not two.
  const problems = problemsOf((problem) => {
    for (const spec of TOPOLOGY_SERVICES) {
      const deployment = readK8sFile(`${spec.name}-deployment.yaml`);
      const container = listAt(deployment, 'spec.template.spec.containers').find((c) => c.name === spec.name);
      const ports = listAt(container, 'ports');
      for (const [portName, listener] of Object.entries(spec.ports)) {
        if (String(config[listener.portEnv]) !== String(listener.containerPort))
          problem(
            `${listener.portEnv} is ${String(config[listener.portEnv])}, not ${listener.containerPort}`,
          );
        if (ports.find((p) => p.name === portName)?.containerPort !== listener.containerPort)
          problem(`${spec.name}'s container has no ${portName} port ${listener.containerPort}`);
      }
      // Calls to another service reach its Service on the port for that listener; third
      // parties are the real ones in a cluster (their URLs are checked in k8s-deployments).
      for (const [variable, call] of Object.entries(spec.calls)) {
        if (!TOPOLOGY_SERVICES.some((s) => s.name === call.to)) continue;
        const expected = `http://${call.to}:${String(servicePort(call.to, call.port))}`;
        if (config[variable] !== expected)
          problem(`${variable} is ${String(config[variable])}, not ${expected}`);
      }
    }
    const known = TOPOLOGY_SERVICES.flatMap(knownUrlVariables);
    for (const [variable, value] of Object.entries(config))
      if (/^https?:\/\//.test(String(value)) && !known.includes(variable))
        problem(`${variable} (${String(value)}) is a URL tools/topology does not give any service`);
  });
  return [...new Set(problems)];
}

/** The port of the Service named `name` whose target is the container port `portName`. */
function k8sServicePort(name: string, portName: string): unknown {
  const service = readK8sFile(`${name}-service.yaml`);
  return listAt(service, 'spec.ports').find((p: Obj) => p.targetPort === portName)?.port;
}

describe('k8s/base wires the services as tools/topology does', () => {
  const config = configData(readPlatformConfig());

  test('ports, container ports and the services’ URLs', () => {
    expect(k8sProblems(config, k8sServicePort)).toEqual([]);
  });

  test('a drift is caught: a URL on another port, a port moved, an unknown URL', () => {
    expect(
      k8sProblems({ ...config, DETERMINATIONS_URL: 'http://determinations:3001' }, k8sServicePort),
    ).toEqual(['DETERMINATIONS_URL is http://determinations:3001, not http://determinations:3000']);
    expect(k8sProblems({ ...config, POLICY_PORT: '3003' }, k8sServicePort)).toEqual([
      'POLICY_PORT is 3003, not 3000',
    ]);
    expect(k8sProblems({ ...config, LEDGER_URL: 'http://ledger:3000' }, k8sServicePort)).toEqual([
      'LEDGER_URL (http://ledger:3000) is a URL tools/topology does not give any service',
    ]);
  });
});
