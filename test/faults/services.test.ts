import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { policyRefOf, policyRegistryAbi } from '@parametric/chain';
import { verifyDetermination } from '@parametric/determination-verify';
import { freePort } from '@parametric/local-process';
import { createLogger } from '@parametric/logger';
import { startMpesaSimulator } from '@parametric/mpesa-simulator';
import { createProducer, policyActivationJobId } from '@parametric/queue';
import { startRateSimulator } from '@parametric/rate-simulator';
import {
  connectRedis,
  eventually,
  testMongoUrl,
  testRedisUrl,
  uniqueDatabaseName,
  uniqueRedisPrefix,
} from '@parametric/test-harness';
import { Queue } from 'bullmq';
import mongoose from 'mongoose';
import { createPublicClient, http } from 'viem';
import { generateSigningKeyPem } from '../../services/determinations/src/signing/keys';
import { assessment } from '../../services/determinations/test/support';
import { startTestGateway, type TestGateway } from '../../services/gateway/test/support';
import { configEnv, MPESA, paymentsTestConfig } from '../../services/payments/test/support';
import { startPolicy } from '../../services/policy/src/service';
import {
  cropPurchase,
  type PolicyPlatform,
  policyTestConfig,
  type SellableOrg,
  sellableOrg,
} from '../../services/policy/test/support';
import { faultTable, kill9, portOf, SIGNING, service, waitReady, wiring } from './support';

/**
 * Services killed with SIGKILL in the middle of their own work (a batch of assessments, a
 * premium between its provider callback and the policy's activation), then started again.
 * After recovery: every side effect happened once, none was lost.
 */
jest.setTimeout(180_000);
const table = faultTable();

const ALL_STATES = ['waiting', 'delayed', 'prioritized', 'active', 'completed', 'failed'] as const;

