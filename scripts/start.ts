/**
 * `npm start`: the whole platform locally on embedded defaults.
 * - MongoDB: MONGO_URL, else a real mongod if installed, else the embedded server.
 * - Redis: REDIS_URL, else a private redis-server on a free port.
 * - Chain: CHAIN_RPC_URL (+ CHAIN_REGISTRY_ADDRESS, CHAIN_PRIVATE_KEY), else a private anvil
 *   on a free port with the PolicyRegistry deployed.
 * - Services as child processes, configured through their environment exactly as in
 *   production; secrets generated for this run unless set (the determinations signing key
 *   too: a fresh Ed25519 key unless DETERMINATION_SIGNING_KEYS is set). DASHBOARD_TOKEN_KEYS
 *   goes to the gateway only, when set; otherwise the gateway makes a key of its own, and
 *   dashboard sign-ins end when the run stops.
 * - A demo organization, registered once the platform is up, with a dashboard admin
 *   (admin@demo.example; its password DEMO_ADMIN_PASSWORD, else generated for this run).
 * - Third parties as local stand-ins: a webhook receiver (the partner's endpoint), the M-Pesa
 *   simulator (Daraja, with M-Pesa credentials generated for this run, given to payments and
 *   to the simulator only) and the rate simulator (Coinbase's exchange rates).
 * - `--data-dir <dir>` (or DATA_DIR): the embedded MongoDB, the private Redis and the private
 *   chain keep their data there, and the secrets generated here are kept in it (secrets.json),
 *   so a restart finds the organizations, keys, policies and queued work of the last run
 *   (docs/local-data.md). Without it, every run starts empty.
 * Ctrl-C or SIGTERM stops every process it started.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import path from 'node:path';
import { startLocalMongo } from '@parametric/embedded-mongo';
import { startLocalChain } from '@parametric/local-chain';
import { startLocalRedis } from '@parametric/local-redis';
import { dataDirOf, KeptSecrets } from './local-data';
import { logFormat, prettyInto } from './pretty-logs';

const root = path.resolve(__dirname, '..');
const stops: Array<() => Promise<void>> = [];

let dataDir: string | undefined;
try {
  dataDir = dataDirOf(process.argv.slice(2), process.env);
} catch (err) {
  console.error(`[start] ${err instanceof Error ? err.message : err}`);
  process.exit(2);
}
/** The secrets of the data directory; none kept without one. */
const kept = dataDir ? new KeptSecrets(dataDir) : undefined;

let format: 'pretty' | 'json';
try {
  format = logFormat(process.env, Boolean(process.stdout.isTTY));
} catch (err) {
  console.error(`[start] ${err instanceof Error ? err.message : err}`);
  process.exit(2);
}

/** A secret this run needs: as set in the environment, else the data directory's, else made now. */
function secret(name: string, make: () => string): string {
  return process.env[name] || ours(name, make);
}

/** A secret that is always ours (never read from the environment): kept, else made now. */
function ours(name: string, make: () => string): string {
  return kept ? kept.keep(name, make) : make();
}

function generated(name: string): string {
  return secret(name, () => randomBytes(24).toString('base64url'));
}

const ed25519Pem = () =>
  String(generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }));

/**
 * The determinations signing keys: DETERMINATION_SIGNING_KEYS as set (PKCS#8 PEM blocks, the
 * active one first), else the data directory's, else a fresh Ed25519 key for this run.
 * Determinations signed with a per-run key no longer verify once the run stops (the JWKS only
 * lists the keys it was given): use --data-dir, or set DETERMINATION_SIGNING_KEYS with an
 * external MONGO_URL, to keep them verifiable.
 */
function signingKeys(): string {
  return secret('DETERMINATION_SIGNING_KEYS', ed25519Pem);
}

/** The demo organization's first dashboard user (ORG_ADMIN). */
const DEMO_ADMIN_EMAIL = 'admin@demo.example';

