/**
 * `npm start`: the whole platform locally on embedded defaults.
 * - MongoDB: MONGO_URL, else a real mongod if installed, else the embedded server.
 * - Redis: REDIS_URL, else a private redis-server on a free port.
 * - Chain: CHAIN_RPC_URL (+ CHAIN_REGISTRY_ADDRESS, CHAIN_PRIVATE_KEY), else a private anvil
 *   on a free port with the PolicyRegistry deployed.
 * - Services as child processes, wired as tools/topology says (ports, each one's URLs of the
 *   others, the stores and secrets each is given), configured through their environment exactly
 *   as in production; secrets generated for this run unless set (the determinations signing key
 *   too: a fresh Ed25519 key unless DETERMINATION_SIGNING_KEYS is set). DASHBOARD_TOKEN_KEYS
 *   goes to the gateway only, when set; otherwise the gateway makes a key of its own, and
 *   dashboard sign-ins end when the run stops.
 * - A demo organization, registered once the platform is up, with a dashboard admin
 *   (admin@demo.example; its password DEMO_ADMIN_PASSWORD, else generated for this run), and
 *   an OPS_ADMIN operator (ops-admin@local.example; OPS_ADMIN_PASSWORD, else generated).
 * - Third parties as local stand-ins: a webhook receiver (the partner's endpoint), the M-Pesa
 *   simulator (Daraja, with M-Pesa credentials generated for this run, given to payments and
 *   to the simulator only) and the rate simulator (Coinbase's exchange rates).
 * - `--data-dir <dir>` (or DATA_DIR): the embedded MongoDB, the private Redis and the private
 *   chain keep their data there, and the secrets generated here are kept in it (secrets.json),
 *   so a restart finds the organizations, keys, policies and queued work of the last run
 *   (docs/local-data.md). Without it, every run starts empty.
 * Ctrl-C or SIGTERM stops every process it started, each once and in order (services before
 * what they call, the stores last), and exits 0; a second Ctrl-C kills them all at once. This
 * file runs twice: as the launcher the terminal started (./foreground.ts), and as the platform
 * process the launcher starts in a process group of its own (./supervisor.ts).
 */
import { execFile } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import path from 'node:path';
import { startLocalMongo } from '@parametric/embedded-mongo';
import { startLocalChain } from '@parametric/local-chain';
import { startLocalRedis } from '@parametric/local-redis';
import { MPESA_SIMULATOR_BIN } from '@parametric/mpesa-simulator';
import { RATE_SIMULATOR_BIN } from '@parametric/rate-simulator';
import { onStopRequests, type StopReason } from '@parametric/runtime';
import {
  localPorts,
  localUrl,
  localWiring,
  MPESA_CREDENTIAL_ENV,
  type Ports,
  type ProcessName,
  SERVICES,
  STAND_INS,
  type StandInName,
  type StoreName,
  secretNames,
  serviceNodeArgs,
  storeEnv,
} from '@parametric/topology';
import { WEBHOOK_RECEIVER_BIN } from '@parametric/webhook-receiver';
import { isPlatformProcess, PLATFORM_PROCESS_ENV, runPlatformInOwnGroup } from './foreground';
import { dataDirOf, KeptSecrets } from './local-data';
import { logFormat, prettyInto } from './pretty-logs';
import { Supervisor } from './supervisor';

const root = path.resolve(__dirname, '..');

/** The command line and the environment, checked once (both processes: the launcher fails first). */
function readOptions(): { dataDir: string | undefined; format: 'pretty' | 'json'; ports: Ports } {
  try {
    return {
      dataDir: dataDirOf(process.argv.slice(2), process.env),
      format: logFormat(process.env, Boolean(process.stdout.isTTY)),
      ports: localPorts(process.env),
    };
  } catch (err) {
    console.error(`[start] ${err instanceof Error ? err.message : err}`);
    process.exit(2);
  }
}

const { dataDir, format, ports } = readOptions();
/** The secrets of the data directory; none kept without one (and none in the launcher). */
const kept = dataDir && isPlatformProcess() ? new KeptSecrets(dataDir) : undefined;

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
 * A person's password (the demo admin's, DEMO_ADMIN_PASSWORD; the ops admin's,
 * OPS_ADMIN_PASSWORD): the variable as set (never printed), else one generated for this run: 24
 * random base64url characters, which pass the gateway's rules (12 to 256 characters, not a
 * common password, not containing the email's local part).
 */
