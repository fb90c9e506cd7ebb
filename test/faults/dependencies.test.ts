import type { ChildProcess } from 'node:child_process';
import { freePort } from '@parametric/local-process';
import { startLocalRedis } from '@parametric/local-redis';
import { createProducer, policyActivationJobId } from '@parametric/queue';
import {
  connectRedis,
  eventually,
  type TestChain,
  testChain,
  testMongoUrl,
  testRedisUrl,
  uniqueDatabaseName,
  uniqueRedisPrefix,
} from '@parametric/test-harness';
import { startWebhookReceiver, type WebhookReceiver } from '@parametric/webhook-receiver';
import { Queue } from 'bullmq';
import mongoose from 'mongoose';
import { call, gatewayProcessEnv, OPS_TOKEN } from '../../services/gateway/test/support';
import {
  cropPurchase,
  type PolicyPlatform,
  type SellableOrg,
  sellableOrg,
} from '../../services/policy/test/support';
import {
  activationOutcome,
  anvilWithRegistry,
  connectReceiver,
  embeddedMongod,
  faultTable,
  kill9,
  redisServerOn,
  SIGNING,
  service,
  type Timed,
  timedCall,
  waitReady,
  webhooksEnv,
  wiring,
} from './support';

/**
 * The platform's dependencies failing under partner traffic, with real processes and real
 * signals: Redis killed (and back empty on its port), Redis hung, MongoDB hung, the chain
 * stopped. What partners saw while it lasted, and after recovery what was lost or duplicated.
 */
jest.setTimeout(240_000);
const table = faultTable();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Stack {
  gatewayPort: number;
  policyPort: number;
  webhooksPort?: number;
  /** What `sellableOrg` needs, over the gateway process's ports. */
  platform: PolicyPlatform;
  policyDb: mongoose.Connection;
  stop(): Promise<void>;
}