/**
 * The demo admin's password: DEMO_ADMIN_PASSWORD as set (never printed), else one generated
 * for this run: 24 random base64url characters, which pass the gateway's rules (12 to 256
 * characters, not a common password, not containing the email's local part).
 */
function demoAdminPassword(): { value: string; supplied: boolean } {
  const supplied = process.env.DEMO_ADMIN_PASSWORD;
  if (supplied) return { value: supplied, supplied: true };
  const local = DEMO_ADMIN_EMAIL.split('@')[0] ?? '';
  const make = () => {
    for (;;) {
      const value = randomBytes(18).toString('base64url');
      if (!value.toLowerCase().includes(local)) return value;
    }
  };
  return { value: ours('DEMO_ADMIN_PASSWORD', make), supplied: false };
}

interface DemoOrganization {
  id: string;
  name: string;
  apiKey: string;
  apiSecret: string;
}

/**
 * Registers the demo organization with its first dashboard user, as a partner would
 * (`POST /api/auth/register-organization` with `adminEmail` and `adminPassword`). Answers the
 * organization, or why there is none: the gateway's error (never the password), e.g. a 409
 * when an earlier run left admin@demo.example in an external MONGO_URL's database.
 */
async function registerDemoOrganization(
  gatewayUrl: string,
  password: string,
): Promise<{ organization: DemoOrganization } | { problem: string; status: number }> {
  const response = await fetch(`${gatewayUrl}/api/auth/register-organization`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      name: 'Demo Co-op',
      type: 'COOPERATIVE',
      countryCode: 'KE',
      adminEmail: DEMO_ADMIN_EMAIL,
      adminPassword: password,
    }),
  });
  const body = (await response.json().catch(() => undefined)) as
    | {
        data?: { organization?: DemoOrganization };
        error?: { code?: string; message?: string; details?: Array<{ field?: string; message?: string }> };
      }
    | undefined;
  const organization = body?.data?.organization;
  if (response.status === 201 && organization) return { organization };
  const details = (body?.error?.details ?? []).map((d) => `${d.field}: ${d.message}`).join('; ');
  return {
    status: response.status,
    problem: `${response.status} ${body?.error?.code ?? ''} ${body?.error?.message ?? ''}${details ? ` (${details})` : ''}`,
  };
}

/**
 * The demo organization: the one an earlier run registered and kept in the data directory, while
 * its key still works, else a new registration (kept for the next run).
 */
async function demoOrganization(
  gatewayUrl: string,
  password: string,
): Promise<{ organization: DemoOrganization } | { problem: string; status: number }> {
  const earlier = kept?.get('DEMO_ORGANIZATION');
  if (earlier) {
    const organization = JSON.parse(earlier) as DemoOrganization;
    const me = await fetch(`${gatewayUrl}/api/organizations/me`, {
      headers: { 'x-api-key': organization.apiKey },
      signal: AbortSignal.timeout(10_000),
    });
    if (me.ok) return { organization };
  }
  const registered = await registerDemoOrganization(gatewayUrl, password);
  if (kept && 'organization' in registered)
    kept.set('DEMO_ORGANIZATION', JSON.stringify(registered.organization));
  return registered;
}

/**
 * The M-Pesa (Daraja) credentials: the payments service's own secrets, like the determinations
 * signing keys. Never taken from the environment (MPESA_BASE_URL is always the local simulator
 * here, so real credentials would be of no use, and would be shown to it): generated for this
 * run, in Daraja sandbox shapes (its public test shortcodes 174379 and 600000), and given to
 * payments and, under its own variable names, to the simulator, which accepts nothing else.
 */
const MPESA_CREDENTIAL_ENV = [
  'MPESA_CONSUMER_KEY',
  'MPESA_CONSUMER_SECRET',
  'MPESA_SHORTCODE',
  'MPESA_PASSKEY',
  'MPESA_B2C_SHORTCODE',
  'MPESA_INITIATOR_NAME',
  'MPESA_SECURITY_CREDENTIAL',
] as const;
type MpesaCredentials = Record<(typeof MPESA_CREDENTIAL_ENV)[number], string>;