function personPassword(variable: string, email: string): { value: string; supplied: boolean } {
  const supplied = process.env[variable];
  if (supplied) return { value: supplied, supplied: true };
  const local = email.split('@')[0] ?? '';
  const make = () => {
    for (;;) {
      const value = randomBytes(18).toString('base64url');
      if (!value.toLowerCase().includes(local)) return value;
    }
  };
  return { value: ours(variable, make), supplied: false };
}

/** The first operator (OPS_ADMIN), made with the shared ops token as production's would be (docs/ops.md). */
const OPS_ADMIN_EMAIL = 'ops-admin@local.example';

/**
 * Invites the ops admin with the ops token and accepts the invitation with its password; an
 * operator already there (an earlier run against this MONGO_URL or data directory) is kept.
 */
async function opsAdmin(opsUrl: string, opsToken: string, password: string): Promise<string | undefined> {
  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${opsUrl}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(10_000),
    });
  const invited = await post(
    '/operators',
    { email: OPS_ADMIN_EMAIL, role: 'OPS_ADMIN' },
    { authorization: `Bearer ${opsToken}` },
  );
  if (invited.status === 409)
    return `${OPS_ADMIN_EMAIL} already exists (an earlier run): its password is that run's`;
  if (invited.status !== 201) return `not created (${invited.status} ${await invited.text()})`;
  const { data } = (await invited.json()) as { data: { invitationToken: string } };
  const accepted = await post('/auth/accept-invitation', { token: data.invitationToken, password });
  if (accepted.status !== 200) return `invitation not accepted (${accepted.status} ${await accepted.text()})`;
  return undefined;
}

/** The banner's ops sign-in: the ops admin and a ready-to-paste sign-in, or why there is none. */
function opsSection(
  opsUrl: string,
  problem: string | undefined,
  password: { value: string; supplied: boolean },
) {
  if (problem) return `  Ops sign-in:          ${problem}`;
  // As for the demo admin: a password the operator set is read from the shell, never printed.
  const body = password.supplied
    ? `"$(node -p 'JSON.stringify({ email: "${OPS_ADMIN_EMAIL}", password: process.env.OPS_ADMIN_PASSWORD })')"`
    : `'{"email":"${OPS_ADMIN_EMAIL}","password":"${password.value}"}'`;
  return `  Ops sign-in:          ${OPS_ADMIN_EMAIL} (OPS_ADMIN), password ${password.supplied ? '$OPS_ADMIN_PASSWORD (as you set it)' : `${password.value}   (generated for this run; OPS_ADMIN_PASSWORD sets one)`}
Sign in as the ops admin (operators, roles and the break-glass token: docs/ops.md):
     OPS_ACCESS=$(curl -s -X POST ${opsUrl}/auth/login -H 'content-type: application/json' -d ${body} \\
       | node -p 'JSON.parse(require("fs").readFileSync(0, "utf8")).data.accessToken')
     curl -s ${opsUrl}/auth/session -H "Authorization: Bearer $OPS_ACCESS"`;
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
 * payments and, under its own variable names, to the simulator, which accepts nothing else
 * (tools/topology lists them among payments' own secrets).
 */
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

/**
 * The environment every process inherits: this process's, less every secret some service is
 * given (tools/topology: each goes to the services that hold it, as in Kubernetes and
 * docker-compose, never to the others nor to the stand-ins) and less DEMO_ADMIN_PASSWORD and
 * OPS_ADMIN_PASSWORD, which no service reads. The payments tunables (MPESA_TIMEOUT_MS, MPESA_B2C_MAX_PER_SECOND, …),
 * MPESA_SIMULATOR_CALLBACK_DELAY_MS, RATE_SIMULATOR_KES_PER_USDC and the gateway's dashboard
 * tunables (ACCESS_TOKEN_TTL_SECONDS, LOGIN_ACCOUNT_FAILURES, …) stay: they pass through.
 */
function inheritedEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const key of [...secretNames(), 'DEMO_ADMIN_PASSWORD', 'OPS_ADMIN_PASSWORD', PLATFORM_PROCESS_ENV])
    delete env[key];
  return env;
}

/** Each stand-in's program (its package's executable). */
const STAND_IN_BIN: Record<StandInName, string> = {
  'mpesa-simulator': MPESA_SIMULATOR_BIN,
  'rate-simulator': RATE_SIMULATOR_BIN,
  'webhook-receiver': WEBHOOK_RECEIVER_BIN,
};