/** A gateway process and a policy process (and a webhooks process), on the given dependencies. */
async function startStack(deps: {
  mongoUrl: string;
  redisUrl: string;
  chain: TestChain;
  prefix: string;
  gatewayEnv?: Record<string, string>;
  policyEnv?: Record<string, string>;
  webhooks?: boolean;
}): Promise<Stack> {
  const gatewayPort = await freePort();
  const policyPort = await freePort();
  const webhooksPort = deps.webhooks ? await freePort() : undefined;
  const gatewayDbName = uniqueDatabaseName('faults_deps_gw');
  const policyDbName = uniqueDatabaseName('faults_deps_policy');
  const webhooksDbName = uniqueDatabaseName('faults_deps_wh');
  const baseGatewayEnv = await gatewayProcessEnv(gatewayPort, gatewayDbName);
  const gwEnv = {
    ...baseGatewayEnv,
    MONGO_URL: deps.mongoUrl,
    REDIS_URL: deps.redisUrl,
    REDIS_PREFIX: deps.prefix,
    ...wiring('gateway', { policy: { http: policyPort } }),
    RATE_LIMIT_POINTS: '100000',
    OUTBOX_POLL_MS: '200',
    ...deps.gatewayEnv,
  };
  const opsPort = Number(baseGatewayEnv.OPS_PORT);
  const policyEnv = {
    ...wiring('policy', { policy: { http: policyPort } }),
    MONGO_URL: deps.mongoUrl,
    MONGO_DB: policyDbName,
    REDIS_URL: deps.redisUrl,
    REDIS_PREFIX: deps.prefix,
    INTERNAL_SIGNING_SECRET: SIGNING,
    CHAIN_RPC_URL: deps.chain.rpcUrl,
    CHAIN_REGISTRY_ADDRESS: deps.chain.registryAddress,
    CHAIN_PRIVATE_KEY: deps.chain.privateKey,
    OUTBOX_POLL_MS: '200',
    ACTIVATION_RETRY_BASE_MS: '200',
    ACTIVATION_RETRY_MAX_MS: '1000',
    SWEEP_INTERVAL_MS: '1000',
    WORKER_LOCK_MS: '3000',
    CHAIN_TIMEOUT_MS: '2000',
    ...deps.policyEnv,
  };
  const children: ChildProcess[] = [service('gateway', gwEnv), service('policy', policyEnv)];
  if (webhooksPort) {
    const env = webhooksEnv(webhooksPort, webhooksDbName, deps.redisUrl, deps.prefix);
    children.push(service('webhooks', { ...env, MONGO_URL: deps.mongoUrl }));
  }
  const policyDb = mongoose.createConnection(deps.mongoUrl, { dbName: policyDbName });
  const stop = async () => {
    for (const child of children) await kill9(child);
    for (const name of [gatewayDbName, policyDbName, webhooksDbName]) {
      const db = policyDb.useDb(name);
      await db.dropDatabase().catch(() => undefined);
    }
    await policyDb.close();
  };
  try {
    await policyDb.asPromise();
    await Promise.all([gatewayPort, policyPort, ...(webhooksPort ? [webhooksPort] : [])].map(waitReady));
  } catch (err) {
    await stop();
    throw err;
  }
  const partnerUrl = `http://127.0.0.1:${gatewayPort}/api`;
  const opsUrl = `http://127.0.0.1:${opsPort}/ops`;
  let registrations = 0;
  const gateway = {
    api: (method: string, path: string, options = {}) => call(method, `${partnerUrl}${path}`, options),
    ops: (method: string, path: string, options: { body?: unknown } = {}) =>
      call(method, `${opsUrl}${path}`, { ...options, headers: { authorization: `Bearer ${OPS_TOKEN}` } }),
    register: async () => {
      registrations++;
      const reply = await call('POST', `${partnerUrl}/auth/register-organization`, {
        body: { name: `Dependency Co-op ${registrations}`, type: 'COOPERATIVE', countryCode: 'KE' },
      });
      if (reply.status !== 201) throw new Error(`registration failed: ${JSON.stringify(reply.body)}`);
      const organization = reply.body.data.organization;
      return {
        id: organization.id,
        apiKey: organization.apiKey,
        apiSecret: organization.apiSecret,
        organization,
      };
    },
  };
  return {
    gatewayPort,
    policyPort,
    webhooksPort,
    platform: { gateway } as unknown as PolicyPlatform,
    policyDb,
    stop,
  };
}

/**
 * A partner selling and (Tier 1) activating policies one after another until `stop()`: each
 * purchase has its own sum insured (`base + n`), so every attempt is found again afterwards,
 * and with `keyOf` its own Idempotency-Key.
 */
function partnerTraffic(
  gatewayPort: number,
  org: SellableOrg,
  base: number,
  keyOf?: (sumInsured: number) => string,
) {
  const url = `http://127.0.0.1:${gatewayPort}/api`;
  const answers: Array<Timed & { kind: 'purchase' | 'activate' | 'read'; at: number }> = [];
  const purchases: Array<{ sumInsured: number; answer: Timed; policyId?: string }> = [];
  const activated: string[] = [];
  let running = true;
  const loop = (async () => {
    for (let n = 0; running; n++) {
      const sumInsured = base + n;
      const at = Date.now();
      const bought = await timedCall(`${url}/policies/purchase`, {
        method: 'POST',
        key: org.apiKey,
        body: cropPurchase(org, { sumInsured }),
        ...(keyOf ? { headers: { 'Idempotency-Key': keyOf(sumInsured) } } : {}),
      });
      answers.push({ ...bought, kind: 'purchase', at });
      const policyId: string | undefined = bought.status === 201 ? bought.body.data.policy.id : undefined;
      purchases.push({ sumInsured, answer: bought, policyId });
      if (policyId) {
        const t = Date.now();
        const activation = await timedCall(`${url}/policies/${policyId}/activate`, {
          method: 'PUT',
          key: org.apiKey,
          body: {},
        });
        answers.push({ ...activation, kind: 'activate', at: t });
        if (activation.status === 200) activated.push(policyId);
        const r = Date.now();
        answers.push({
          ...(await timedCall(`${url}/policies/${policyId}`, { key: org.apiKey })),
          kind: 'read',
          at: r,
        });
      }
      await sleep(150);
    }
  })();
  return {
    answers,
    purchases,
    activated,
    async stop() {
      running = false;
      await loop;
    },
  };
}

