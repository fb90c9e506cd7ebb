import { once } from 'node:events';
import { freePort } from '@parametric/local-process';
import { startLocalRedis } from '@parametric/local-redis';
import { createProducer, policyActivationJobId } from '@parametric/queue';
import {
  connectRedis,
  eventually,
  rawPost,
  testChain,
  testMongoUrl,
  testRedisUrl,
  uniqueDatabaseName,
  uniqueRedisPrefix,
} from '@parametric/test-harness';
import { startWebhookReceiver } from '@parametric/webhook-receiver';
import { Queue } from 'bullmq';
import mongoose from 'mongoose';
import { gatewayProcessEnv, startTestGateway } from '../../services/gateway/test/support';
import { cropPurchase, type PolicyPlatform, sellableOrg } from '../../services/policy/test/support';
import {
  activationOutcome,
  deliveredIds,
  faultTable,
  kill9,
  kybEvents,
  partnerOf,
  SIGNING,
  service,
  waitReady,
  webhooksEnv,
  wiring,
} from './support';

/**
 * Services killed with SIGKILL (or stopped with SIGTERM) in the middle of their work, as a node
 * failure or the OOM killer does, then started again. After recovery: what partners saw, and
 * zero events lost, zero side effects duplicated (deliveries may repeat, as at-least-once
 * allows, always with the same `body.id`).
 */
jest.setTimeout(180_000);
const table = faultTable();