/** Settings for local runs only, beyond the topology's wiring. */
const LOCAL_SETTINGS: Partial<Record<ProcessName, NodeJS.ProcessEnv>> = {
  // Lets a developer point a webhook at the local receiver (http, loopback). Never deployed.
  webhooks: { ALLOW_INSECURE_WEBHOOKS: 'true' },
};

async function waitReady(url: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      if ((await fetch(url, { signal: AbortSignal.timeout(5_000) })).ok) return;
    } catch {}
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`${url} did not become ready within ${timeoutMs / 1000} s`);
}

const supervisor = new Supervisor({
  pipe:
    format === 'pretty'
      ? (child) => child.stdout && prettyInto(child.stdout, Boolean(process.stdout.isTTY))
      : undefined,
  onUnexpectedExit: (name, how) => {
    console.error(`[start] ${name} exited (${how}); stopping the platform`);
    shutdown(1);
  },
});

let exitCode: number | undefined;
/** Stops every process in order, then exits: `code`, or 1 when a process did not stop cleanly. */
function shutdown(code: number, why?: string): void {
  if (exitCode !== undefined) return;
  exitCode = code;
  console.log(why ? `\n[start] ${why}: stopping…` : '\n[start] stopping…');
  const since = Date.now();
  void supervisor.stopAll().then((clean) => {
    console.log(`[start] stopped in ${((Date.now() - since) / 1000).toFixed(1)} s`);
    process.exit(code !== 0 ? code : clean ? 0 : 1);
  });
}

/** A second stop request: every process of the platform's group (this one leads it) at once. */
function forceStop(reason: StopReason): void {
  console.error(`[start] second ${reason}: killing every process of the platform without waiting (exit 1)`);
  try {
    process.kill(-process.pid, 'SIGKILL');
  } catch {
    process.exit(1);
  }
}

/**
 * The partner dashboard's static files (services/dashboard, served by the gateway at
 * `/dashboard/`; docs/dashboard.md), built unless the last build is of these sources. It prints
 * the JavaScript the page loads against its budget. A failed build leaves the platform up: the
 * page then says how to build it.
 */
function buildDashboard(): Promise<string> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [path.join(root, 'services/dashboard/build.mjs'), '--quiet', '--if-stale'],
      { cwd: root, maxBuffer: 16 * 1024 * 1024 },
      (err, stdout, stderr) => {
        const said = `${stdout}${stderr}`
          .trim()
          .split('\n')
          .filter((line) => line.startsWith('[dashboard]'));
        resolve(
          err
            ? `not built (${said.join('; ') || err.message})`
            : said.join('; ').replace(/\[dashboard\] /g, ''),
        );
      },
    );
  });
}

