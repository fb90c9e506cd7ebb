/**
 * The platform as `npm start` runs it, for the benchmarks that drive it end to end: each service
 * its own process (optionally several replicas of each worker service, as Kubernetes would run
 * them) on one MongoDB, one Redis and one local chain; the M-Pesa and rate simulators when
 * payments runs. Also the partners (organizations, their keys, their webhook receivers) and the
 * CPU bookkeeping every end-to-end figure is quoted with.
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { startLocalMongo, USAGE_KINDS } from '@parametric/embedded-mongo';
import { startLocalChain } from '@parametric/local-chain';
import { freePort } from '@parametric/local-process';
import { startLocalRedis } from '@parametric/local-redis';
import { type MpesaSimulator, startMpesaSimulator } from '@parametric/mpesa-simulator';
import { startRateSimulator } from '@parametric/rate-simulator';
import { startWebhookReceiver, type WebhookReceiver } from '@parametric/webhook-receiver';
import { Redis } from 'ioredis';
import mongoose from 'mongoose';
import { generateSigningKeyPem } from '../../services/determinations/src/signing/keys';
import {
  json,
  pidListeningOn,
  processCpuMicros,
  startNamed,
  startProcess,
  stopProcesses,
  type Wrap,
  waitReady,
} from './run';
import { type ServiceFront, startServiceFront } from './service-front';

export const DAY = 86_400_000;

/** The Daraja credentials the simulator and payments share in a benchmark. */
export const MPESA = {
  consumerKey: 'bench-consumer-key',
  consumerSecret: 'bench-consumer-secret-0123456789',
  shortcode: '174379',
  passkey: 'bench-passkey-0123456789abcdef',
  b2cShortcode: '600000',
};

export const B2C_PATH = '/mpesa/b2c/v3/paymentrequest';

/**
 * The services' log level in every benchmark: `info` unless `BENCH_LOG_LEVEL` says otherwise, the
 * level `npm start` and the staging and prod overlays run, so each request's completion line is
 * written as it is there (to /dev/null: bench/support/run.ts ignores the services' stdout).
 * The benchmarks ran the services at `warn` until 2026-11-29, which hid what that line cost
 * (docs/performance.md, "Log lines without pino's redaction paths").
 */
export const BENCH_LOG_LEVEL = process.env.BENCH_LOG_LEVEL ?? 'info';

/** Whether services at `BENCH_LOG_LEVEL` write a line for each request they complete. */
export const ACCESS_LINES = ['info', 'debug', 'trace'].includes(BENCH_LOG_LEVEL);

/**
 * `BENCH_EDGE_LINES_ONLY=1`: on the policy read, only the edge writes a completion line: the
 * policy service runs at `warn` and the duty floor's service writes none. Not how the platform
 * runs: what one line per request instead of one per hop would save (docs/performance.md, "The
 * policy read's duty floor").
 */
export const EDGE_LINES_ONLY = process.env.BENCH_EDGE_LINES_ONLY === '1';

/** What every service of a benchmark's platform is given: the stores, its log level, one internal secret. */
export function serviceEnv(
  mongoUrl: string,
  redisUrl: string,
  internalSigningSecret = randomBytes(24).toString('hex'),
): NodeJS.ProcessEnv {
  return {
    ...process.env,
    LOG_LEVEL: BENCH_LOG_LEVEL,
    MONGO_URL: mongoUrl,
    REDIS_URL: redisUrl,
    INTERNAL_SIGNING_SECRET: internalSigningSecret,
  };
}

/**
 * The gateway of a hot-path benchmark (bench/support/key-path.ts, bench/support/policy-read.ts),
 * pointed at the services in `calls` (their URL variables). Every request still goes through the
 * Redis limiters; their budgets are just too big to hit (bench/gateway.ts's timing comparison
 * makes hundreds of failed sign-ins on purpose).
 */