describe('faults mid-flow (SIGKILL, SIGTERM, a hung Redis), then recovery', () => {
  it.each(['SIGKILL', 'SIGTERM'] as const)(
    'webhooks stopped by %s mid-delivery: every event reaches the partner, one delivery row each',
    async (signal) => {
      const EVENTS = 60;
      const receiver = await startWebhookReceiver({ respond: () => ({ delayMs: 50 }) });
      const port = await freePort();
      const dbName = uniqueDatabaseName('faults_webhooks');
      const env = {
        ...webhooksEnv(port, dbName, testRedisUrl(), uniqueRedisPrefix('faults_webhooks')),
        WORKER_LOCK_MS: '3000',
      };
      let webhooks = service('webhooks', env);
      const events = createProducer('events', { connection: env.REDIS_URL, prefix: env.REDIS_PREFIX });
      const db = await mongoose.createConnection(testMongoUrl(), { dbName }).asPromise();
      try {
        await waitReady(port);
        const sent = kybEvents(await partnerOf(port, receiver), EVENTS);
        await Promise.all(sent.map((event) => events.add(event, { jobId: event.id })));
        await eventually(() => expect(receiver.verified().length).toBeGreaterThanOrEqual(10), {
          timeout: 30_000,
          interval: 5,
          message: 'deliveries under way',
        });
        const exited = once(webhooks, 'exit');
        webhooks.kill(signal);
        const [code] = await exited;
        // A graceful stop finishes what it holds and exits 0; SIGKILL gives it no say.
        if (signal === 'SIGTERM') expect(code).toBe(0);
        const atKill = deliveredIds(receiver).size;
        webhooks = service('webhooks', env);
        await waitReady(port);

        const ids = new Set(sent.map((e) => e.id));
        await eventually(
          () => {
            const got = deliveredIds(receiver);
            expect([...ids].filter((id) => !got.has(id))).toEqual([]);
          },
          { timeout: 90_000, interval: 200, message: 'every event delivered after the restart' },
        );
        const received = receiver.verified().map((d) => (d.body as { id: string }).id);
        // Repeats are allowed (at-least-once), but only of events that were sent, same body.id.
        const repeats = receiver.received.filter((d) => d.verified && d.duplicate);
        expect(repeats.filter((d) => !ids.has((d.body as { id: string }).id))).toEqual([]);
        expect(received.filter((id) => !ids.has(id))).toEqual([]);
        const rows = await db.collection('webhook_deliveries').find({}).toArray();
        const rowIds = rows.map((r) => String(r._id));
        expect(new Set(rowIds).size).toBe(rowIds.length);
        expect(rowIds.sort()).toEqual([...ids].sort());
        await eventually(
          async () =>
            expect(
              await db.collection('webhook_deliveries').countDocuments({ status: { $ne: 'DELIVERED' } }),
            ).toBe(0),
          { timeout: 30_000, interval: 200, message: 'every row DELIVERED' },
        );
        table.push({
          fault: `webhooks ${signal} after ${atKill} of ${EVENTS} deliveries`,
          partnersSaw: `${repeats.length} repeated deliveries (same body.id)`,
          expected: EVENTS,
          done: new Set(received).size,
          lost: [...ids].filter((id) => !received.includes(id)).length,
          duplicated: rowIds.length - new Set(rowIds).size,
        });
      } finally {
        await kill9(webhooks);
        await events.close();
        await receiver.close();
        await db.dropDatabase().catch(() => undefined);
        await db.close();
      }
    },
  );

  it('Redis hung for 5 s mid-delivery (SIGSTOP, then SIGCONT): every event delivered, one row each', async () => {
    const EVENTS = 60;
    const redis = await startLocalRedis({});
    const receiver = await startWebhookReceiver();
    const port = await freePort();
    const dbName = uniqueDatabaseName('faults_redis');
    const env = webhooksEnv(port, dbName, redis.url, uniqueRedisPrefix('faults_redis'));
    const webhooks = service('webhooks', env);
    const events = createProducer('events', { connection: redis.url, prefix: env.REDIS_PREFIX });
    const db = await mongoose.createConnection(testMongoUrl(), { dbName }).asPromise();
    try {
      await waitReady(port);
      const sent = kybEvents(await partnerOf(port, receiver), EVENTS);
      const ids = new Set(sent.map((e) => e.id));
      await Promise.all(sent.slice(0, EVENTS / 2).map((event) => events.add(event, { jobId: event.id })));
      await eventually(() => expect(receiver.verified().length).toBeGreaterThanOrEqual(5), {
        timeout: 30_000,
        interval: 5,
        message: 'deliveries under way',
      });
      process.kill(redis.pid as number, 'SIGSTOP');
      const atHang = receiver.verified().length;
      // The relay's adds while Redis hangs fail within their deadline; it retries them later.
      const during = await Promise.allSettled(
        sent.slice(EVENTS / 2).map((event) => events.add(event, { jobId: event.id })),
      );
      await new Promise((resolve) => setTimeout(resolve, 5_000));
      const answeredWhileHung = (await fetch(`http://127.0.0.1:${port}/healthz`)).status;
      process.kill(redis.pid as number, 'SIGCONT');
      const retried = sent.slice(EVENTS / 2).filter((_, i) => during[i]?.status === 'rejected');
      await Promise.all(retried.map((event) => events.add(event, { jobId: event.id })));

      await eventually(
        () => {
          const got = deliveredIds(receiver);
          expect([...ids].filter((id) => !got.has(id))).toEqual([]);
        },
        { timeout: 90_000, interval: 200, message: 'every event delivered after Redis came back' },
      );
      const rowIds = (await db.collection('webhook_deliveries').find({}).toArray()).map((r) => String(r._id));
      expect(rowIds.sort()).toEqual([...ids].sort());
      const repeats = receiver.received.filter((d) => d.verified && d.duplicate).length;
      table.push({
        fault: `Redis hung 5 s after ${atHang} of ${EVENTS} deliveries`,
        partnersSaw: `${repeats} repeated deliveries; the service answered /healthz ${answeredWhileHung} meanwhile; ${retried.length} enqueues refused within their deadline and retried`,
        expected: EVENTS,
        done: new Set(receiver.verified().map((d) => (d.body as { id: string }).id)).size,
        lost: [...ids].filter((id) => !receiver.verified().some((d) => (d.body as { id: string }).id === id))
          .length,
        duplicated: rowIds.length - new Set(rowIds).size,
      });
    } finally {
      if (redis.pid) process.kill(redis.pid, 'SIGCONT');
      await kill9(webhooks);
      await events.close();
      await receiver.close();
      await redis.stop();
      await db.dropDatabase().catch(() => undefined);
      await db.close();
    }
  });

  it('policy killed mid-activation (Tier 2, from the queue): each policy registered on chain once, one policy.activated each', async () => {
    const POLICIES = 12;
    const chain = await testChain();
    const policyPort = await freePort();
    const prefix = uniqueRedisPrefix('faults_policy');
    const policyDb = uniqueDatabaseName('faults_policy');
    const policyEnv = {
      ...wiring('policy', { policy: { http: policyPort } }),
      MONGO_URL: testMongoUrl(),
      MONGO_DB: policyDb,
      REDIS_URL: testRedisUrl(),
      REDIS_PREFIX: prefix,
      INTERNAL_SIGNING_SECRET: SIGNING,
      CHAIN_RPC_URL: chain.rpcUrl,
      CHAIN_REGISTRY_ADDRESS: chain.registryAddress,
      CHAIN_PRIVATE_KEY: chain.privateKey,
      OUTBOX_POLL_MS: '100',
      ACTIVATION_RETRY_BASE_MS: '200',
      ACTIVATION_RETRY_MAX_MS: '400',
      SWEEP_INTERVAL_MS: '500',
      WORKER_LOCK_MS: '3000',
      // The chain-sender lock a dead process held lasts 3 x this (nonces must not race).
      CHAIN_TIMEOUT_MS: '2000',
    };
    let policy = service('policy', policyEnv);
    const gateway = await startTestGateway({
      ...wiring('gateway', { policy: { http: policyPort } }),
      REDIS_PREFIX: prefix,
      INTERNAL_SIGNING_SECRET: SIGNING,
      RATE_LIMIT_POINTS: '100000',
    });
    const activations = createProducer('policy-activations', { connection: testRedisUrl(), prefix });
    const redis = connectRedis();
    const eventsQueue = new Queue('events', { connection: redis, prefix });
    const db = await mongoose.createConnection(testMongoUrl(), { dbName: policyDb }).asPromise();
    try {
      await waitReady(policyPort);
      const org = await sellableOrg({ gateway } as PolicyPlatform, { tier: 'DETERMINATION_AND_SETTLEMENT' });
      const bought: string[] = [];
      for (let i = 0; i < POLICIES; i++) {
        const reply = await gateway.api('POST', '/policies/purchase', {
          key: org.apiKey,
          body: cropPurchase(org),
        });
        expect(reply.status).toBe(201);
        bought.push(reply.body.data.policy.id);
      }
      // What the payments service does once each premium is received.
      await Promise.all(
        bought.map((policyId, i) =>
          activations.add(
            { policyId, organizationId: org.id, paymentId: `ws_CO_fault_${i}` },
            { jobId: policyActivationJobId(policyId) },
          ),
        ),
      );
      const active = () =>
        db.collection('policies').countDocuments({ _id: { $in: bought as never[] }, status: 'ACTIVE' });
      await eventually(async () => expect(await active()).toBeGreaterThanOrEqual(2), {
        timeout: 60_000,
        interval: 5,
        message: 'activations under way',
      });
      await kill9(policy);
      const killedAt = Date.now();
      const atKill = await active();
      policy = service('policy', policyEnv);
      await waitReady(policyPort);
      await eventually(async () => expect(await active()).toBe(POLICIES), {
        timeout: 90_000,
        interval: 200,
        message: 'every paid policy active after the restart',
      });
      const recoveredIn = Math.round((Date.now() - killedAt) / 1000);

      // On chain: one registration per policy, whatever was in flight when the process died;
      // one policy.activated per policy reached the events queue (its consumer is not running).
      const outcome = await activationOutcome(chain, eventsQueue, bought);
      const perPolicy = outcome.eventsPerPolicy;
      expect(outcome.registrations).toBe(POLICIES);
      expect([...perPolicy.entries()].filter(([, n]) => n !== 1)).toEqual([]);
      expect([...perPolicy.keys()].sort()).toEqual([...bought].sort());
      table.push({
        fault: `policy SIGKILL after ${atKill} of ${POLICIES} queued activations`,
        partnersSaw: `the rest PENDING, all ACTIVE ${recoveredIn} s after the kill (the dead process's job lock, 3 s, and chain-sender lock, 6 s, run out first)`,
        expected: POLICIES,
        done: await active(),
        lost: POLICIES - perPolicy.size,
        duplicated: outcome.registrations - POLICIES + outcome.events - perPolicy.size,
      });
    } finally {
      await kill9(policy);
      await activations.close();
      await eventsQueue.close();
      await redis.quit();
      await gateway.stop();
      await db.dropDatabase().catch(() => undefined);
      await db.close();
    }
  });

  it('gateway killed mid-registration: no organization half-made, every answered one complete', async () => {
    const REGISTRATIONS = 40;
    const port = await freePort();
    const dbName = uniqueDatabaseName('faults_gateway');
    const env = { ...(await gatewayProcessEnv(port, dbName)), OUTBOX_POLL_MS: '100' };
    let gateway = service('gateway', env);
    const db = await mongoose.createConnection(testMongoUrl(), { dbName }).asPromise();
    try {
      await waitReady(port);
      const requests = Array.from({ length: REGISTRATIONS }, (_, i) =>
        rawPost(port, '/api/auth/register-organization', {
          name: `Fault Co-op ${i}`,
          type: 'COOPERATIVE',
          countryCode: 'KE',
          adminEmail: `admin${i}@faults.example`,
          adminPassword: 'maize-harvest-2026-long',
        }),
      );
      await eventually(
        async () => expect(await db.collection('organizations').countDocuments()).toBeGreaterThan(3),
        {
          timeout: 30_000,
          interval: 5,
          message: 'registrations under way',
        },
      );
      await kill9(gateway);
      const settled = await Promise.all(requests.map((r) => r.answer));
      gateway = service('gateway', env);
      await waitReady(port);

      const answered = settled
        .filter((a) => a.status === 201)
        .map((a) => a.body.data.organization.id as string);
      const organizations = await db.collection('organizations').find({}).toArray();
      const keys = await db.collection('api_keys').find({}).toArray();
      const users = await db.collection('users').find({}).toArray();
      const keyed = new Set(keys.map((k) => String(k.organizationId ?? k._id)));
      const withAdmin = new Set(users.map((u) => String(u.organizationId)));
      // Every organization written is whole (its key and its admin), whether or not its
      // answer made it out before the kill; every one answered 201 exists.
      const partial = organizations.filter((o) => !keyed.has(String(o._id)) || !withAdmin.has(String(o._id)));
      expect(partial.map((o) => o._id)).toEqual([]);
      expect(answered.filter((id) => !organizations.some((o) => String(o._id) === id))).toEqual([]);
      // An email is one user: a retry of an unanswered registration cannot make a second one.
      const emails = users.map((u) => u.email);
      expect(new Set(emails).size).toBe(emails.length);
      // The kyb.pending-style events of every organization are relayed after the restart.
      await eventually(
        async () =>
          expect(await db.collection('organizations').countDocuments({ outboxPending: true })).toBe(0),
        { timeout: 30_000, interval: 200, message: 'the outbox drained after the restart' },
      );
      table.push({
        fault: `gateway SIGKILL during ${REGISTRATIONS} registrations`,
        partnersSaw: `${answered.length} × 201, ${settled.length - answered.length} connections cut`,
        expected: organizations.length,
        done: organizations.length - partial.length,
        lost: answered.filter((id) => !organizations.some((o) => String(o._id) === id)).length,
        duplicated: emails.length - new Set(emails).size,
      });
    } finally {
      await kill9(gateway);
      await db.dropDatabase().catch(() => undefined);
      await db.close();
    }
  });
});
