import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import {
  listeners,
  localPorts,
  localWiring,
  type ProcessName,
  SERVICE_NODE_FLAGS,
  SERVICES,
  STAND_INS,
  STORES,
  secretNames,
  service,
  serviceNodeArgs,
  usersOf,
  usesOf,
} from '../src';

const root = path.resolve(__dirname, '..', '..', '..');

describe('the topology', () => {
  it('names an entry point that exists for every service', () => {
    for (const spec of SERVICES)
      expect({ name: spec.name, exists: existsSync(path.join(root, spec.main)) }).toEqual({
        name: spec.name,
        exists: true,
      });
  });

  it('gives every listener its own npm start port and variable, and a service distinct container ports', () => {
    const all = listeners();
    expect(new Set(all.map((l) => l.listener.localPort)).size).toBe(all.length);
    expect(new Set(all.map((l) => l.listener.portEnv)).size).toBe(all.length);
    for (const spec of SERVICES) {
      const container = Object.values(spec.ports).map((l) => l.containerPort);
      expect(new Set(container).size).toBe(container.length);
    }
  });

  it('calls only listeners that exist, and has no cycle among what the processes use', () => {
    const processes = new Map<string, { ports: Record<string, unknown> }>(
      [...SERVICES, ...STAND_INS].map((p) => [p.name, p]),
    );
    for (const spec of SERVICES) {
      for (const [variable, call] of Object.entries(spec.calls))
        expect({ variable, reaches: call.port in (processes.get(call.to)?.ports ?? {}) }).toEqual({
          variable,
          reaches: true,
        });
      for (const portName of Object.values(spec.ownUrls)) expect(spec.ports).toHaveProperty(portName);
    }
    const visiting = new Set<ProcessName>();
    const acyclic = (name: ProcessName): void => {
      if (visiting.has(name)) throw new Error(`a cycle through ${name}`);
      visiting.add(name);
      for (const used of usesOf(name)) acyclic(used);
      visiting.delete(name);
    };
    for (const spec of SERVICES) acyclic(spec.name);
  });

  it('stops users before what they use: the gateway first, the stores after every service', () => {
    expect(usersOf('gateway')).toEqual([]);
    expect(usersOf('policy').sort()).toEqual(['determinations', 'gateway', 'payments']);
    expect(usersOf('mpesa-simulator')).toEqual(['payments']);
    expect(usersOf('webhook-receiver')).toEqual(['webhooks']);
    expect(usersOf('chain')).toEqual(['policy']);
    expect(usersOf('redis').sort()).toEqual(SERVICES.map((s) => s.name).sort());
  });

  it('lists each secret once: shared, own (optional included), and the stores’ secret variables', () => {
    const names = secretNames();
    expect(names).toEqual([...new Set(names)]);
    expect(names).toEqual(
      expect.arrayContaining([
        'INTERNAL_SIGNING_SECRET',
        'MONGO_URL',
        'REDIS_URL',
        'CHAIN_RPC_URL',
        'CHAIN_PRIVATE_KEY',
      ]),
    );
    expect(names).not.toContain('CHAIN_REGISTRY_ADDRESS');
    // An own secret, optional or not, is one service's only.
    expect(names).toContain('SANDBOX_SIGNING_KEYS');
    for (const spec of SERVICES) {
      for (const secret of [...spec.ownSecrets, ...spec.optionalSecrets]) {
        const holders = SERVICES.filter((s) =>
          [...s.ownSecrets, ...s.optionalSecrets, ...s.sharedSecrets].includes(secret),
        );
        expect({ secret, holders: holders.map((s) => s.name) }).toEqual({ secret, holders: [spec.name] });
      }
    }
    expect(STORES.map((s) => s.name)).toEqual(['mongo', 'redis', 'chain']);
  });
});

describe('serviceNodeArgs', () => {
  it('starts node with the service flags and the extras as its own options, running the entry from source', () => {
    const entry = path.join(__dirname, 'fixtures', 'print-node-args.ts');
    const run = spawnSync(process.execPath, serviceNodeArgs(entry, ['--stack-size=2000']), {
      cwd: root,
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(run.stderr).toBe('');
    const started = JSON.parse(run.stdout) as { execArgv: string[]; script: string };
    expect(started.script).toBe(entry);
    // Options node itself took (a flag placed after the entry would reach the script instead).
    for (const flag of [...SERVICE_NODE_FLAGS, '--stack-size=2000']) expect(started.execArgv).toContain(flag);
    expect(started.execArgv).toEqual(expect.arrayContaining(['--import', 'tsx']));
  });
});

describe('localPorts', () => {
  it('answers npm start’s defaults, moved by each listener’s variable', () => {
    const ports = localPorts({ POLICY_PORT: '4303', MPESA_SIMULATOR_PORT: '' });
    expect(ports.gateway).toEqual({ http: 3000, ops: 3001 });
    expect(ports.policy).toEqual({ http: 4303 });
    expect(ports.payments).toEqual({ http: 3005, callbacks: 3006 });
    expect(ports['mpesa-simulator']).toEqual({ http: 4200 });
    expect(ports['rate-simulator']).toEqual({ http: 4100 });
    expect(ports['webhook-receiver']).toEqual({ http: 4000 });
  });

  it.each(['abc', '0', '70000', '3000.5', ' 3000'])('refuses %j as a port', (value) => {
    expect(() => localPorts({ GATEWAY_PORT: value })).toThrow(
      `GATEWAY_PORT must be a port number (1-65535), not "${value}"`,
    );
  });
});

describe('localWiring', () => {
  it('gives a service its listeners (loopback where npm start binds it), the URLs it calls and its own URLs', () => {
    expect(localWiring('payments', localPorts({}))).toEqual({
      PAYMENTS_PORT: '3005',
      PAYMENTS_HOST: '127.0.0.1',
      PAYMENTS_CALLBACK_PORT: '3006',
      PAYMENTS_CALLBACK_HOST: '127.0.0.1',
      POLICY_URL: 'http://127.0.0.1:3003',
      DETERMINATIONS_URL: 'http://127.0.0.1:3004',
      MPESA_BASE_URL: 'http://127.0.0.1:4200',
      RATE_SOURCE_URL: 'http://127.0.0.1:4100',
      PAYMENTS_CALLBACK_BASE_URL: 'http://127.0.0.1:3006',
    });
    // The partner API keeps the service's own bind address (every interface), the ops API loopback.
    expect(localWiring('gateway', localPorts({}))).toEqual({
      GATEWAY_PORT: '3000',
      OPS_PORT: '3001',
      OPS_HOST: '127.0.0.1',
      WEBHOOKS_URL: 'http://127.0.0.1:3002',
      POLICY_URL: 'http://127.0.0.1:3003',
      DETERMINATIONS_URL: 'http://127.0.0.1:3004',
      PAYMENTS_URL: 'http://127.0.0.1:3005',
    });
  });

  it('leaves out what the ports given do not name (a fault scenario runs a few services)', () => {
    expect(localWiring('gateway', { gateway: { http: 5000 }, policy: { http: 5003 } })).toEqual({
      GATEWAY_PORT: '5000',
      POLICY_URL: 'http://127.0.0.1:5003',
    });
    expect(localWiring('determinations', {})).toEqual({});
    expect(service('determinations').calls.POLICY_URL?.optional).toBeUndefined();
  });
});