export function startBenchGateway(
  shared: NodeJS.ProcessEnv,
  options: {
    gatewayPort: number;
    opsPort: number;
    opsToken: string;
    pepper: string;
    calls: Record<string, string>;
    wrap?: Wrap;
  },
): ChildProcess {
  const unlimited = '1000000000';
  return startNamed(
    'services/gateway/src/main.ts',
    'gateway',
    {
      ...shared,
      GATEWAY_PORT: String(options.gatewayPort),
      OPS_PORT: String(options.opsPort),
      OPS_TOKEN: options.opsToken,
      API_KEY_PEPPER: options.pepper,
      ...options.calls,
      RATE_LIMIT_POINTS: unlimited,
      REGISTRATION_LIMIT_POINTS: unlimited,
      LOGIN_ACCOUNT_FAILURES: unlimited,
      LOGIN_IP_FAILURES: unlimited,
      ANONYMOUS_LIMIT_POINTS: unlimited,
    },
    options.wrap,
  );
}

/** The services a Kubernetes deployment runs more than one process of (issue 24, target 4). */
export const SCALED_OUT = ['policy', 'determinations', 'webhooks', 'payments'] as const;
export type ScaledOutService = (typeof SCALED_OUT)[number];

export interface PlatformOptions {
  /** Processes each of policy, determinations, webhooks and payments run as (default 1). */
  replicas?: number;
  /**
   * Which of those services get `replicas` processes (default all four); the others run one.
   * Doubling one service alone tells its own growth from the machine's (more processes on the
   * same cores).
   */
  replicated?: ReadonlyArray<ScaledOutService>;
  /** Payments too, with the M-Pesa and rate simulators (default false). */
  payments?: boolean;
  /** `MPESA_B2C_MAX_PER_SECOND` given to payments (default: the service's own, 20). */
  b2cPerSecond?: number;
  /**
   * The M-Pesa simulator's spike arrest at `b2cPerSecond`, over all its routes (default true).
   * Off for a bench whose load is not paced by the platform: premium prompts are sent as
   * partners ask for them (bench/payments.ts).
   */
  spikeArrest?: boolean;
  /** Extra environment for every service (e.g. shorter sweep intervals). */
  env?: Record<string, string>;
}

export interface Partner {
  id: string;
  apiKey: string;
  receiver: WebhookReceiver;
}

export interface Platform {
  /** `http://127.0.0.1:<gateway>/api` and the ops door `…/ops`, with the ops token's header. */
  api: string;
  ops: string;
  opsAuth: { authorization: string };
  redisUrl: string;
  /** The services' BullMQ key prefix (the platform's default). */
  redisPrefix: string;
  replicas: number;
  b2cPerSecond: number;
  simulator?: MpesaSimulator;
  policyDb: mongoose.Connection;
  paymentsDb: mongoose.Connection;
  /** Every platform process (services, each replica on its own, MongoDB, Redis) by name. */
  pids: Record<string, number | undefined>;
  /** CPU µs each platform process has used so far. */
  cpuNow(): Record<string, number | undefined>;
  /** The commands MongoDB and Redis have run so far (`storeCommands`). */
  storeCommandsNow(): Promise<StoreCommands>;
  /** Organizations with a webhook receiver each; Tier 2 ones KYB-verified and on the settlement tier. */
  registerPartners(count: number, options?: { tier2?: boolean; name?: string }): Promise<Partner[]>;
  stop(): Promise<void>;
}

