/**
 * Tier 2 premiums through the platform as `npm start` runs it (gateway, policy, payments as
 * their own processes; the M-Pesa simulator in this process, over HTTP): N premium collections
 * in parallel, each `POST /api/payments/initiate` → STK push → the simulator's callback → STK
 * query → SUCCEEDED with the `policy-activations` job sent. Printed: initiations/s and their p99,
 * the rate of confirmed premiums (first request to the last job sent), and beside them, in the
 * same run, the bare rate of the same STK pushes sent straight to the simulator with the same
 * client. Medians of ROUNDS rounds.
 *
 * Payouts: PAYOUTS triggered Tier 2 determinations through the ops batch door at once (a drought
 * day's burst) → each one's `payout-originations` job → the payout, its amount read from the
 * determination, quoted, paid by B2C through the rate-limited attempt queue, its Result called
 * back → COMPLETED. Printed:
 * the observed payout rate against `MPESA_B2C_MAX_PER_SECOND` (the pace the queue must keep to
 * stay under Daraja's spike arrest), and the p99 time from origination to COMPLETED.
 *
 *   npm run bench:payments                       # 3 rounds of 500 premiums; 1,000 payouts at 20/s
 *   BENCH_PREMIUMS=200 BENCH_ROUNDS=1 BENCH_PAYOUTS=200 npm run bench:payments
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { startLocalMongo } from '@parametric/embedded-mongo';
import { startLocalChain } from '@parametric/local-chain';
import { freePort } from '@parametric/local-process';
import { startLocalRedis } from '@parametric/local-redis';
import { startMpesaSimulator } from '@parametric/mpesa-simulator';
import { startRateSimulator } from '@parametric/rate-simulator';
import mongoose from 'mongoose';
import { generateSigningKeyPem } from '../services/determinations/src/signing/keys';
import { createDaraja } from '../services/payments/src/provider';
import { json, median, startProcess, stopProcesses, waitReady } from './support/run';

const PREMIUMS = Number(process.env.BENCH_PREMIUMS ?? 500);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const IN_FLIGHT = Number(process.env.BENCH_CONCURRENCY ?? 20);
const PAYOUTS = Number(process.env.BENCH_PAYOUTS ?? 1_000);
const B2C_PER_SECOND = Number(process.env.MPESA_B2C_MAX_PER_SECOND ?? 20);
const DAY = 86_400_000;
const MPESA = {
  consumerKey: 'bench-consumer-key',
  consumerSecret: 'bench-consumer-secret-0123456789',
  shortcode: '174379',
  passkey: 'bench-passkey-0123456789abcdef',
  b2cShortcode: '600000',
};

function p99(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))] as number;
}

/** Runs `task(i)` for i in 0..n-1, `inFlight` at a time; each task's duration in ms. */
async function pool(n: number, inFlight: number, task: (i: number) => Promise<void>): Promise<number[]> {
  const durations: number[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < n) {
        const i = next++;
        const started = performance.now();
        await task(i);
        durations.push(performance.now() - started);
      }
    }),
  );
  return durations;
}