/** How many jobs of a queue carry each key (`keyOf` of the job's data), every state included. */
async function jobsPer(queue: Queue, keyOf: (data: Record<string, unknown>) => string | null) {
  const counts = new Map<string, number>();
  for (const job of await queue.getJobs([...ALL_STATES])) {
    if (!job) continue;
    const key = keyOf(job.data as Record<string, unknown>);
    if (key !== null) counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return counts;
}

/** Drops a database a service in this process used (the policy service's). */
async function dropDatabase(dbName: string) {
  const connection = await mongoose.createConnection(testMongoUrl(), { dbName }).asPromise();
  await connection.dropDatabase().catch(() => undefined);
  await connection.close();
}

const repeated = (counts: Map<string, number>) => [...counts.values()].reduce((n, c) => n + c - 1, 0);

/** A crop policy bought and made ACTIVE: Tier 1 by the partner's activation, Tier 2 as a paid premium does. */
async function activePolicy(
  gateway: TestGateway,
  org: SellableOrg,
  tier2: boolean,
  activations: ReturnType<typeof createProducer<'policy-activations'>>,
): Promise<string> {
  const bought = await gateway.api('POST', '/policies/purchase', {
    key: org.apiKey,
    body: cropPurchase(org),
  });
  expect(bought.status).toBe(201);
  const policyId = bought.body.data.policy.id as string;
  if (tier2) {
    await activations.add(
      { policyId, organizationId: org.id, paymentId: `ws_CO_${randomUUID()}` },
      { jobId: policyActivationJobId(policyId) },
    );
  } else {
    expect((await gateway.api('PUT', `/policies/${policyId}/activate`, { key: org.apiKey })).status).toBe(
      200,
    );
  }
  await eventually(
    async () =>
      expect((await gateway.api('GET', `/policies/${policyId}`, { key: org.apiKey })).body.data.status).toBe(
        'ACTIVE',
      ),
    { timeout: 30_000, interval: 100, message: 'the policy ACTIVE' },
  );
  return policyId;
}

describe('faults in the services’ own work (SIGKILL), then recovery', () => {
  it('determinations killed mid-batch: the retried batch gives one signed determination per assessment, one event and one payout job each', async () => {
    const ITEMS = 240;
    const prefix = uniqueRedisPrefix('faults_det');
    const logger = createLogger({ name: 'faults-policy', level: 'silent' });
    const { config: policyConfig } = await policyTestConfig({ REDIS_PREFIX: prefix });
    const policy = await startPolicy(policyConfig, logger);
    const port = await freePort();
    const dbName = uniqueDatabaseName('faults_det');
    // The policy service runs in this process; the gateway too (startTestGateway).
    const ports = { determinations: { http: port }, policy: { http: portOf(policy.url) } };
    const env = {
      ...wiring('determinations', ports),
      MONGO_URL: testMongoUrl(),
      MONGO_DB: dbName,
      REDIS_URL: testRedisUrl(),
      REDIS_PREFIX: prefix,
      INTERNAL_SIGNING_SECRET: SIGNING,
      DETERMINATION_SIGNING_KEYS: generateSigningKeyPem(),
      OUTBOX_POLL_MS: '100',
      // Two assessments at a time in the batch request (default 8), so the kill lands inside it.
      INGEST_CONCURRENCY: '2',
    };
    let determinations = service('determinations', env);
    const gateway = await startTestGateway({
      ...wiring('gateway', ports),
      REDIS_PREFIX: prefix,
      INTERNAL_SIGNING_SECRET: SIGNING,
      RATE_LIMIT_POINTS: '100000',
      OUTBOX_POLL_MS: '100',
    });
    const activations = createProducer('policy-activations', { connection: testRedisUrl(), prefix });
    const redis = connectRedis();
    const eventsQueue = new Queue('events', { connection: redis, prefix });
    const payoutQueue = new Queue('payout-originations', { connection: redis, prefix });
    const db = await mongoose.createConnection(testMongoUrl(), { dbName }).asPromise();
    try {
      const platform = { gateway } as PolicyPlatform;
      const tier1 = await sellableOrg(platform, { capacity: 100_000_000 });
      const tier2 = await sellableOrg(platform, {
        capacity: 100_000_000,
        tier: 'DETERMINATION_AND_SETTLEMENT',
      });
      const policies: { id: string; org: SellableOrg; tier2: boolean }[] = [];
      for (const [org, isTier2, n] of [
        [tier1, false, 3],
        [tier2, true, 2],
      ] as const) {
        for (let i = 0; i < n; i++) {
          policies.push({ id: await activePolicy(gateway, org, isTier2, activations), org, tier2: isTier2 });
        }
      }
      await waitReady(port);
      // Several policies of two partners; every fourth assessment not triggered (nothing owed). 2 %
      // each: a policy's 36 triggered ones owe 72 % of its cover, so none is capped by the cover
      // (docs/determinations.md) and each triggered Tier 2 one originates a payout.
      const items = Array.from({ length: ITEMS }, (_, i) =>
        assessment(
          { policyId: (policies[i % policies.length] as { id: string }).id },
          i % 4 === 3 ? { triggered: false, damagePercentBp: 0 } : { damagePercentBp: 200 },
        ),
      );
      const policyOfItem = (i: number) => policies[i % policies.length] as (typeof policies)[number];
      const batch = () => gateway.ops('POST', '/determinations/batch', { body: { items } });

      const first = batch();
      const recorded = () => db.collection('determinations').countDocuments();
      const claimed = () => db.collection('ingestion_keys').countDocuments();
      // A batch claims its items' keys together, then writes evidence, takes cover, signs and
      // inserts the records together (services/determinations/src/ingestion/domain.ts): the kill
      // comes once the keys are claimed, inside the window where none is recorded yet.
      await eventually(async () => expect(await claimed()).toBeGreaterThan(0), {
        timeout: 60_000,
        interval: 2,
        message: 'the batch under way',
      });
      await kill9(determinations);
      const atKill = await recorded();
      // Keys claimed whose record was not yet written: the items the process died in.
      const halfDone = (await claimed()) - atKill;
      const cut = await first;
      // The kill landed inside the batch request, between claims and records: the ops tool got
      // no results, and the retry meets keys claimed by a process that is gone.
      expect(halfDone).toBeGreaterThan(0);
      expect(cut.status).toBeGreaterThanOrEqual(500);

      determinations = service('determinations', env);
      await waitReady(port);
      // The ops tool retries the same batch: same items, same idempotency keys.
      const retried = await batch();
      expect(retried.status).toBe(200);
      const { results, summary } = retried.body.data as {
        results: { index: number; status: number; determination?: { determinationId: string } }[];
        summary: { created: number; replayed: number; failed: number };
      };
      expect(summary.failed).toBe(0);
      expect(summary.created + summary.replayed).toBe(ITEMS);
      const ids = results.map((r) => r.determination?.determinationId as string);
      expect(new Set(ids).size).toBe(ITEMS);

      // One record per assessment, under the id its key was claimed with, issued and signed.
      const stored = await db.collection('determinations').find({}).toArray();
      const keys = stored.map((d) => d.idempotencyKey as string);
      expect(new Set(keys).size).toBe(stored.length);
      expect(stored.map((d) => String(d._id)).sort()).toEqual([...ids].sort());
      expect(stored.filter((d) => d.status !== 'ISSUED').map((d) => d._id)).toEqual([]);

      // Each one, read by its partner, verifies with nothing but the published keys.
      const jwks = (await gateway.api('GET', '/.well-known/jwks.json')).body;
      const unverified: string[] = [];
      for (let i = 0; i < ITEMS; i += 20) {
        await Promise.all(
          ids.slice(i, i + 20).map(async (id, j) => {
            const read = await gateway.api('GET', `/determinations/${id}`, {
              key: policyOfItem(i + j).org.apiKey,
            });
            if (read.status !== 200 || !verifyDetermination(read.body.data, jwks).valid) unverified.push(id);
          }),
        );
      }
      expect(unverified).toEqual([]);

      // determination.delivered on the events queue once per determination (its consumer is not running).
      const idSet = new Set(ids);
      const deliveredOf = (data: Record<string, unknown>) =>
        data.event === 'determination.delivered'
          ? ((data.data as { determinationId: string }).determinationId as string)
          : null;
      const delivered = await eventually(
        async () => {
          const counts = await jobsPer(eventsQueue, deliveredOf);
          expect([...idSet].filter((id) => !counts.has(id))).toEqual([]);
          return counts;
        },
        {
          timeout: 30_000,
          interval: 200,
          message: 'determination.delivered relayed for every determination',
        },
      );
      expect([...delivered.entries()].filter(([, n]) => n !== 1)).toEqual([]);
      expect(delivered.size).toBe(ITEMS);

      // Tier 2: one payout origination per triggered determination, none for the others.
      const payoutFor = new Set(
        results
          .filter((r) => policyOfItem(r.index).tier2 && r.index % 4 !== 3)
          .map((r) => r.determination?.determinationId as string),
      );
      const payouts = await eventually(
        async () => {
          const counts = await jobsPer(payoutQueue, (data) => data.determinationId as string);
          expect(counts.size).toBe(payoutFor.size);
          return counts;
        },
        { timeout: 30_000, interval: 200, message: 'payout originations relayed' },
      );
      expect([...payouts.keys()].sort()).toEqual([...payoutFor].sort());
      expect([...payouts.values()].filter((n) => n !== 1)).toEqual([]);

      // The policy read (policy-summaries, applied by the policy service) lists each assessment once.
      await eventually(
        async () => {
          for (const [k, p] of policies.entries()) {
            const read = await gateway.api('GET', `/policies/${p.id}`, { key: p.org.apiKey });
            const listed = (read.body.data.damageAssessments as { determinationId: string }[]).map(
              (a) => a.determinationId,
            );
            const expected = ids.filter((_, i) => i % policies.length === k);
            expect(listed.sort()).toEqual(expected.sort());
          }
        },
        { timeout: 30_000, interval: 300, message: 'every assessment on its policy, once' },
      );
      await eventually(
        async () =>
          expect(
            await db
              .collection('determinations')
              .countDocuments({ $or: [{ outboxPending: true }, { jobOutboxPending: true }] }),
          ).toBe(0),
        { timeout: 30_000, interval: 200, message: 'the outbox drained' },
      );
      table.push({
        fault: `determinations SIGKILL after ${atKill} of ${ITEMS} batch items (${halfDone} more claimed, not yet recorded)`,
        partnersSaw: `ops: batch answered ${cut.status}, retried: ${summary.created} created + ${summary.replayed} replayed; partners: ${ITEMS} verified determinations`,
        expected: ITEMS,
        done: stored.length,
        lost: ITEMS - stored.length,
        duplicated: stored.length - new Set(keys).size + repeated(delivered) + repeated(payouts),
      });
    } finally {
      await kill9(determinations);
      await activations.close();
      await eventsQueue.close();
      await payoutQueue.close();
      await redis.quit();
      await gateway.stop();
      await policy.stop();
      await db.dropDatabase().catch(() => undefined);
      await db.close();
      await dropDatabase(policyConfig.MONGO_DB);
    }
  });

  it('payments killed between the provider callback and the activation: each premium credited once, each policy activated once', async () => {
    const COLLECTIONS = 10;
    const KILL_AT_QUERY = 4;
    const prefix = uniqueRedisPrefix('faults_pay');
    const logger = createLogger({ name: 'faults-policy', level: 'silent' });
    const { config: policyConfig, chain } = await policyTestConfig({ REDIS_PREFIX: prefix });
    const policy = await startPolicy(policyConfig, logger);
    // Daraja's stand-in calls back 1.5 s after each prompt: every prompt is out before the first callback.
    const simulator = await startMpesaSimulator({ ...MPESA, callbackDelayMs: 1_500 });
    const rates = await startRateSimulator();
    const [port, callbackPort] = [await freePort(), await freePort()];
    // The policy service and the stand-ins run in this process; the gateway too (startTestGateway).
    const ports = {
      payments: { http: port, callbacks: callbackPort },
      policy: { http: portOf(policy.url) },
      'mpesa-simulator': { http: portOf(simulator.url) },
      'rate-simulator': { http: portOf(rates.url) },
    };
    const config = paymentsTestConfig({
      ...wiring('payments', ports),
      REDIS_PREFIX: prefix,
      // A prompt still unresolved 3 s after it was sent is settled by STK query (the sweep, every second).
      PAYMENTS_RECONCILE_AFTER_SECONDS: '3',
      PAYMENTS_RECONCILE_SWEEP_SECONDS: '1',
    });
    const { LOG_LEVEL: _silent, ...env } = configEnv(config);
    let payments = service('payments', env);
    const firstExit = once(payments, 'exit');
    const gateway = await startTestGateway({
      ...wiring('gateway', ports),
      REDIS_PREFIX: prefix,
      INTERNAL_SIGNING_SECRET: SIGNING,
      RATE_LIMIT_POINTS: '100000',
      PAYMENTS_INITIATE_LIMIT_POINTS: '100000',
      OUTBOX_POLL_MS: '100',
    });
    const redis = connectRedis();
    const eventsQueue = new Queue('events', { connection: redis, prefix });
    const activationQueue = new Queue('policy-activations', { connection: redis, prefix });
    const db = await mongoose.createConnection(config.MONGO_URL, { dbName: config.MONGO_DB }).asPromise();
    let stopWatching: () => void = () => undefined;
    try {
      const org = await sellableOrg({ gateway } as PolicyPlatform, {
        capacity: 100_000_000,
        tier: 'DETERMINATION_AND_SETTLEMENT',
      });
      const bought: { id: string; premium: number }[] = [];
      for (let i = 0; i < COLLECTIONS; i++) {
        const reply = await gateway.api('POST', '/policies/purchase', {
          key: org.apiKey,
          body: cropPurchase(org),
        });
        expect(reply.status).toBe(201);
        bought.push(reply.body.data.policy);
      }
      await waitReady(port);

      // SIGKILL the moment Daraja answers the service's confirmation query of the 4th callback:
      // that callback is received and noted on its transaction, the premium not yet credited,
      // the activation not yet recorded; other callbacks are arriving meanwhile.
      let queries = 0;
      stopWatching = simulator.onRequest((request) => {
        if (request.path === '/mpesa/stkpushquery/v1/query' && ++queries === KILL_AT_QUERY) {
          payments.kill('SIGKILL');
        }
      });
      const initiated = await Promise.all(
        bought.map((p, i) =>
          gateway.api('POST', '/payments/initiate', {
            key: org.apiKey,
            body: {
              reference: p.id,
              amount: p.premium,
              phoneNumber: `+2547120000${String(i).padStart(2, '0')}`,
            },
          }),
        ),
      );
      expect(initiated.map((r) => r.status)).toEqual(bought.map(() => 201));
      const transactionOf = new Map(
        bought.map((p, i) => [p.id, initiated[i]?.body.data.transactionId as string]),
      );
      const [, signal] = await firstExit;
      expect(signal).toBe('SIGKILL');
      const transactions = db.collection('payment_transactions');
      const atKill = {
        credited: await transactions.countDocuments({ status: 'SUCCEEDED' }),
        unsent: await transactions.countDocuments({ status: 'SUCCEEDED', jobOutboxPending: true }),
        calledBack: await transactions.countDocuments({
          status: 'PENDING',
          callbackReceivedAt: { $ne: null },
        }),
        jobs: (await jobsPer(activationQueue, (data) => data.policyId as string)).size,
      };
      // The callback being confirmed when the process died is on its transaction, uncredited.
      expect(atKill.calledBack).toBeGreaterThanOrEqual(1);

      // Every callback Daraja's stand-in sends has been sent (those to the dead process failed).
      const stkCallbacks = () => simulator.callbacks().filter((c) => c.kind === 'STK_CALLBACK');
      await eventually(
        () => {
          expect(stkCallbacks()).toHaveLength(COLLECTIONS);
          expect(stkCallbacks().filter((c) => c.status === null && c.error === undefined)).toEqual([]);
        },
        { timeout: 30_000, interval: 100, message: 'every callback sent' },
      );
      // Unanswered: cut by the kill mid-request, or refused while no process listened.
      const unanswered = stkCallbacks().filter((c) => c.status !== 200).length;
      payments = service('payments', env);
      await waitReady(port);
      // Daraja re-sends callbacks it is unsure of: every one again, the same body to the same URL.
      for (const callback of stkCallbacks()) {
        const again = await fetch(callback.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(callback.body),
        });
        expect(again.status).toBe(200);
        expect(((await again.json()) as { ResultCode: number }).ResultCode).toBe(0);
      }

      // The partner: every payment SUCCEEDED, every policy ACTIVE and paid by that payment.
      await eventually(
        async () => {
          for (const p of bought) {
            const read = (await gateway.api('GET', `/policies/${p.id}`, { key: org.apiKey })).body.data;
            expect(read).toMatchObject({
              status: 'ACTIVE',
              premiumPaid: true,
              premiumReference: transactionOf.get(p.id),
            });
          }
        },
        { timeout: 90_000, interval: 300, message: 'every paid policy ACTIVE after the restart' },
      );
      for (const p of bought) {
        const read = await gateway.api('GET', `/payments/${transactionOf.get(p.id)}`, { key: org.apiKey });
        expect(read.body.data).toMatchObject({ status: 'SUCCEEDED', mpesaReceiptNumber: expect.any(String) });
      }
      // One transaction per premium, credited once; duplicate callbacks credited nothing.
      const stored = await transactions.find({}).toArray();
      expect(stored.map((t) => t.policyId).sort()).toEqual(bought.map((p) => p.id).sort());
      expect(stored.filter((t) => t.status !== 'SUCCEEDED')).toEqual([]);
      const callbacks = await db.collection('provider_callbacks').find({ kind: 'STK' }).toArray();
      const credits = new Map<string, number>();
      for (const c of callbacks.filter((c) => c.outcome === 'SUCCEEDED')) {
        credits.set(String(c.transactionId), (credits.get(String(c.transactionId)) ?? 0) + 1);
      }
      expect([...credits.values()].filter((n) => n > 1)).toEqual([]);
      const byReconciliation = stored.filter((t) => t.resolvedBy === 'RECONCILIATION').length;

      // One activation job per policy (its job id), one registration on chain, one policy.activated.
      const activationJobs = await jobsPer(activationQueue, (data) => data.policyId as string);
      expect([...activationJobs.keys()].sort()).toEqual(bought.map((p) => p.id).sort());
      expect([...activationJobs.values()].filter((n) => n !== 1)).toEqual([]);
      const client = createPublicClient({ transport: http(chain.rpcUrl) });
      const logs = await client.getContractEvents({
        address: chain.registryAddress,
        abi: policyRegistryAbi,
        eventName: 'PolicyRegistered',
        fromBlock: 0n,
      });
      const refs = new Set(bought.map((p) => policyRefOf(p.id)));
      const registered = logs.filter((log) => refs.has(log.args.policyRef as `0x${string}`));
      expect(registered).toHaveLength(COLLECTIONS);
      const activated = await eventually(
        async () => {
          const counts = await jobsPer(eventsQueue, (data) =>
            data.event === 'policy.activated' ? (data.data as { policyId: string }).policyId : null,
          );
          expect(counts.size).toBe(COLLECTIONS);
          return counts;
        },
        { timeout: 30_000, interval: 200, message: 'policy.activated relayed for every policy' },
      );
      expect([...activated.values()].filter((n) => n !== 1)).toEqual([]);
      table.push({
        fault: `payments SIGKILL at the confirmation of callback ${KILL_AT_QUERY} of ${COLLECTIONS} (then: ${atKill.credited} credited, ${atKill.unsent} of them with the activation job still in their outbox, ${atKill.calledBack} called back but uncredited, ${atKill.jobs} activation jobs queued)`,
        partnersSaw: `${unanswered} callbacks unanswered (cut or refused); all ${COLLECTIONS} re-sent after the restart; ${byReconciliation} premiums settled by the reconciliation sweep; every payment SUCCEEDED, every policy ACTIVE`,
        expected: COLLECTIONS,
        done: stored.filter((t) => t.status === 'SUCCEEDED').length,
        lost: COLLECTIONS - activationJobs.size,
        duplicated:
          repeated(activationJobs) +
          repeated(activated) +
          (registered.length - refs.size) +
          [...credits.values()].reduce((n, c) => n + c - 1, 0),
      });
    } finally {
      stopWatching();
      await kill9(payments);
      await eventsQueue.close();
      await activationQueue.close();
      await redis.quit();
      await gateway.stop();
      await policy.stop();
      await simulator.close();
      await rates.close();
      await db.dropDatabase().catch(() => undefined);
      await db.close();
      await dropDatabase(policyConfig.MONGO_DB);
    }
  });
});