/** `{ 201: 12, 503: 3 }` as "12 × 201, 3 × 503". */
function statusCounts(answers: Timed[]): string {
  const counts = new Map<number, number>();
  for (const a of answers) counts.set(a.status, (counts.get(a.status) ?? 0) + 1);
  return [...counts.entries()]
    .sort(([a], [b]) => a - b)
    .map(([status, n]) => `${n} × ${status === 0 ? 'no answer' : status}`)
    .join(', ');
}

/** Policies in the policy database, per sum insured (one purchase attempt each). */
async function policiesPerAttempt(db: mongoose.Connection, organizationId: string) {
  const rows = await db
    .collection('policies')
    .find({ organizationId }, { projection: { sumInsuredMinor: 1, status: 1 } })
    .toArray();
  const per = new Map<number, number>();
  for (const row of rows) {
    // Stored in minor units (KES: 2 decimals).
    const major = Number(BigInt(String(row.sumInsuredMinor)) / 100n);
    per.set(major, (per.get(major) ?? 0) + 1);
  }
  return { rows, per };
}

/** The `policy.activated` events a receiver verified, by policy: distinct event ids each. */
function activatedEventsByPolicy(receiver: WebhookReceiver) {
  const per = new Map<string, Set<string>>();
  for (const d of receiver.verified()) {
    const body = d.body as { id: string; event: string; data: { policyId: string } };
    if (body.event !== 'policy.activated') continue;
    const ids = per.get(body.data.policyId) ?? new Set<string>();
    ids.add(body.id);
    per.set(body.data.policyId, ids);
  }
  return per;
}