/** The service name of a process name (`determinations#2` → `determinations`). */
export const serviceOf = (processName: string) => processName.replace(/#\d+$/, '');

/** µs of CPU per unit of work, per process, between two `cpuNow()` readings. */
export function cpuPer(
  before: Record<string, number | undefined>,
  after: Record<string, number | undefined>,
  units: number,
): Record<string, number> {
  const cpu: Record<string, number> = {};
  for (const [name, end] of Object.entries(after)) {
    const start = before[name];
    if (start !== undefined && end !== undefined) cpu[name] = (end - start) / units;
  }
  return cpu;
}

/** What the stores have run since they started: MongoDB per `namespace kind`, Redis per command. */
export interface StoreCommands {
  mongo: Record<string, number>;
  redis: Record<string, number>;
}

/**
 * The commands the platform's stores have run since they started: MongoDB's per `namespace kind`
 * (`payments.payouts update`) from its `top` (tools/embedded-mongo, as mongod), Redis's per
 * command from `INFO commandstats`. What a unit of work costs in round trips, whatever the
 * machine's speed. The bench's own reads (its progress polls, these readings) are among them.
 */
export async function storeCommands(
  connection: mongoose.Connection,
  redisUrl: string,
): Promise<StoreCommands> {
  const { totals } = await connection.getClient().db('admin').command({ top: 1 });
  const mongo: Record<string, number> = {};
  for (const [namespace, usage] of Object.entries(
    totals as Record<string, Record<string, { count: number }>>,
  )) {
    if (namespace === 'note') continue;
    for (const kind of USAGE_KINDS) {
      const count = Number(usage[kind]?.count ?? 0);
      if (count > 0) mongo[`${namespace} ${kind}`] = count;
    }
  }
  const client = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
  const redis: Record<string, number> = {};
  try {
    await client.connect();
    // `cmdstat_evalsha:calls=12,usec=…`: one line per command run since start.
    for (const [, name, calls] of (await client.info('commandstats')).matchAll(
      /^cmdstat_([^:]+):calls=(\d+)/gm,
    )) {
      redis[name as string] = Number(calls);
    }
  } finally {
    client.disconnect();
  }
  return { mongo, redis };
}

/** Commands per unit of work between two readings of one store, largest first. */
export function commandsPer(
  before: Record<string, number>,
  after: Record<string, number>,
  units: number,
): Array<[string, number]> {
  return Object.entries(after)
    .map(([key, n]): [string, number] => [key, (n - (before[key] ?? 0)) / units])
    .filter(([, n]) => n > 0)
    .sort((a, b) => b[1] - a[1]);
}

/** Both stores' commands per unit of work between two `storeCommandsNow()` readings. */
export function storeCommandsPer(before: StoreCommands, after: StoreCommands, units: number) {
  return {
    mongo: commandsPer(before.mongo, after.mongo, units),
    redis: commandsPer(before.redis, after.redis, units),
  };
}
export type StoreCommandsPer = ReturnType<typeof storeCommandsPer>;

/**
 * `12.3 MongoDB commands (payments.payouts update 4.0, …), 20.1 Redis commands (evalsha 9.0, …)`:
 * each store's total and its largest parts (BENCH_COMMAND_PARTS of them, 8 by default).
 */
export function commandsLine(
  per: StoreCommandsPer,
  parts = Number(process.env.BENCH_COMMAND_PARTS ?? 8),
): string {
  const line = (name: string, of: Array<[string, number]>) => {
    const total = of.reduce((sum, [, n]) => sum + n, 0);
    const largest = of
      .slice(0, parts)
      .map(([key, n]) => `${key} ${n.toFixed(2)}`)
      .join(', ');
    return `${total.toFixed(1)} ${name} commands (${largest}${of.length > parts ? ', …' : ''})`;
  };
  return `${line('MongoDB', per.mongo)}, ${line('Redis', per.redis)}`;
}

/** Per-process figures summed per service (replicas together). */
export function byService(cpu: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [name, v] of Object.entries(cpu)) out[serviceOf(name)] = (out[serviceOf(name)] ?? 0) + v;
  return out;
}

export const sumOf = (cpu: Record<string, number>) => Object.values(cpu).reduce((sum, v) => sum + v, 0);