function mpesaCredentials(): MpesaCredentials {
  return {
    MPESA_CONSUMER_KEY: ours('MPESA_CONSUMER_KEY', () => `local-${randomBytes(12).toString('hex')}`),
    MPESA_CONSUMER_SECRET: ours('MPESA_CONSUMER_SECRET', () => randomBytes(24).toString('base64url')),
    MPESA_SHORTCODE: '174379',
    MPESA_PASSKEY: ours('MPESA_PASSKEY', () => randomBytes(32).toString('hex')),
    MPESA_B2C_SHORTCODE: '600000',
    MPESA_INITIATOR_NAME: 'local-initiator',
    MPESA_SECURITY_CREDENTIAL: ours('MPESA_SECURITY_CREDENTIAL', () => randomBytes(48).toString('base64')),
  };
}

/** The same credentials as the simulator reads them (its CLI's MPESA_SIMULATOR_* variables). */
function simulatorCredentials(credentials: MpesaCredentials): NodeJS.ProcessEnv {
  return {
    MPESA_SIMULATOR_CONSUMER_KEY: credentials.MPESA_CONSUMER_KEY,
    MPESA_SIMULATOR_CONSUMER_SECRET: credentials.MPESA_CONSUMER_SECRET,
    MPESA_SIMULATOR_SHORTCODE: credentials.MPESA_SHORTCODE,
    MPESA_SIMULATOR_PASSKEY: credentials.MPESA_PASSKEY,
    MPESA_SIMULATOR_B2C_SHORTCODE: credentials.MPESA_B2C_SHORTCODE,
    MPESA_SIMULATOR_INITIATOR_NAME: credentials.MPESA_INITIATOR_NAME,
    MPESA_SIMULATOR_SECURITY_CREDENTIAL: credentials.MPESA_SECURITY_CREDENTIAL,
  };
}

/**
 * How long a service may take to stop gracefully before it is killed. Locally a stop takes a
 * few seconds (work in flight, then Redis and MongoDB close); it only runs over when a store it
 * waits for is already gone.
 */
const STOP_DEADLINE_MS = 15_000;

function startService(
  name: string,
  env: NodeJS.ProcessEnv,
  script = path.join(root, 'services', name, 'src', 'main.ts'),
  args: string[] = [],
): ChildProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], {
    cwd: root,
    env,
    stdio: ['ignore', format === 'pretty' ? 'pipe' : 'inherit', 'inherit'],
  });
  if (child.stdout) prettyInto(child.stdout, Boolean(process.stdout.isTTY));
  stops.push(async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    // A graceful stop can wait forever on a store that is already gone (Ctrl-C signals the
    // whole process group, redis-server and anvil included): past the deadline, kill it.
    const deadline = setTimeout(() => {
      console.error(`[start] ${name} did not stop within ${STOP_DEADLINE_MS / 1000} s; killing it`);
      child.kill('SIGKILL');
    }, STOP_DEADLINE_MS);
    await exited;
    clearTimeout(deadline);
  });
  child.on('exit', (code, signal) => {
    if (!stopping) {
      console.error(`[start] ${name} exited (${signal ?? code}); stopping the platform`);
      void shutdown(1);
    }
  });
  return child;
}

async function waitReady(url: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {}
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`${url} did not become ready within ${timeoutMs / 1000} s`);
}

let stopping = false;
async function shutdown(code: number): Promise<void> {
  if (stopping) return;
  stopping = true;
  console.log('\n[start] stopping…');
  for (const stop of stops.reverse()) await stop().catch((err) => console.error(err));
  process.exit(code);
}

