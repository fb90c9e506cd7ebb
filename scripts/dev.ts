/**
 * `npm run dev -w services/<name>`: one service from the working tree, restarted by `tsx watch`
 * on every change, against the infrastructure docker-compose.dev.yml publishes (README, "Running
 * the infrastructure in containers"). Its environment is its own block of docker-compose.yml (so
 * its local placeholders, and only its own secrets, are written once), with every address on the
 * compose network moved to the host: the stores and stand-ins to the ports docker-compose.dev.yml
 * publishes, the other services to `npm start`'s ports (tools/topology), where their own
 * `npm run dev` listens. Logs are pino-pretty lines on a terminal (scripts/pretty-logs.ts).
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { localPorts, localUrl, type Ports, SERVICES, type ServiceName, service } from '@parametric/topology';
import { parse } from 'yaml';
import { logFormat, prettyInto } from './pretty-logs';

type Obj = Record<string, unknown>;
const isObj = (value: unknown): value is Obj =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const ROOT = path.resolve(__dirname, '..');

/** `service:containerPort` on the compose network → `127.0.0.1:hostPort`, from the override's ports. */
export function publishedInfrastructure(override: Obj): Map<string, string> {
  const published = new Map<string, string>();
  for (const [name, svc] of Object.entries(isObj(override.services) ? override.services : {})) {
    for (const port of isObj(svc) && Array.isArray(svc.ports) ? svc.ports : []) {
      const [ip, host, target] = String(port).split(':');
      published.set(`${name}:${target}`, `${ip}:${host}`);
    }
  }
  return published;
}

/**
 * The environment of `name` run on the host: its docker-compose.yml environment with compose
 * addresses replaced. Throws when an address would stay on the compose network (a store the
 * override does not publish): the service would fail to connect, later and less clearly.
 */
export function devEnvironment(
  name: ServiceName,
  compose: Obj,
  override: Obj,
  ports: Ports,
): Record<string, string> {
  const spec = service(name);
  const services = isObj(compose.services) ? compose.services : {};
  const block = services[name];
  const composeEnv = isObj(block) && isObj(block.environment) ? block.environment : {};
  const env: Record<string, string> = {};
  const infra = publishedInfrastructure(override);
  for (const [key, raw] of Object.entries(composeEnv)) {
    env[key] = String(raw ?? '').replace(/\/\/([\w-]+):(\d+)/g, (whole, host: string, port: string) => {
      const published = infra.get(`${host}:${port}`);
      return published ? `//${published}` : whole;
    });
  }
  for (const [variable, call] of Object.entries(spec.calls)) {
    const url = SERVICES.some((s) => s.name === call.to) ? localUrl(ports, call.to, call.port) : undefined;
    if (url) env[variable] = url;
  }
  for (const [variable, listenerName] of Object.entries(spec.ownUrls)) {
    const url = localUrl(ports, name, listenerName);
    if (url) env[variable] = url;
  }
  for (const [listenerName, listener] of Object.entries(spec.ports)) {
    env[listener.portEnv] = String(ports[name]?.[listenerName] ?? listener.localPort);
    if (listener.hostEnv && listener.localHost) env[listener.hostEnv] = listener.localHost;
  }
  const composeHosts = Object.keys(services);
  for (const [key, value] of Object.entries(env)) {
    const left = composeHosts.find((host) => value.includes(`//${host}:`));
    if (left)
      throw new Error(
        `${name}: ${key} (${value}) addresses ${left} on the compose network, which docker-compose.dev.yml does not publish`,
      );
  }
  return env;
}

const readYaml = (file: string) => parse(readFileSync(path.join(ROOT, file), 'utf8')) as Obj;

function main(): void {
  const name = process.argv[2] as ServiceName;
  if (!SERVICES.some((s) => s.name === name))
    throw new Error(`usage: dev.ts <${SERVICES.map((s) => s.name).join('|')}>, not ${String(name)}`);
  const own = devEnvironment(
    name,
    readYaml('docker-compose.yml'),
    readYaml('docker-compose.dev.yml'),
    localPorts({}),
  );
  // The developer's LOG_LEVEL wins; nothing else does, so a stray MONGO_URL in the shell cannot
  // point the service somewhere else unnoticed.
  const env = {
    ...process.env,
    ...own,
    ...(process.env.LOG_LEVEL ? { LOG_LEVEL: process.env.LOG_LEVEL } : {}),
  };
  const format = logFormat(process.env, Boolean(process.stdout.isTTY));
  console.log(
    `[dev] ${name} from ${service(name).main} under tsx watch, MongoDB ${own.MONGO_URL ?? '(none)'}, Redis ${own.REDIS_URL ?? '(none)'}` +
      `, listening on ${Object.values(service(name).ports)
        .map((l) => own[l.portEnv])
        .join(', ')}`,
  );
  const child = spawn(
    process.execPath,
    [require.resolve('tsx/cli'), 'watch', '--clear-screen=false', service(name).main],
    {
      cwd: ROOT,
      env,
      stdio: ['inherit', format === 'pretty' ? 'pipe' : 'inherit', 'inherit'],
    },
  );
  if (child.stdout) prettyInto(child.stdout, true);
  // Ctrl-C reaches the whole terminal group, the child included: wait for it to stop. A SIGTERM
  // sent to this process alone is passed on.
  process.on('SIGINT', () => {});
  process.on('SIGTERM', () => child.kill('SIGTERM'));
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
}

if (require.main === module) main();