async function main(): Promise<void> {
  onStopRequests({
    stop: (reason) => shutdown(0, reason === 'parent gone' ? 'the launcher is gone' : undefined),
    force: forceStop,
  });

  const under = (part: string) => (dataDir ? path.join(dataDir, part) : undefined);
  /** A store starting: in the platform once it is up (so a stop stops it), unless external. */
  const store = <T extends { kind: string; stop(): Promise<void> }>(
    name: StoreName,
    label: string,
    starting: Promise<T>,
  ) =>
    supervisor.starting(
      starting.then((started) => {
        if (started.kind !== 'external') supervisor.add(name, label, () => started.stop());
        return started;
      }),
    );
  const dashboardBuilt = buildDashboard();
  const [mongo, redis, chain] = await Promise.all([
    store('mongo', 'MongoDB', startLocalMongo(process.env, { dataDir: under('mongo') })),
    store('redis', 'Redis', startLocalRedis(process.env, { dataDir: under('redis') })),
    store('chain', 'Chain', startLocalChain(process.env, { stateDir: under('chain') })),
  ]);
  console.log(`[start] MongoDB: ${mongo.description}`);
  console.log(`[start] Redis: ${redis.description}`);
  console.log(`[start] Chain: ${chain.description}`);
  console.log(`[start] Dashboard: ${await dashboardBuilt}`);

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
  const opsToken = generated('OPS_TOKEN');
  const callbackToken = generated('PAYMENTS_CALLBACK_TOKEN');
  const mpesa = mpesaCredentials();
  /**
   * The value of each secret a service is given, by name (tools/topology says which service
   * holds which). DASHBOARD_TOKEN_KEYS only when set or kept in the data directory; otherwise the
   * gateway makes a key at start (outside production) and dashboard sign-ins end with it.
   */
  const secretValue: Record<string, () => string | undefined> = {
    INTERNAL_SIGNING_SECRET: () => generated('INTERNAL_SIGNING_SECRET'),
    API_KEY_PEPPER: () => generated('API_KEY_PEPPER'),
    OPS_TOKEN: () => opsToken,
    DASHBOARD_TOKEN_KEYS: () =>
      dataDir ? secret('DASHBOARD_TOKEN_KEYS', ed25519Pem) : process.env.DASHBOARD_TOKEN_KEYS,
    WEBHOOK_SECRET_KEY: () => secret('WEBHOOK_SECRET_KEY', () => randomBytes(32).toString('base64')),
    DETERMINATION_SIGNING_KEYS: signingKeys,
    // Kept in the data directory like the live keys, so test determinations of a kept run still
    // verify after a restart; otherwise as set, else the determinations service makes one at start.
    SANDBOX_SIGNING_KEYS: () =>
      dataDir ? secret('SANDBOX_SIGNING_KEYS', ed25519Pem) : process.env.SANDBOX_SIGNING_KEYS || undefined,
    PAYMENTS_CALLBACK_TOKEN: () => callbackToken,
    ...Object.fromEntries(MPESA_CREDENTIAL_ENV.map((name) => [name, () => mpesa[name]])),
    MONGO_URL: () => mongo.url,
    REDIS_URL: () => redis.url,
    CHAIN_RPC_URL: () => chain.rpcUrl,
    CHAIN_REGISTRY_ADDRESS: () => chain.registryAddress,
    CHAIN_PRIVATE_KEY: () => chain.ownerPrivateKey,
  };
  const values = new Map<string, string | undefined>();
  /** One value per name for the whole run (every service holds the same shared secret). */
  const givenValue = (name: string) => {
    if (!values.has(name)) {
      const make = secretValue[name];
      if (!make) throw new Error(`tools/topology gives a service ${name}, and npm start has no value for it`);
      values.set(name, make());
    }
    return values.get(name);
  };
  const inherited = inheritedEnv();

  // The stand-ins the services call: Daraja, accepting only this run's credentials, a Coinbase
  // exchange-rates API, and a partner's webhook endpoint. MPESA_SIMULATOR_CALLBACK_DELAY_MS (and
  // the simulator's other MPESA_SIMULATOR_* tunables) and RATE_SIMULATOR_KES_PER_USDC pass through.
  for (const standIn of STAND_INS) {
    const env =
      standIn.name === 'mpesa-simulator' ? { ...inherited, ...simulatorCredentials(mpesa) } : inherited;
    const { http } = standIn.ports;
    supervisor.spawnNode(
      standIn.name,
      [
        STAND_IN_BIN[standIn.name],
        '--host',
        http.localHost ?? '127.0.0.1',
        '--port',
        String(ports[standIn.name]?.http),
      ],
      { env, stopWithParent: true },
    );
  }
  // Each service's tunables (DETERMINATION_REPORT_DUE_SECONDS, PAYOUT_MAX_ATTEMPTS, the gateway's
  // dashboard settings, …) pass through from the environment; nothing here sets them, so the
  // services' defaults apply unless they are set.
  for (const spec of SERVICES) {
    const given: NodeJS.ProcessEnv = {};
    const secrets = [...spec.sharedSecrets, ...spec.ownSecrets, ...spec.optionalSecrets];
    for (const name of [...secrets, ...Object.keys(storeEnv(spec.name))]) {
      const value = givenValue(name);
      if (value !== undefined) given[name] = value;
    }
    const env: NodeJS.ProcessEnv = {
      ...inherited,
      NODE_ENV: process.env.NODE_ENV ?? 'development',
      ...given,
      ...localWiring(spec.name, ports),
      ...LOCAL_SETTINGS[spec.name],
    };
    supervisor.spawnNode(spec.name, serviceNodeArgs(path.join(root, spec.main)), {
      env,
    });
  }
  await Promise.all(
    [...SERVICES, ...STAND_INS].flatMap((spec) =>
      Object.entries(spec.ports).flatMap(([port, listener]) =>
        listener.readyPath ? [waitReady(`${localUrl(ports, spec.name, port)}${listener.readyPath}`)] : [],
      ),
    ),
  );

  const gatewayPort = ports.gateway?.http;
  const opsPort = ports.gateway?.ops;
  const webhooksPort = ports.webhooks?.http;
  const policyPort = ports.policy?.http;
  const determinationsPort = ports.determinations?.http;
  const paymentsPort = ports.payments?.http;
  const callbacksPort = ports.payments?.callbacks;
  const receiverPort = ports['webhook-receiver']?.http;
  const rateSimulatorPort = ports['rate-simulator']?.http;
  const mpesaSimulatorPort = ports['mpesa-simulator']?.http;

  const gatewayUrl = `http://127.0.0.1:${gatewayPort}`;
  const password = personPassword('DEMO_ADMIN_PASSWORD', DEMO_ADMIN_EMAIL);
  const demo = await demoOrganization(gatewayUrl, password.value).catch((err: unknown) => ({
    status: 0,
    problem: err instanceof Error ? err.message : String(err),
  }));
  if ('problem' in demo) console.warn(`[start] the demo organization was not registered: ${demo.problem}`);
  const apiKey = 'organization' in demo ? demo.organization.apiKey : '<apiKey>';
  const opsBearer = `Authorization: Bearer ${shown('OPS_TOKEN', opsToken)}`;
  const opsUrl = `http://127.0.0.1:${opsPort}/ops`;
  const opsPassword = personPassword('OPS_ADMIN_PASSWORD', OPS_ADMIN_EMAIL);
  const opsProblem = await opsAdmin(opsUrl, opsToken, opsPassword.value).catch(
    (err: unknown) => `not created (${err instanceof Error ? err.message : String(err)})`,
  );
  if (opsProblem) console.warn(`[start] the ops admin: ${opsProblem}`);

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
  Partner dashboard:    ${gatewayUrl}/dashboard/   (in a browser: sign in as ${DEMO_ADMIN_EMAIL}, password below)
  Ops API:              http://127.0.0.1:${opsPort}/ops   (break-glass: ${opsBearer}; refused in production)
  Metrics:              http://127.0.0.1:${opsPort}/ops/metrics   (Prometheus, same token; each service: /metrics on its port)
  Queue dashboard:      http://127.0.0.1:${opsPort}/ops/queues/sign-in   (in a browser: ${OPS_ADMIN_EMAIL} and its password,
                        see "Ops sign-in" below; break-glass: any user name, the ops token as password;
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
                        PUT /_secret {"secret": "..."} with the secret returned by PUT /api/organizations/me/webhook;
                        another organization: its own path, PUT /_secret {"secret": "...", "path": "/hooks/org-b"})