/**
 * The environment the services inherit: this process's, less the secrets only one service is
 * given (as in Kubernetes and docker-compose): the determinations signing keys, the gateway's
 * dashboard token keys, and the payments service's M-Pesa credentials and callback token, and
 * less DEMO_ADMIN_PASSWORD, which no service reads. The payments tunables (MPESA_TIMEOUT_MS,
 * MPESA_B2C_MAX_PER_SECOND, …), MPESA_SIMULATOR_CALLBACK_DELAY_MS and the gateway's dashboard
 * tunables (ACCESS_TOKEN_TTL_SECONDS, LOGIN_ACCOUNT_FAILURES, …) stay: they pass through.
 */
function inheritedEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const key of [
    'DETERMINATION_SIGNING_KEYS',
    'DASHBOARD_TOKEN_KEYS',
    'DEMO_ADMIN_PASSWORD',
    'PAYMENTS_CALLBACK_TOKEN',
    ...MPESA_CREDENTIAL_ENV,
  ]) {
    delete env[key];
  }
  return env;
}

/**
 * How the banner shows a secret: the value when this run generated it, the shell variable
 * (`$NAME`) when the operator set it, so that a secret given to us is never printed.
 */
function shown(name: string, value: string): string {
  return process.env[name] ? `$${name}` : value;
}

/**
 * The banner's demo section: the demo organization and how to sign in to the dashboard API as
 * its admin (the password only when this run generated it), or why there is none.
 */
function demoSection(
  gatewayUrl: string,
  demo: { organization: DemoOrganization } | { problem: string; status: number },
  password: { value: string; supplied: boolean },
): string {
  const keys = process.env.DASHBOARD_TOKEN_KEYS
    ? 'DASHBOARD_TOKEN_KEYS (as set)'
    : dataDir
      ? `a key kept in ${dataDir}: sign-ins last across restarts`
      : 'a key the gateway made at start: sign-ins end when the platform stops (--data-dir, or\n' +
        '                        DASHBOARD_TOKEN_KEYS with an external MONGO_URL, keeps them across restarts)';
  if ('problem' in demo && !(demo.status === 409 && password.supplied)) {
    const why =
      demo.status === 409
        ? `${DEMO_ADMIN_EMAIL} already exists (an earlier run against this MONGO_URL): sign in with that run's
                        password (DEMO_ADMIN_PASSWORD keeps one password across runs)`
        : `not registered (${demo.problem})`;
    return `  Demo organization:    ${why}
  Dashboard tokens:     signed with ${keys}`;
  }
  // A password of ours is base64url: safe as is in JSON and in single quotes. One the operator
  // set is never printed: the command reads it from the shell (export DEMO_ADMIN_PASSWORD).
  const body = password.supplied
    ? `"$(node -p 'JSON.stringify({ email: "${DEMO_ADMIN_EMAIL}", password: process.env.DEMO_ADMIN_PASSWORD })')"`
    : `'{"email":"${DEMO_ADMIN_EMAIL}","password":"${password.value}"}'`;
  const login = `curl -s -X POST ${gatewayUrl}/api/auth/login -H 'content-type: application/json' \\
       -d ${body}`;
  const ttl = process.env.ACCESS_TOKEN_TTL_SECONDS ?? '900';
  const organization =
    'organization' in demo
      ? `  Demo organization:    ${demo.organization.name}, id ${demo.organization.id}
                        (x-api-key: ${demo.organization.apiKey}; secret ${demo.organization.apiSecret})`
      : `  Demo organization:    registered by an earlier run against this MONGO_URL`;
  return `${organization}
  Dashboard sign-in:    ${DEMO_ADMIN_EMAIL}, its first user (ORG_ADMIN)
  Password:             ${password.supplied ? '$DEMO_ADMIN_PASSWORD (as you set it; export it for the commands below)' : `${password.value}   (generated for this run; DEMO_ADMIN_PASSWORD sets one)`}
  Dashboard tokens:     signed with ${keys}
Sign in as the demo admin:
     ${login}
     # The access token (${ttl} s) as a bearer token on the partner API, e.g. who am I:
     TOKEN=$(${login} \\
       | node -p 'JSON.parse(require("fs").readFileSync(0, "utf8")).data.accessToken')
     curl -s ${gatewayUrl}/api/auth/session -H "Authorization: Bearer $TOKEN"`;
}