export async function startPlatform(options: PlatformOptions = {}): Promise<Platform> {
  const replicas = options.replicas ?? 1;
  const b2cPerSecond = options.b2cPerSecond ?? 20;
  const [mongo, redis, chain] = await Promise.all([startLocalMongo(), startLocalRedis(), startLocalChain()]);
  const simulator = options.payments
    ? // Daraja's spike arrest at the very limit payments paces itself to: a request beyond it is
      // refused (THROTTLED, services/payments/src/provider/errors.ts) and retried later, so a
      // pacing that bursts above the limit shows up as a slower pace, as it would in production.
      await startMpesaSimulator({
        ...MPESA,
        callbackDelayMs: 50,
        maxRequestsPerSecond: options.spikeArrest === false ? undefined : b2cPerSecond,
      })
    : undefined;
  const rates = options.payments ? await startRateSimulator() : undefined;
  const children: ChildProcess[] = [];
  const names: string[] = [];
  const partners: Partner[] = [];
  const policyDb = mongoose.createConnection(mongo.url, { dbName: 'policy' });
  const paymentsDb = mongoose.createConnection(mongo.url, { dbName: 'payments' });
  const fronts: ServiceFront[] = [];
  const stop = async () => {
    await Promise.all(partners.map((p) => p.receiver.close()));
    await Promise.all([policyDb.close(), paymentsDb.close()]).catch(() => undefined);
    await stopProcesses(children);
    await Promise.all(fronts.map((f) => f.close()));
    await Promise.all([simulator?.close(), rates?.close()]);
    await Promise.all([mongo.stop(), redis.stop(), chain.stop()]);
  };
  try {
    // Asked for together, as the other benchmarks do.
    const perReplica = options.payments ? 5 : 3;
    const all = await Promise.all(Array.from({ length: 2 + replicas * perReplica }, () => freePort()));
    const [gatewayPort, opsPort] = all;
    const ports = (k: number) =>
      Array.from({ length: replicas }, (_, r) => all[2 + r * perReplica + k] as number);
    const policyPorts = ports(0);
    const determinationsPorts = ports(1);
    const webhooksPorts = ports(2);
    const paymentsPorts = options.payments ? ports(3) : [];
    const callbackPorts = options.payments ? ports(4) : [];
    const opsToken = randomBytes(24).toString('hex');
    const shared = { ...serviceEnv(mongo.url, redis.url), ...options.env };
    // One key per service, shared by its replicas (as one Kubernetes Secret would be).
    const webhookSecretKey = randomBytes(32).toString('base64');
    const signingKeys = generateSigningKeyPem();
    const callbackToken = randomBytes(16).toString('hex');
    const url = (port: number | undefined) => `http://127.0.0.1:${port}`;
    const startOne = (name: string, script: string, env: NodeJS.ProcessEnv) => {
      children.push(startProcess(script, { ...shared, ...env }));
      names.push(name);
    };
    const replicated = new Set<string>(options.replicated ?? SCALED_OUT);
    /** The ports of the replicas started: a service not replicated has its first only. */
    const started = (service: string, servicePorts: number[]) =>
      replicated.has(service) ? servicePorts : servicePorts.slice(0, 1);
    for (let r = 0; r < replicas; r++) {
      /** Replica `r` of `service`, named `service#n` only where the service runs more than one. */
      const start = (service: string, script: string, env: NodeJS.ProcessEnv) => {
        const doubled = replicas > 1 && replicated.has(service);
        if (r === 0 || doubled) startOne(doubled ? `${service}#${r + 1}` : service, script, env);
      };
      /** The replica of `service` of this rank, or its only one. */
      const peer = (service: string, servicePorts: number[]) => {
        const up = started(service, servicePorts);
        return up[r % up.length];
      };
      start('webhooks', 'services/webhooks/src/main.ts', {
        WEBHOOKS_HOST: '127.0.0.1',
        WEBHOOKS_PORT: String(webhooksPorts[r]),
        WEBHOOK_SECRET_KEY: webhookSecretKey,
        ALLOW_INSECURE_WEBHOOKS: 'true',
      });
      start('policy', 'services/policy/src/main.ts', {
        POLICY_HOST: '127.0.0.1',
        POLICY_PORT: String(policyPorts[r]),
        CHAIN_RPC_URL: chain.rpcUrl,
        CHAIN_REGISTRY_ADDRESS: chain.registryAddress,
        CHAIN_PRIVATE_KEY: chain.ownerPrivateKey,
      });
      // Each replica calls the policy replica of its own rank: the spread a Service would give.
      start('determinations', 'services/determinations/src/main.ts', {
        DETERMINATIONS_HOST: '127.0.0.1',
        DETERMINATIONS_PORT: String(determinationsPorts[r]),
        POLICY_URL: url(peer('policy', policyPorts)),
        DETERMINATION_SIGNING_KEYS: signingKeys,
      });
      if (simulator && rates)
        start('payments', 'services/payments/src/main.ts', {
          PAYMENTS_HOST: '127.0.0.1',
          PAYMENTS_PORT: String(paymentsPorts[r]),
          PAYMENTS_CALLBACK_HOST: '127.0.0.1',
          PAYMENTS_CALLBACK_PORT: String(callbackPorts[r]),
          PAYMENTS_CALLBACK_BASE_URL: url(callbackPorts[r]),
          PAYMENTS_CALLBACK_TOKEN: callbackToken,
          POLICY_URL: url(peer('policy', policyPorts)),
          DETERMINATIONS_URL: url(peer('determinations', determinationsPorts)),
          MPESA_BASE_URL: simulator.url,
          MPESA_CONSUMER_KEY: MPESA.consumerKey,
          MPESA_CONSUMER_SECRET: MPESA.consumerSecret,
          MPESA_SHORTCODE: MPESA.shortcode,
          MPESA_PASSKEY: MPESA.passkey,
          MPESA_B2C_SHORTCODE: MPESA.b2cShortcode,
          MPESA_INITIATOR_NAME: 'bench',
          MPESA_SECURITY_CREDENTIAL: 'bench-security-credential',
          RATE_SOURCE_URL: rates.url,
          MPESA_B2C_MAX_PER_SECOND: String(b2cPerSecond),
        });
    }
    // The gateway takes one URL per service (services/gateway/src/config.ts): in a cluster, a
    // Service in front of the replicas, which spreads its connections over them. Here a front of
    // the bench's does the same (bench/support/service-front.ts), so each replica takes requests,
    // writes, and relays its own writes, as in a cluster; what replicas must prove is in the work
    // they share behind it too (queue workers, outbox relays, sweeps), which every replica runs.
    const front = async (service: string, servicePorts: number[]) => {
      const up = started(service, servicePorts);
      if (up.length < 2) return up[0];
      const f = await startServiceFront(up);
      fronts.push(f);
      return f.port;
    };
    startOne('gateway', 'services/gateway/src/main.ts', {
      GATEWAY_PORT: String(gatewayPort),
      OPS_PORT: String(opsPort),
      OPS_TOKEN: opsToken,
      API_KEY_PEPPER: randomBytes(24).toString('hex'),
      POLICY_URL: url(await front('policy', policyPorts)),
      DETERMINATIONS_URL: url(await front('determinations', determinationsPorts)),
      WEBHOOKS_URL: url(await front('webhooks', webhooksPorts)),
      ...(options.payments ? { PAYMENTS_URL: url(await front('payments', paymentsPorts)) } : {}),
      RATE_LIMIT_POINTS: '1000000000',
      PAYMENTS_INITIATE_LIMIT_POINTS: '1000000000',
      // The partners of a day are registered from one address (12 in the replicas mode).
      REGISTRATION_LIMIT_POINTS: '1000',
    });
    // Up to 5 minutes: a loaded machine starting a dozen processes takes longer than run.ts's 60 s.
    const ready = [
      gatewayPort,
      ...started('policy', policyPorts),
      ...started('determinations', determinationsPorts),
      ...started('webhooks', webhooksPorts),
      ...started('payments', paymentsPorts),
    ];
    for (let attempt = 1; ; attempt++) {
      try {
        await waitReady(ready);
        break;
      } catch (err) {
        if (attempt === 5) throw err;
      }
    }
    await Promise.all([policyDb.asPromise(), paymentsDb.asPromise()]);
    const pids: Record<string, number | undefined> = {
      ...Object.fromEntries(names.map((name, i) => [name, children[i]?.pid])),
      mongo: pidListeningOn(Number(new URL(mongo.url).port)),
      redis: pidListeningOn(Number(new URL(redis.url).port)),
    };
    const api = `${url(gatewayPort)}/api`;
    const ops = `${url(opsPort)}/ops`;
    const opsAuth = { authorization: `Bearer ${opsToken}` };
    return {
      api,
      ops,
      opsAuth,
      redisUrl: redis.url,
      redisPrefix: 'platform',
      replicas,
      b2cPerSecond,
      simulator,
      policyDb,
      paymentsDb,
      pids,
      cpuNow: () =>
        Object.fromEntries(Object.entries(pids).map(([name, pid]) => [name, processCpuMicros(pid)])),
      storeCommandsNow: () => storeCommands(policyDb, redis.url),
      async registerPartners(count, { tier2 = false, name = tier2 ? 'Tier 2 Co-op' : 'Drought Co-op' } = {}) {
        const made: Partner[] = [];
        for (let i = 0; i < count; i++) {
          const { organization } = await json<{ organization: { id: string; apiKey: string } }>(
            `${api}/auth/register-organization`,
            {
              method: 'POST',
              body: JSON.stringify({
                name: `${name} ${partners.length}`,
                type: 'COOPERATIVE',
                countryCode: 'KE',
              }),
            },
          );
          if (tier2)
            for (const [path, body] of [
              ['kyb', { status: 'VERIFIED' }],
              ['service-tier', { serviceTier: 'DETERMINATION_AND_SETTLEMENT' }],
            ] as const)
              await json(`${ops}/organizations/${organization.id}/${path}`, {
                method: 'POST',
                headers: opsAuth,
                body: JSON.stringify(body),
              });
          const receiver = await startWebhookReceiver();
          const partner = { id: organization.id, apiKey: organization.apiKey, receiver };
          partners.push(partner);
          made.push(partner);
          const { secret } = await json<{ secret: string }>(`${api}/organizations/me/webhook`, {
            method: 'PUT',
            headers: { 'x-api-key': organization.apiKey },
            body: JSON.stringify({ url: receiver.url }),
          });
          receiver.setSecret(secret);
        }
        return made;
      },
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** Farmers made so far by this process: their numbers and national ids stay unique. */
let farmerSerial = 0;

export interface BenchPolicy {
  id: string;
  policyNumber: string;
  organizationId: string;
}

export interface PolicySeed {
  /** Owners, in turn. */
  organizations: string[];
  count: number;
  /** Makes policy numbers unique across calls (e.g. the round). */
  tag: string;
  /** Tier 2 (`DETERMINATION_AND_SETTLEMENT`, each with a farmer the simulator pays) or Tier 1. */
  tier2?: boolean;
  status?: 'ACTIVE' | 'PENDING';
}

/**
 * Policies written straight into the policy service's collection (and, for Tier 2, their farmers
 * with a phone number each): the setup of a day, not what is measured (selling and activating
 * them on chain is bench:policy). 1,000 a write.
 */
export async function insertPolicies(db: mongoose.Connection, seed: PolicySeed): Promise<BenchPolicy[]> {
  const now = Date.now();
  const status = seed.status ?? 'ACTIVE';
  const policies: BenchPolicy[] = [];
  const farmers: Record<string, unknown>[] = [];
  const docs = Array.from({ length: seed.count }, (_, i) => {
    const organizationId = seed.organizations[i % seed.organizations.length] as string;
    const id = randomUUID();
    const policyNumber = `KE-${seed.tag}-${i.toString(36).toUpperCase().padStart(6, '0')}`;
    policies.push({ id, policyNumber, organizationId });
    const farmerId = randomUUID();
    if (seed.tier2)
      farmers.push({
        _id: farmerId,
        organizationId,
        firstName: 'Bench',
        lastName: `Farmer ${seed.tag} ${i}`,
        // 2547 3XXXXXXX: none of the simulator's scripted numbers (tools/mpesa-simulator/src/outcomes.ts).
        phoneNumber: `+2547${30_000_000 + farmerSerial}`,
        nationalId: `BENCH${String(farmerSerial++).padStart(8, '0')}`,
        region: 'Nakuru',
        location: null,
        kycStatus: 'APPROVED',
        createdAt: new Date(now - DAY),
        updatedAt: new Date(now - DAY),
      });
    const active = status === 'ACTIVE';
    return {
      _id: id,
      organizationId,
      policyNumber,
      farmerId,
      productType: 'CROP',
      plotId: randomUUID(),
      herdId: null,
      season: null,
      coverageType: 'DROUGHT',
      durationDays: 180,
      currency: 'KES',
      exponent: 2,
      sumInsuredMinor: seed.tier2 ? 5_000_000n : BigInt(5_000_000 + i),
      premiumMinor: seed.tier2 ? 147_900n : 250_000n,
      rateTableVersion: 'bench',
      settlementMode: seed.tier2 ? 'DETERMINATION_AND_SETTLEMENT' : 'DETERMINATION',
      status,
      premiumPaid: active,
      ...(active
        ? {
            coverStartsAt: new Date(now - 10 * DAY),
            coverEndsAt: new Date(now + 170 * DAY),
            ...(seed.tier2
              ? {}
              : {
                  onChainPolicyId: String(i + 1),
                  activatedAt: new Date(now - 10 * DAY),
                  activatedVia: 'PARTNER',
                }),
          }
        : {}),
      damageAssessments: [],
      ...(seed.tier2 ? { payouts: [] } : {}),
      outbox: [],
      outboxPending: false,
      createdAt: new Date(now - 11 * DAY),
      updatedAt: new Date(now - 10 * DAY),
    };
  });
  for (let i = 0; i < farmers.length; i += 1_000)
    await db.collection('farmers').insertMany(farmers.slice(i, i + 1_000) as never[]);
  for (let i = 0; i < docs.length; i += 1_000)
    await db.collection('policies').insertMany(docs.slice(i, i + 1_000) as never[]);
  return policies;
}