${demoSection(gatewayUrl, demo, password)}
${opsSection(opsUrl, opsProblem, opsPassword)}
Try: curl -s ${gatewayUrl}/api/organizations/me -H 'x-api-key: ${apiKey}'
     curl -s ${gatewayUrl}/api/.well-known/jwks.json
     # New to the API? docs/getting-started.md walks a sandbox organization (environment: sandbox)
     # from registration to a verified determination, with no ops step; the same journey through
     # the SDK, in one program (examples/sandbox-journey/README.md):
     npm start -w examples/sandbox-journey -- --base-url ${gatewayUrl}/api
     # Register another organization (adminEmail and adminPassword add its first dashboard user):
     curl -s -X POST ${gatewayUrl}/api/auth/register-organization \\
       -H 'content-type: application/json' -d '{"name":"Nakuru Growers Cooperative","type":"COOPERATIVE","countryCode":"KE"}'
     # Issue a determination, as an index pipeline would (the policyNumber of an ACTIVE crop policy):
     curl -s -X POST http://127.0.0.1:${opsPort}/ops/determinations \\
       -H "${opsBearer}" -H 'content-type: application/json' -d '${exampleIngestion}'
     # Tier 2 (premiums by M-Pesa, payouts to farmers) on a sandbox organization, the insurer's
     # tier change with the ops token above included: docs/getting-started.md, "Tier 2 in the sandbox".
Press Ctrl-C to stop.`);
}

if (!isPlatformProcess()) runPlatformInOwnGroup(__filename, process.argv.slice(2));
else
  main().catch((err) => {
    // A stop during start-up makes what was still starting fail: not an error of its own.
    if (supervisor.isStopping) return;
    console.error(`[start] ${err instanceof Error ? err.message : err}`);
    shutdown(1);
  });