async function main(): Promise<void> {
  process.on('SIGINT', () => void shutdown(0));
  process.on('SIGTERM', () => void shutdown(0));

  const under = (part: string) => (dataDir ? path.join(dataDir, part) : undefined);
  const [mongo, redis, chain] = await Promise.all([
    startLocalMongo(process.env, { dataDir: under('mongo') }),
    startLocalRedis(process.env, { dataDir: under('redis') }),
    startLocalChain(process.env, { stateDir: under('chain') }),
  ]);
  stops.push(
    () => mongo.stop(),
    () => redis.stop(),
    () => chain.stop(),
  );
  console.log(`[start] MongoDB: ${mongo.description}`);
  console.log(`[start] Redis: ${redis.description}`);
  console.log(`[start] Chain: ${chain.description}`);

  if (dataDir) console.log(`[start] Data directory: ${dataDir} (kept across restarts)`);
  if (process.env.MONGO_URL && !process.env.API_KEY_PEPPER && !kept) {
    console.warn('[start] API_KEY_PEPPER is not set: keys issued in this run will not work after a restart');
  }
  if (process.env.MONGO_URL && !process.env.DETERMINATION_SIGNING_KEYS && !kept) {
    console.warn(
      '[start] DETERMINATION_SIGNING_KEYS is not set: determinations signed in this run will not verify after a restart',
    );
  }
  if (process.env.MONGO_URL && !process.env.DASHBOARD_TOKEN_KEYS && !kept) {
    console.warn(
      '[start] DASHBOARD_TOKEN_KEYS is not set: dashboard sign-ins of this run end at a restart (the gateway signs with a key made at start)',
    );
  }
  const gatewayPort = process.env.GATEWAY_PORT ?? '3000';
  const opsPort = process.env.OPS_PORT ?? '3001';
  const webhooksPort = process.env.WEBHOOKS_PORT ?? '3002';
  const policyPort = process.env.POLICY_PORT ?? '3003';
  const determinationsPort = process.env.DETERMINATIONS_PORT ?? '3004';
  const paymentsPort = process.env.PAYMENTS_PORT ?? '3005';
  const callbacksPort = process.env.PAYMENTS_CALLBACK_PORT ?? '3006';
  const receiverPort = process.env.WEBHOOK_RECEIVER_PORT ?? '4000';
  const rateSimulatorPort = process.env.RATE_SIMULATOR_PORT ?? '4100';
  const mpesaSimulatorPort = process.env.MPESA_SIMULATOR_PORT ?? '4200';
  const opsToken = generated('OPS_TOKEN');
  // Read before inheritedEnv() drops it from what the other services see.
  const callbackToken = generated('PAYMENTS_CALLBACK_TOKEN');
  const mpesa = mpesaCredentials();
  const inherited = inheritedEnv();
  const shared = {
    ...inherited,
    NODE_ENV: process.env.NODE_ENV ?? 'development',
    MONGO_URL: mongo.url,
    REDIS_URL: redis.url,
    INTERNAL_SIGNING_SECRET: generated('INTERNAL_SIGNING_SECRET'),
    API_KEY_PEPPER: generated('API_KEY_PEPPER'),
  };
  startService('webhooks', {
    ...shared,
    // Internal: only the gateway's two ports are meant to be reached (containers keep 0.0.0.0).
    WEBHOOKS_HOST: '127.0.0.1',
    WEBHOOKS_PORT: webhooksPort,
    WEBHOOK_SECRET_KEY: secret('WEBHOOK_SECRET_KEY', () => randomBytes(32).toString('base64')),
    // Local runs only: lets a developer point a webhook at the local receiver below.
    ALLOW_INSECURE_WEBHOOKS: 'true',
  });
  startService('policy', {
    ...shared,
    POLICY_HOST: '127.0.0.1',
    POLICY_PORT: policyPort,
    CHAIN_RPC_URL: chain.rpcUrl,
    CHAIN_REGISTRY_ADDRESS: chain.registryAddress,
    CHAIN_PRIVATE_KEY: chain.ownerPrivateKey,
  });
  // DETERMINATION_REPORT_DUE_SECONDS, DETERMINATION_OVERDUE_SWEEP_SECONDS and the other
  // tunables pass through from the environment (`shared` holds it); nothing here sets them, so
  // the service's defaults apply unless they are set.
  startService('determinations', {
    ...shared,
    DETERMINATIONS_HOST: '127.0.0.1',
    DETERMINATIONS_PORT: determinationsPort,
    POLICY_URL: `http://127.0.0.1:${policyPort}`,
    DETERMINATION_SIGNING_KEYS: signingKeys(),
  });
  // The stand-ins payments calls: Daraja, accepting only this run's credentials, and a Coinbase
  // exchange-rates API. MPESA_SIMULATOR_CALLBACK_DELAY_MS (and the simulator's other
  // MPESA_SIMULATOR_* tunables) and RATE_SIMULATOR_KES_PER_USDC pass through from the environment.
  startService(
    'mpesa-simulator',
    { ...inherited, ...simulatorCredentials(mpesa) },
    path.join(root, 'tools', 'mpesa-simulator', 'src', 'cli.ts'),
    ['--host', '127.0.0.1', '--port', mpesaSimulatorPort],
  );
  startService('rate-simulator', inherited, path.join(root, 'tools', 'rate-simulator', 'src', 'cli.ts'), [
    '--host',
    '127.0.0.1',
    '--port',
    rateSimulatorPort,
  ]);
  // PAYMENTS_RECONCILE_AFTER_SECONDS, PAYMENTS_RECONCILE_SWEEP_SECONDS, PAYOUT_MAX_ATTEMPTS,
  // PAYOUT_RETRY_BASE_SECONDS, MPESA_B2C_MAX_PER_SECOND and the other tunables pass through from
  // the environment (`shared` holds it); nothing here sets them, so the service's defaults apply
  // unless they are set.
  startService('payments', {
    ...shared,
    PAYMENTS_HOST: '127.0.0.1',
    PAYMENTS_PORT: paymentsPort,
    // Daraja's callbacks arrive on a listener of their own; the simulator POSTs them here.
    PAYMENTS_CALLBACK_HOST: '127.0.0.1',
    PAYMENTS_CALLBACK_PORT: callbacksPort,
    PAYMENTS_CALLBACK_BASE_URL: `http://127.0.0.1:${callbacksPort}`,
    PAYMENTS_CALLBACK_TOKEN: callbackToken,
    POLICY_URL: `http://127.0.0.1:${policyPort}`,
    // Payouts read what each determination makes owed there (amount, policy, organization).
    DETERMINATIONS_URL: `http://127.0.0.1:${determinationsPort}`,
    MPESA_BASE_URL: `http://127.0.0.1:${mpesaSimulatorPort}`,
    ...mpesa,
    RATE_SOURCE_URL: `http://127.0.0.1:${rateSimulatorPort}`,
  });
  // DASHBOARD_TOKEN_KEYS, to the gateway only, when set (or kept in the data directory);
  // otherwise the gateway makes a key at start (outside production) and dashboard sign-ins end
  // with it. DASHBOARD_TOKEN_ISSUER, the token lifetimes and the sign-in throttle pass through
  // from the environment.
  const dashboardTokenKeys = dataDir
    ? secret('DASHBOARD_TOKEN_KEYS', ed25519Pem)
    : process.env.DASHBOARD_TOKEN_KEYS;
  startService('gateway', {
    ...shared,
    GATEWAY_PORT: gatewayPort,
    // The ops API is for operators on this machine only (containers keep 0.0.0.0).
    OPS_HOST: '127.0.0.1',
    OPS_PORT: opsPort,
    OPS_TOKEN: opsToken,
    WEBHOOKS_URL: `http://127.0.0.1:${webhooksPort}`,
    POLICY_URL: `http://127.0.0.1:${policyPort}`,
    DETERMINATIONS_URL: `http://127.0.0.1:${determinationsPort}`,
    PAYMENTS_URL: `http://127.0.0.1:${paymentsPort}`,
    ...(dashboardTokenKeys ? { DASHBOARD_TOKEN_KEYS: dashboardTokenKeys } : {}),
  });
  startService('webhook-receiver', inherited, path.join(root, 'tools', 'webhook-receiver', 'src', 'cli.ts'), [
    '--port',
    receiverPort,
  ]);
  await Promise.all([
    waitReady(`http://127.0.0.1:${webhooksPort}/readyz`),
    waitReady(`http://127.0.0.1:${policyPort}/readyz`),
    waitReady(`http://127.0.0.1:${determinationsPort}/readyz`),
    waitReady(`http://127.0.0.1:${paymentsPort}/readyz`),
    waitReady(`http://127.0.0.1:${callbacksPort}/readyz`),
    waitReady(`http://127.0.0.1:${mpesaSimulatorPort}/_requests`),
    waitReady(`http://127.0.0.1:${rateSimulatorPort}/_requests`),
    waitReady(`http://127.0.0.1:${gatewayPort}/readyz`),
  ]);

  const gatewayUrl = `http://127.0.0.1:${gatewayPort}`;
  const password = demoAdminPassword();
  const demo = await demoOrganization(gatewayUrl, password.value).catch((err: unknown) => ({
    status: 0,
    problem: err instanceof Error ? err.message : String(err),
  }));
  if ('problem' in demo) console.warn(`[start] the demo organization was not registered: ${demo.problem}`);
  const organizationId = 'organization' in demo ? demo.organization.id : '<organizationId>';
  const apiKey = 'organization' in demo ? demo.organization.apiKey : '<apiKey>';
  const opsBearer = `Authorization: Bearer ${shown('OPS_TOKEN', opsToken)}`;

  // An observation period from now to 30 days on: it overlaps the cover of any policy activated
  // after the platform came up (cover starts at activation).
  const instant = (msAgo: number) => new Date(Date.now() - msAgo).toISOString().replace(/\.\d+Z$/, 'Z');
  const exampleIngestion = JSON.stringify({
    idempotencyKey: 'demo-assessment-1',
    policyNumber: '<policyNumber>',
    kind: 'CROP_DAMAGE',
    methodologyVersion: 'ndvi-v1',
    triggered: true,
    damagePercentBp: 4000,
    assessedAt: instant(0),
    evidence: {
      indexName: 'NDVI',
      indexValue: 0.21,
      triggerThreshold: 0.35,
      exitThreshold: 0.1,
      dataSource: 'demo',
      dataSourceVersion: '1',
      periodStart: instant(0),
      periodEnd: instant(-30 * 86_400_000),
      inputDataHashes: [{ name: 'ndvi.tif', sha256: '0'.repeat(64) }],
    },
  });
  console.log(`
Platform is up.
  Data:                 ${dataDir ? `kept in ${dataDir} across restarts` : 'in memory, gone when the platform stops (npm start -- --data-dir ./data keeps it)'}
  Partner API base URL: ${gatewayUrl}/api
  API reference:        ${gatewayUrl}/api/docs   (OpenAPI document: /api/openapi.json)
  Ops API:              http://127.0.0.1:${opsPort}/ops   (${opsBearer})
  Metrics:              http://127.0.0.1:${opsPort}/ops/metrics   (Prometheus, same token; each service: /metrics on its port)
  Queue dashboard:      http://127.0.0.1:${opsPort}/ops/queues   (in a browser: any user name, the ops token as password;
                        read-only unless QUEUE_DASHBOARD_WRITABLE=true)
  Webhooks service:     http://127.0.0.1:${webhooksPort}   (internal; reached through the gateway)
  Policy service:       http://127.0.0.1:${policyPort}   (internal; farmers, plots, herds, policies)
  Determinations:       http://127.0.0.1:${determinationsPort}   (internal; signed damage determinations, settlement reports)
  Payments:             http://127.0.0.1:${paymentsPort}   (internal; Tier 2 premiums by M-Pesa, KES→USDC quotes)
  Payments callbacks:   http://127.0.0.1:${callbacksPort}   (Daraja's entry point, never partners'; STK results at
                        /mpesa/${shown('PAYMENTS_CALLBACK_TOKEN', callbackToken)}/stk)
  M-Pesa simulator:     http://127.0.0.1:${mpesaSimulatorPort}   (local Daraja: +254711000001 pays, +254711000032 cancels,
                        others in tools/mpesa-simulator/README.md; GET /_requests, /_callbacks)
  Rate simulator:       http://127.0.0.1:${rateSimulatorPort}   (local Coinbase exchange rates, USDC→KES;
                        PUT /_rate {"kesPerUsdc":"130.10"} changes the rate)
  Signing keys (JWKS):  ${gatewayUrl}/api/.well-known/jwks.json   (public; verify determinations with them)
  Chain (JSON-RPC):     ${chain.rpcUrl}   (PolicyRegistry at ${chain.registryAddress}; activations land here)
  Webhook receiver:     http://127.0.0.1:${receiverPort}/hooks   (local partner endpoint; GET /_received lists what arrived,
                        PUT /_secret {"secret": "..."} with the secret returned by PUT /api/organizations/me/webhook)
${demoSection(gatewayUrl, demo, password)}
Try: curl -s ${gatewayUrl}/api/organizations/me -H 'x-api-key: ${apiKey}'
     curl -s ${gatewayUrl}/api/.well-known/jwks.json
     # Register another organization (adminEmail and adminPassword add its first dashboard user):
     curl -s -X POST ${gatewayUrl}/api/auth/register-organization \\
       -H 'content-type: application/json' -d '{"name":"Nakuru Growers Cooperative","type":"COOPERATIVE","countryCode":"KE"}'
     # Issue a determination, as an index pipeline would (the policyNumber of an ACTIVE crop policy):
     curl -s -X POST http://127.0.0.1:${opsPort}/ops/determinations \\
       -H "${opsBearer}" -H 'content-type: application/json' -d '${exampleIngestion}'
     # Tier 2: premiums collected by M-Pesa. Move the organization to DETERMINATION_AND_SETTLEMENT,
     curl -s -X POST http://127.0.0.1:${opsPort}/ops/organizations/${organizationId}/service-tier \\
       -H "${opsBearer}" -H 'content-type: application/json' \\
       -d '{"serviceTier":"DETERMINATION_AND_SETTLEMENT"}'
     # buy a policy (POST /api/policies/purchase, docs/api.md), then send the prompt for its premium:
     curl -s -X POST ${gatewayUrl}/api/payments/initiate -H 'x-api-key: ${apiKey}' \\
       -H 'content-type: application/json' \\
       -d '{"reference":"<policyId>","amount":<premium>,"phoneNumber":"+254711000001"}'
     curl -s ${gatewayUrl}/api/payments/<transactionId> -H 'x-api-key: ${apiKey}'
Press Ctrl-C to stop.`);
}

main().catch(async (err) => {
  console.error(`[start] ${err instanceof Error ? err.message : err}`);
  await shutdown(1);
});