describe('faults in the dependencies (Redis, MongoDB, the chain), then recovery', () => {
  it('Redis killed (SIGKILL) for 60 s, back EMPTY on its port: partners served, every purchase once, every policy.activated delivered once', async () => {
    const OUTAGE_MS = 60_000;
    const redis = await startLocalRedis({});
    const redisPort = Number(new URL(redis.url).port);
    let restarted: ChildProcess | undefined;
    const receiver = await startWebhookReceiver();
    const chain = await testChain();
    const prefix = uniqueRedisPrefix('faults_deps_redis');
    let stack: Stack | undefined;
    try {
      stack = await startStack({
        mongoUrl: testMongoUrl(),
        redisUrl: redis.url,
        chain,
        prefix,
        webhooks: true,
      });
      const org = await sellableOrg(stack.platform, { capacity: 100_000_000 });
      await connectReceiver(stack.webhooksPort as number, org.id, receiver);

      const traffic = partnerTraffic(stack.gatewayPort, org, 20_000);
      await eventually(() => expect(traffic.activated.length).toBeGreaterThanOrEqual(5), {
        timeout: 30_000,
        interval: 5,
        message: 'partner traffic under way',
      });
      const deliveredAtKill = new Set(activatedEventsByPolicy(receiver).keys());
      const activatedBeforeKill = [...traffic.activated];
      const activatedAtKill = activatedBeforeKill.length;
      // Of the undelivered ones, those whose event had already left the outbox: in Redis only,
      // apart from the copy the relay keeps on the policy.
      const relayedUndelivered = await stack.policyDb.collection('policies').countDocuments({
        _id: { $in: activatedBeforeKill.filter((id) => !deliveredAtKill.has(id)) as never[] },
        'outbox.0': { $exists: false },
      });
      process.kill(redis.pid as number, 'SIGKILL');
      const killedAt = Date.now();
      await sleep(OUTAGE_MS);
      const during = traffic.answers.filter((a) => a.at >= killedAt);
      restarted = await redisServerOn(redisPort);
      const restartedAt = Date.now();
      await waitReady(stack.gatewayPort);
      await sleep(2_000);
      await traffic.stop();

      // While Redis was away: every request answered, promptly, and none failed for it.
      expect(during.length).toBeGreaterThan(20);
      expect(during.filter((a) => a.status === 0)).toEqual([]);
      expect(during.filter((a) => a.ms > 5_000)).toEqual([]);
      expect(during.filter((a) => ![200, 201, 503].includes(a.status))).toEqual([]);

      // Every purchase answered 201 exists exactly once; none answered otherwise was written.
      const { per } = await policiesPerAttempt(stack.policyDb, org.id);
      const answered = traffic.purchases.filter((p) => p.answer.status === 201);
      expect(answered.filter((p) => per.get(p.sumInsured) !== 1)).toEqual([]);
      const duplicated = [...per.values()].filter((n) => n > 1).length;
      expect(duplicated).toBe(0);

      // Every activation answered 200 reaches the partner as one policy.activated (same id on
      // any redelivery). Those made during and after the outage were still in the policy's
      // outbox (MongoDB) when Redis died. Those relayed before the kill but not yet delivered
      // had left the outbox for the events queue, which the restart emptied: the relay kept a
      // copy of each on its policy (`outboxRelayed`), noticed that Redis lost its data (its
      // marker key gone) and enqueued them again. All of them must arrive, once.
      const expected = new Set(traffic.activated);
      const inFlightAtKill = new Set(activatedBeforeKill.filter((id) => !deliveredAtKill.has(id)));
      await eventually(
        () => {
          const got = activatedEventsByPolicy(receiver);
          expect([...expected].filter((id) => !got.has(id))).toEqual([]);
        },
        { timeout: 60_000, interval: 200, message: 'every policy.activated delivered after Redis came back' },
      ).catch(() => undefined);
      const deliveredIn = Math.round((Date.now() - restartedAt) / 1000);
      const got = activatedEventsByPolicy(receiver);
      const lost = [...expected].filter((id) => !got.has(id));
      const twice = [...got.values()].filter((ids) => ids.size > 1).length;
      // What a lost event's policy holds, for the failure message.
      const lostDocs = await stack.policyDb
        .collection('policies')
        .find({ _id: { $in: lost as never[] } }, { projection: { outbox: 1, outboxRelayed: 1, status: 1 } })
        .toArray();
      // The policy service's sweeps (among them the one that re-queues activations Redis lost)
      // run from job schedulers kept in Redis: they must be back in the emptied Redis.
      const sweeps = new Queue('policy-sweeps', {
        connection: { host: '127.0.0.1', port: redisPort },
        prefix,
      });
      const schedulers = await eventually(
        async () => {
          const n = await sweeps.getJobSchedulersCount();
          expect(n).toBe(3);
          return n;
        },
        { timeout: 10_000, interval: 200, message: 'the policy sweeps scheduled again' },
      )
        .catch(() => sweeps.getJobSchedulersCount())
        .finally(() => sweeps.close());
      const lostInFlight = lost.filter((id) => inFlightAtKill.has(id)).length;
      table.push({
        fault: `Redis SIGKILL 60 s (restarted empty, no persistence) after ${activatedAtKill} activations (${deliveredAtKill.size} delivered)`,
        partnersSaw: `${statusCounts(during)} during the outage, slowest ${Math.max(...during.map((a) => a.ms))} ms; every policy.activated delivered within ${deliveredIn} s of the restart, among them the ${inFlightAtKill.size} activated before the kill and undelivered then, ${relayedUndelivered} of which had left the outbox for Redis (re-sent from the kept copies: ${lostInFlight} of the ${inFlightAtKill.size} lost); policy sweeps scheduled again: ${schedulers} of 3`,
        expected: expected.size,
        done: expected.size - lost.length,
        lost: lost.length,
        duplicated: duplicated + twice,
      });
      expect({ lost, lostDocs }).toEqual({ lost: [], lostDocs: [] });
      expect(twice).toBe(0);
      expect(schedulers).toBe(3);
    } finally {
      await stack?.stop();
      if (restarted) await kill9(restarted);
      await redis.stop();
      await receiver.close();
    }
  });

  it('Redis hung 30 s (SIGSTOP, then SIGCONT): every request answered within its deadline, nothing lost or doubled', async () => {
    const HANG_MS = 30_000;
    const redis = await startLocalRedis({});
    const receiver = await startWebhookReceiver();
    const chain = await testChain();
    const prefix = uniqueRedisPrefix('faults_deps_hung');
    let stack: Stack | undefined;
    try {
      stack = await startStack({
        mongoUrl: testMongoUrl(),
        redisUrl: redis.url,
        chain,
        prefix,
        webhooks: true,
      });
      const org = await sellableOrg(stack.platform, { capacity: 100_000_000 });
      await connectReceiver(stack.webhooksPort as number, org.id, receiver);
      const traffic = partnerTraffic(stack.gatewayPort, org, 30_000);
      await eventually(() => expect(traffic.activated.length).toBeGreaterThanOrEqual(3), {
        timeout: 30_000,
        interval: 5,
        message: 'partner traffic under way',
      });
      process.kill(redis.pid as number, 'SIGSTOP');
      const stoppedAt = Date.now();
      try {
        await sleep(HANG_MS);
      } finally {
        process.kill(redis.pid as number, 'SIGCONT');
      }
      const during = traffic.answers.filter((a) => a.at >= stoppedAt && a.at < stoppedAt + HANG_MS);
      await sleep(2_000);
      await traffic.stop();

      // No request waited for Redis to come back: each answered within the request deadline.
      expect(during.length).toBeGreaterThan(10);
      expect(during.filter((a) => a.status === 0 || a.ms >= 15_000)).toEqual([]);
      expect(during.filter((a) => ![200, 201, 503].includes(a.status))).toEqual([]);

      // A purchase answered 503 is bought again; one answered 201 is not.
      const refused = traffic.purchases.filter((p) => p.answer.status !== 201);
      const url = `http://127.0.0.1:${stack.gatewayPort}/api/policies/purchase`;
      for (const p of refused) {
        const again = await timedCall(url, {
          method: 'POST',
          key: org.apiKey,
          body: cropPurchase(org, { sumInsured: p.sumInsured }),
        });
        expect(again.status).toBe(201);
      }
      const { per } = await policiesPerAttempt(stack.policyDb, org.id);
      const attempts = traffic.purchases.map((p) => p.sumInsured);
      const missing = attempts.filter((s) => !per.has(s));
      const duplicated = [...per.values()].filter((n) => n > 1).length;
      const expected = new Set(traffic.activated);
      const got = await eventually(
        () => {
          const g = activatedEventsByPolicy(receiver);
          expect([...expected].filter((id) => !g.has(id))).toEqual([]);
          return g;
        },
        { timeout: 60_000, interval: 200, message: 'every policy.activated delivered after SIGCONT' },
      );
      const twice = [...got.values()].filter((ids) => ids.size > 1).length;
      table.push({
        fault: 'Redis hung 30 s (SIGSTOP/SIGCONT)',
        partnersSaw: `${statusCounts(during)} during the hang, slowest ${Math.max(...during.map((a) => a.ms))} ms; ${refused.length} purchases refused and bought again`,
        expected: attempts.length + expected.size,
        done: attempts.length - missing.length + got.size,
        lost: missing.length + [...expected].filter((id) => !got.has(id)).length,
        duplicated: duplicated + twice,
      });
      expect(missing).toEqual([]);
      expect(duplicated).toBe(0);
      expect(twice).toBe(0);
    } finally {
      if (redis.pid) process.kill(redis.pid, 'SIGCONT');
      await stack?.stop();
      await redis.stop();
      await receiver.close();
    }
  });

  it('MongoDB hung 20 s (SIGSTOP, then SIGCONT): 503 at the deadline, not ready, then one policy per purchase retried with its Idempotency-Key', async () => {
    const HANG_MS = 20_000;
    const mongod = await embeddedMongod();
    const chain = await testChain();
    let stack: Stack | undefined;
    try {
      stack = await startStack({
        mongoUrl: mongod.url,
        redisUrl: testRedisUrl(),
        chain,
        prefix: uniqueRedisPrefix('faults_deps_mongo'),
        policyEnv: { REQUEST_DEADLINE_MS: '3000' },
        // The gateway waits longer than the service, so the service's own answer comes through.
        gatewayEnv: { REQUEST_DEADLINE_MS: '6000' },
      });
      const org = await sellableOrg(stack.platform, { capacity: 100_000_000 });
      // Each purchase carries an Idempotency-Key, which its retry repeats.
      const keyOf = (sumInsured: number) => `faults-mongo-${sumInsured}`;
      const traffic = partnerTraffic(stack.gatewayPort, org, 40_000, keyOf);
      await eventually(() => expect(traffic.activated.length).toBeGreaterThanOrEqual(3), {
        timeout: 30_000,
        interval: 5,
        message: 'partner traffic under way',
      });
      process.kill(mongod.child.pid as number, 'SIGSTOP');
      const stoppedAt = Date.now();
      let readiness: Timed;
      try {
        await sleep(5_000);
        readiness = await timedCall(`http://127.0.0.1:${stack.policyPort}/readyz`, { timeoutMs: 10_000 });
        await sleep(HANG_MS - (Date.now() - stoppedAt));
      } finally {
        process.kill(mongod.child.pid as number, 'SIGCONT');
      }
      const during = traffic.answers.filter((a) => a.at >= stoppedAt && a.at < stoppedAt + HANG_MS - 6_000);
      await sleep(3_000);
      await traffic.stop();

      expect(readiness.status).toBe(503);
      expect(readiness.body).toMatchObject({ status: 'not ready', checks: { mongo: false } });
      // Each request started while MongoDB hung was answered, at the deadline, long before the end.
      expect(during.length).toBeGreaterThan(0);
      expect(during.filter((a) => a.status === 0 || a.ms >= 10_000)).toEqual([]);
      expect(during.filter((a) => a.status !== 503)).toEqual([]);
      expect(during.filter((a) => a.body?.error?.code !== 'SERVICE_UNAVAILABLE')).toEqual([]);

      // What the hung server did with the writes it held: applied after SIGCONT or not.
      const refused = traffic.purchases.filter((p) => p.answer.status !== 201);
      const before = await policiesPerAttempt(stack.policyDb, org.id);
      const committedLate = refused.filter((p) => before.per.has(p.sumInsured)).length;
      // The partner retries each refused purchase with the same key and body: a purchase the
      // hung server applied late is answered (a replay), the others are bought now.
      const url = `http://127.0.0.1:${stack.gatewayPort}/api/policies/purchase`;
      let replayed = 0;
      for (const p of refused) {
        const again = await call('POST', url, {
          key: org.apiKey,
          body: cropPurchase(org, { sumInsured: p.sumInsured }),
          headers: { 'Idempotency-Key': keyOf(p.sumInsured) },
        });
        expect(again.status).toBe(201);
        if (again.headers.get('idempotent-replayed') === 'true') replayed++;
      }
      const { per } = await policiesPerAttempt(stack.policyDb, org.id);
      const attempts = traffic.purchases.map((p) => p.sumInsured);
      const missing = attempts.filter((s) => !per.has(s));
      const duplicated = [...per.values()].filter((n) => n > 1).length;
      table.push({
        fault: 'MongoDB hung 20 s (SIGSTOP/SIGCONT), deadline 3 s',
        partnersSaw: `${statusCounts(during)} during the hang, slowest ${Math.max(...during.map((a) => a.ms))} ms; /readyz ${readiness.status}; ${refused.length} purchases refused, ${committedLate} of them committed late (after SIGCONT); retried with the same Idempotency-Key: ${replayed} answered as replays, ${refused.length - replayed} bought`,
        expected: attempts.length,
        done: attempts.length - missing.length,
        lost: missing.length,
        duplicated,
      });
      expect(missing).toEqual([]);
      // Every purchase is one policy: the retry of one committed late is its replay, not a copy.
      expect(traffic.purchases.filter((p) => per.get(p.sumInsured) !== 1)).toEqual([]);
      expect(duplicated).toBe(0);
      // Each committed late was answered as a replay (a held write applied between the count and
      // the retry is a replay too, so there may be more).
      expect(replayed).toBeGreaterThanOrEqual(committedLate);
      // Capacity is reserved once per policy: nothing reserved twice, no claim left open.
      const capacity = await stack.policyDb
        .collection('underwriting_capacity')
        .findOne({ _id: org.id as never }, { useBigInt64: true });
      const sold = (await stack.policyDb
        .collection('policies')
        .find({ organizationId: org.id }, { projection: { sumInsuredMinor: 1 }, useBigInt64: true })
        .toArray()) as unknown as Array<{ sumInsuredMinor: bigint }>;
      expect(capacity?.reservedMinor).toBe(sold.reduce((sum, row) => sum + BigInt(row.sumInsuredMinor), 0n));
      expect(capacity?.keyedReservations).toEqual([]);
    } finally {
      if (mongod.child.pid) process.kill(mongod.child.pid, 'SIGCONT');
      await stack?.stop();
      await kill9(mongod.child);
    }
  });

  it('chain stopped 30 s (anvil SIGSTOP, then SIGCONT) mid-activation: PENDING meanwhile, breaker open, then each policy on chain once', async () => {
    const STOP_MS = 30_000;
    const BEFORE = 12;
    const DURING = 6;
    const anvil = await anvilWithRegistry();
    const chain = {
      rpcUrl: anvil.rpcUrl,
      registryAddress: anvil.registryAddress,
      privateKey: anvil.privateKey,
    };
    const prefix = uniqueRedisPrefix('faults_deps_chain');
    let stack: Stack | undefined;
    const activations = createProducer('policy-activations', { connection: testRedisUrl(), prefix });
    const redisClient = connectRedis();
    const eventsQueue = new Queue('events', { connection: redisClient, prefix });
    try {
      stack = await startStack({
        mongoUrl: testMongoUrl(),
        redisUrl: testRedisUrl(),
        chain,
        prefix,
        policyEnv: { ACTIVATION_CONCURRENCY: '1', CHAIN_TIMEOUT_MS: '1000', CHAIN_BREAKER_RESET_MS: '2000' },
      });
      const org = await sellableOrg(stack.platform, {
        tier: 'DETERMINATION_AND_SETTLEMENT',
        capacity: 100_000_000,
      });
      const api = stack.platform.gateway.api;
      const bought: string[] = [];
      for (let i = 0; i < BEFORE + DURING; i++) {
        const reply = await api('POST', '/policies/purchase', { key: org.apiKey, body: cropPurchase(org) });
        expect(reply.status).toBe(201);
        bought.push(reply.body.data.policy.id);
      }
      // What the payments service does once each premium is received.
      const paid = (ids: string[], from: number) =>
        Promise.all(
          ids.map((policyId, i) =>
            activations.add(
              { policyId, organizationId: org.id, paymentId: `ws_CO_chain_${from + i}` },
              { jobId: policyActivationJobId(policyId) },
            ),
          ),
        );
      const active = () =>
        stack?.policyDb
          .collection('policies')
          .countDocuments({ _id: { $in: bought as never[] }, status: 'ACTIVE' }) ?? Promise.resolve(0);
      await paid(bought.slice(0, BEFORE), 0);
      await eventually(async () => expect(await active()).toBeGreaterThanOrEqual(2), {
        timeout: 30_000,
        interval: 5,
        message: 'activations under way',
      });
      process.kill(anvil.child.pid as number, 'SIGSTOP');
      const stoppedAt = Date.now();
      let atStop = 0;
      let continuedAt = 0;
      let breakerSeen = 0;
      let statuses: Array<{ status: string; pending: boolean; lastError: string | null }> = [];
      try {
        atStop = await active();
        // More premiums arrive while the chain is out.
        await paid(bought.slice(BEFORE), BEFORE);
        // The breaker opens: activations fail fast with it, and say so on the policy.
        await eventually(
          async () => {
            breakerSeen =
              (await stack?.policyDb.collection('policies').countDocuments({
                _id: { $in: bought as never[] },
                lastActivationError: /circuit breaker is open/,
              })) ?? 0;
            expect(breakerSeen).toBeGreaterThan(0);
          },
          { timeout: STOP_MS - 5_000, interval: 200, message: 'the chain breaker open' },
        );
        await sleep(Math.max(0, STOP_MS - 3_000 - (Date.now() - stoppedAt)));
        // What partners see on each policy not yet on chain, while the chain is still out.
        const unregistered = await stack.policyDb
          .collection('policies')
          .find({ _id: { $in: bought as never[] }, status: { $ne: 'ACTIVE' } }, { projection: { _id: 1 } })
          .toArray();
        statuses = await Promise.all(
          unregistered.map(async ({ _id }) => {
            const reply = await api('GET', `/policies/${_id}/status`, { key: org.apiKey });
            return {
              status: reply.body.data.status,
              pending: reply.body.data.activation.pending,
              lastError: reply.body.data.activation.lastError,
            };
          }),
        );
      } finally {
        process.kill(anvil.child.pid as number, 'SIGCONT');
        continuedAt = Date.now();
      }
      expect(statuses.length).toBeGreaterThanOrEqual(DURING);
      expect(statuses.filter((s) => s.status !== 'PENDING' || !s.pending)).toEqual([]);

      await eventually(async () => expect(await active()).toBe(bought.length), {
        timeout: 60_000,
        interval: 200,
        message: 'every paid policy active after the chain came back',
      });
      const recoveredIn = Math.round((Date.now() - continuedAt) / 1000);
      const outcome = await activationOutcome(anvil, eventsQueue, bought);
      const perPolicy = outcome.eventsPerPolicy;
      table.push({
        fault: `chain stopped 30 s (anvil SIGSTOP) after ${atStop} of ${BEFORE} activations, ${DURING} more paid meanwhile`,
        partnersSaw: `${statuses.length} policies PENDING with activation pending (none failed); the breaker opened (its error on ${breakerSeen} policies); all ACTIVE ${recoveredIn} s after SIGCONT`,
        expected: bought.length,
        done: await active(),
        lost: bought.length - perPolicy.size,
        duplicated: outcome.registrations - bought.length + outcome.events - perPolicy.size,
      });
      expect(outcome.registrations).toBe(bought.length);
      expect([...perPolicy.entries()].filter(([, n]) => n !== 1)).toEqual([]);
      expect([...perPolicy.keys()].sort()).toEqual([...bought].sort());
    } finally {
      if (anvil.child.pid) process.kill(anvil.child.pid, 'SIGCONT');
      await stack?.stop();
      await activations.close();
      await eventsQueue.close();
      await redisClient.quit();
      await kill9(anvil.child);
    }
  });
});