async function main(): Promise<void> {
  const [mongo, redis, chain] = await Promise.all([startLocalMongo(), startLocalRedis(), startLocalChain()]);
  const simulator = await startMpesaSimulator({ ...MPESA, callbackDelayMs: 50 });
  const rates = await startRateSimulator();
  const children: ChildProcess[] = [];
  const policyDb = mongoose.createConnection(mongo.url, { dbName: 'policy' });
  const paymentsDb = mongoose.createConnection(mongo.url, { dbName: 'payments' });
  try {
    const [gatewayPort, opsPort, policyPort, paymentsPort, callbackPort, determinationsPort] =
      await Promise.all(Array.from({ length: 6 }, () => freePort()));
    const opsToken = randomBytes(24).toString('hex');
    const shared = {
      ...process.env,
      LOG_LEVEL: 'warn',
      MONGO_URL: mongo.url,
      REDIS_URL: redis.url,
      INTERNAL_SIGNING_SECRET: randomBytes(24).toString('hex'),
    };
    children.push(
      startProcess('services/policy/src/main.ts', {
        ...shared,
        POLICY_HOST: '127.0.0.1',
        POLICY_PORT: String(policyPort),
        CHAIN_RPC_URL: chain.rpcUrl,
        CHAIN_REGISTRY_ADDRESS: chain.registryAddress,
        CHAIN_PRIVATE_KEY: chain.ownerPrivateKey,
      }),
      startProcess('services/payments/src/main.ts', {
        ...shared,
        PAYMENTS_HOST: '127.0.0.1',
        PAYMENTS_PORT: String(paymentsPort),
        PAYMENTS_CALLBACK_HOST: '127.0.0.1',
        PAYMENTS_CALLBACK_PORT: String(callbackPort),
        PAYMENTS_CALLBACK_BASE_URL: `http://127.0.0.1:${callbackPort}`,
        PAYMENTS_CALLBACK_TOKEN: randomBytes(16).toString('hex'),
        POLICY_URL: `http://127.0.0.1:${policyPort}`,
        DETERMINATIONS_URL: `http://127.0.0.1:${determinationsPort}`,
        MPESA_BASE_URL: simulator.url,
        MPESA_CONSUMER_KEY: MPESA.consumerKey,
        MPESA_CONSUMER_SECRET: MPESA.consumerSecret,
        MPESA_SHORTCODE: MPESA.shortcode,
        MPESA_PASSKEY: MPESA.passkey,
        MPESA_B2C_SHORTCODE: MPESA.b2cShortcode,
        MPESA_INITIATOR_NAME: 'bench',
        MPESA_SECURITY_CREDENTIAL: 'bench-security-credential',
        RATE_SOURCE_URL: rates.url,
        MPESA_B2C_MAX_PER_SECOND: String(B2C_PER_SECOND),
      }),
      startProcess('services/determinations/src/main.ts', {
        ...shared,
        DETERMINATIONS_HOST: '127.0.0.1',
        DETERMINATIONS_PORT: String(determinationsPort),
        POLICY_URL: `http://127.0.0.1:${policyPort}`,
        DETERMINATION_SIGNING_KEYS: generateSigningKeyPem(),
      }),
      startProcess('services/gateway/src/main.ts', {
        ...shared,
        GATEWAY_PORT: String(gatewayPort),
        OPS_PORT: String(opsPort),
        OPS_TOKEN: opsToken,
        API_KEY_PEPPER: randomBytes(24).toString('hex'),
        POLICY_URL: `http://127.0.0.1:${policyPort}`,
        PAYMENTS_URL: `http://127.0.0.1:${paymentsPort}`,
        DETERMINATIONS_URL: `http://127.0.0.1:${determinationsPort}`,
        RATE_LIMIT_POINTS: '1000000000',
        PAYMENTS_INITIATE_LIMIT_POINTS: '1000000000',
      }),
    );
    await waitReady([gatewayPort, policyPort, paymentsPort, determinationsPort]);
    await Promise.all([policyDb.asPromise(), paymentsDb.asPromise()]);
    const api = `http://127.0.0.1:${gatewayPort}/api`;
    const ops = `http://127.0.0.1:${opsPort}/ops`;
    const { organization } = await json<{ organization: { id: string; apiKey: string } }>(
      `${api}/auth/register-organization`,
      {
        method: 'POST',
        body: JSON.stringify({ name: 'Bench Tier 2', type: 'COOPERATIVE', countryCode: 'KE' }),
      },
    );
    for (const [path, body] of [
      ['kyb', { status: 'VERIFIED' }],
      ['service-tier', { serviceTier: 'DETERMINATION_AND_SETTLEMENT' }],
    ] as const) {
      await json(`${ops}/organizations/${organization.id}/${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${opsToken}` },
        body: JSON.stringify(body),
      });
    }
    const key = { 'x-api-key': organization.apiKey };
    const daraja = createDaraja({
      baseUrl: simulator.url,
      ...MPESA,
      initiatorName: 'bench',
      securityCredential: 'bench-security-credential',
      timeoutMs: 10_000,
      breakerResetMs: 30_000,
    });

    const initiateRates: number[] = [];
    const initiateP99s: number[] = [];
    const confirmedRates: number[] = [];
    const bareRates: number[] = [];
    const bareP99s: number[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      // PENDING Tier 2 policies written straight into the policy service's collection: the
      // setup, not what is measured (bench:policy measures purchases).
      const now = Date.now();
      const policyIds = Array.from({ length: PREMIUMS }, () => randomUUID());
      await policyDb.collection('policies').insertMany(
        policyIds.map((id, i) => ({
          _id: id,
          organizationId: organization.id,
          policyNumber: `KE-2026${String(round).padStart(2, '0')}-P${i.toString(36).toUpperCase().padStart(5, '0')}`,
          farmerId: randomUUID(),
          productType: 'CROP',
          plotId: randomUUID(),
          herdId: null,
          season: null,
          coverageType: 'DROUGHT',
          durationDays: 180,
          currency: 'KES',
          exponent: 2,
          sumInsuredMinor: 5_000_000n,
          premiumMinor: 147_900n,
          rateTableVersion: 'bench',
          settlementMode: 'DETERMINATION_AND_SETTLEMENT',
          status: 'PENDING',
          premiumPaid: false,
          damageAssessments: [],
          payouts: [],
          outbox: [],
          outboxPending: false,
          createdAt: new Date(now - DAY),
          updatedAt: new Date(now - DAY),
        })) as never[],
      );

      const started = performance.now();
      const latencies = await pool(PREMIUMS, IN_FLIGHT, async (i) => {
        await json(`${api}/payments/initiate`, {
          method: 'POST',
          headers: key,
          body: JSON.stringify({ reference: policyIds[i], amount: 1479, phoneNumber: '+254711000001' }),
        });
      });
      const initiateSeconds = (performance.now() - started) / 1000;
      // Confirmed: SUCCEEDED, and its activation job has left the outbox.
      for (let polls = 0; ; polls++) {
        if (process.env.BENCH_DEBUG && polls % 40 === 0) {
          const byStatus = await paymentsDb
            .collection('payment_transactions')
            .aggregate([
              { $group: { _id: { status: '$status', pending: '$jobOutboxPending' }, n: { $sum: 1 } } },
            ])
            .toArray();
          const outcomes = await paymentsDb
            .collection('provider_callbacks')
            .aggregate([{ $group: { _id: '$outcome', n: { $sum: 1 } } }])
            .toArray();
          console.log(JSON.stringify({ byStatus, outcomes }));
        }
        const done = await paymentsDb.collection('payment_transactions').countDocuments({
          policyId: { $in: policyIds },
          status: 'SUCCEEDED',
          jobOutboxPending: false,
        });
        if (done === PREMIUMS) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      const confirmedSeconds = (performance.now() - started) / 1000;

      const bareStarted = performance.now();
      const bare = await pool(PREMIUMS, IN_FLIGHT, async (i) => {
        await daraja.stkPush({
          amount: 1479,
          phone: '+254711000090',
          accountReference: `BARE${i}`,
          description: 'Premium',
          callbackUrl: 'http://127.0.0.1:9/none',
        });
      });
      const bareSeconds = (performance.now() - bareStarted) / 1000;

      initiateRates.push(PREMIUMS / initiateSeconds);
      initiateP99s.push(p99(latencies));
      confirmedRates.push(PREMIUMS / confirmedSeconds);
      bareRates.push(PREMIUMS / bareSeconds);
      bareP99s.push(p99(bare));
      console.log(
        `round ${round}: initiate ${(PREMIUMS / initiateSeconds).toFixed(0)}/s (p99 ${p99(latencies).toFixed(0)} ms), confirmed ${(PREMIUMS / confirmedSeconds).toFixed(0)}/s, bare STK push ${(PREMIUMS / bareSeconds).toFixed(0)}/s (p99 ${p99(bare).toFixed(0)} ms)`,
      );
    }
    await daraja.close();

    // Payouts: a burst of originations for ACTIVE Tier 2 policies whose farmers the simulator pays.
    const now = Date.now();
    const farmers = Array.from({ length: PAYOUTS }, (_, i) => ({
      _id: randomUUID(),
      organizationId: organization.id,
      firstName: 'Bench',
      lastName: `Farmer ${i}`,
      phoneNumber: `+2547${String(22_100_000 + i).padStart(8, '0')}`,
      nationalId: `BENCH${String(i).padStart(6, '0')}`,
      region: 'Nakuru',
      location: null,
      kycStatus: 'APPROVED',
      createdAt: new Date(now - DAY),
      updatedAt: new Date(now - DAY),
    }));
    await policyDb.collection('farmers').insertMany(farmers as never[]);
    const paid = farmers.map((f, i) => ({
      _id: randomUUID(),
      organizationId: organization.id,
      policyNumber: `KE-202699-Q${i.toString(36).toUpperCase().padStart(5, '0')}`,
      farmerId: f._id,
      productType: 'CROP',
      plotId: randomUUID(),
      herdId: null,
      season: null,
      coverageType: 'DROUGHT',
      durationDays: 180,
      currency: 'KES',
      exponent: 2,
      sumInsuredMinor: 5_000_000n,
      premiumMinor: 147_900n,
      rateTableVersion: 'bench',
      settlementMode: 'DETERMINATION_AND_SETTLEMENT',
      status: 'ACTIVE',
      premiumPaid: true,
      coverStartsAt: new Date(now - 10 * DAY),
      coverEndsAt: new Date(now + 170 * DAY),
      damageAssessments: [],
      payouts: [],
      outbox: [],
      outboxPending: false,
      createdAt: new Date(now - 11 * DAY),
      updatedAt: new Date(now - 10 * DAY),
    }));
    await policyDb.collection('policies').insertMany(paid as never[]);
    // A triggered determination of 25% on each (12,500 KES owed), through the ops batch door.
    const payoutsStarted = performance.now();
    const determinationIds: string[] = [];
    for (let i = 0; i < paid.length; i += 1_000) {
      const items = paid.slice(i, i + 1_000).map((policy) => ({
        idempotencyKey: `bench-payout-${policy._id}`,
        policyId: policy._id,
        kind: 'CROP_DAMAGE',
        methodologyVersion: 'bench-v1',
        triggered: true,
        damagePercentBp: 2_500,
        assessedAt: new Date(now - 60_000).toISOString(),
        evidence: {
          indexName: 'CHIRPS cumulative rainfall deficit',
          indexValue: 41.5,
          triggerThreshold: 60,
          exitThreshold: 20,
          dataSource: 'CHIRPS',
          dataSourceVersion: '2.0',
          periodStart: new Date(now - 5 * DAY).toISOString(),
          periodEnd: new Date(now - DAY).toISOString(),
          inputDataHashes: [{ name: 'bench.tif', sha256: 'a'.repeat(64) }],
          location: { latitude: -0.3031, longitude: 36.08 },
        },
      }));
      const result = await json<{
        results: { status: number; determination?: { determinationId: string } }[];
      }>(`${ops}/determinations/batch`, {
        method: 'POST',
        headers: { authorization: `Bearer ${opsToken}` },
        body: JSON.stringify({ items }),
      });
      for (const r of result.results) {
        if (r.status !== 201 || !r.determination)
          throw new Error(`a determination was refused: ${JSON.stringify(r)}`);
        determinationIds.push(r.determination.determinationId);
      }
    }
    for (;;) {
      const done = await paymentsDb.collection('payouts').countDocuments({
        determinationId: { $in: determinationIds },
        status: { $in: ['COMPLETED', 'FAILED'] },
      });
      if (done === PAYOUTS) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    const payoutSeconds = (performance.now() - payoutsStarted) / 1000;
    const settled = await paymentsDb
      .collection('payouts')
      .find({ determinationId: { $in: determinationIds } })
      .project({ status: 1, createdAt: 1, updatedAt: 1 })
      .toArray();
    const completed = settled.filter((x) => x.status === 'COMPLETED').length;
    const toCompleted = settled.map(
      (x) => (x.updatedAt as Date).getTime() - payoutsStarted - performance.timeOrigin,
    );
    const b2c = simulator.requests().filter((r) => r.path === '/mpesa/b2c/v3/paymentrequest').length;

    const initiate = median(initiateRates);
    const bare = median(bareRates);
    console.log(`
Premiums: ${PREMIUMS} per round, ${IN_FLIGHT} in flight; medians of ${ROUNDS} round(s)
  POST /api/payments/initiate (gateway → payments → STK push): ${initiate.toFixed(0)}/s, p99 ${median(initiateP99s).toFixed(0)} ms
  confirmed (callback → STK query → SUCCEEDED → activation job sent): ${median(confirmedRates).toFixed(0)}/s
  bare STK push to the simulator, same client:                 ${bare.toFixed(0)}/s, p99 ${median(bareP99s).toFixed(0)} ms
  ratio initiate / bare:                                        ${((100 * initiate) / bare).toFixed(1)}%

Payouts: ${PAYOUTS} originations at once, MPESA_B2C_MAX_PER_SECOND=${B2C_PER_SECOND}
  completed: ${completed}/${PAYOUTS} (B2C requests the simulator received: ${b2c})
  observed pace: ${(PAYOUTS / payoutSeconds).toFixed(1)} payouts/s over ${payoutSeconds.toFixed(1)} s (limit ${B2C_PER_SECOND}/s)
  origination to COMPLETED, p99: ${(p99(toCompleted) / 1000).toFixed(1)} s`);
  } finally {
    await Promise.all([policyDb.close(), paymentsDb.close()]).catch(() => undefined);
    await stopProcesses(children);
    await Promise.all([simulator.close(), rates.close()]);
    await Promise.all([mongo.stop(), redis.stop(), chain.stop()]);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
