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
import { createDaraja } from '../services/payments/src/provider';
import { payoutBurst } from './support/drought';
import { insertPolicies, MPESA, startPlatform } from './support/platform';
import { json, median } from './support/run';

const PREMIUMS = Number(process.env.BENCH_PREMIUMS ?? 500);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const IN_FLIGHT = Number(process.env.BENCH_CONCURRENCY ?? 20);
const PAYOUTS = Number(process.env.BENCH_PAYOUTS ?? 1_000);
const B2C_PER_SECOND = Number(process.env.MPESA_B2C_MAX_PER_SECOND ?? 20);

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
  // Without the simulator's spike arrest: the premiums (and their bare baseline) are sent as fast
  // as 20 callers ask, which no arrest at the B2C pace would let through (every prompt past the
  // 20th in a second refused `500.003.02`, the bench stopped at the first). The payout pace
  // against the arrest is target 2's, measured by `BENCH_MODE=tier2 npm run bench:determinations`.
  const platform = await startPlatform({ payments: true, b2cPerSecond: B2C_PER_SECOND, spikeArrest: false });
  const simulator = platform.simulator as NonNullable<typeof platform.simulator>;
  const { api, paymentsDb } = platform;
  try {
    const [organization] = await platform.registerPartners(1, { tier2: true, name: 'Bench Tier 2' });
    if (!organization) throw new Error('no organization');
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
      const policyIds = (
        await insertPolicies(platform.policyDb, {
          organizations: [organization.id],
          count: PREMIUMS,
          tag: `2026P${round}`,
          tier2: true,
          status: 'PENDING',
        })
      ).map((p) => p.id);

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
    const burst = await payoutBurst(platform, [organization], 'P', PAYOUTS);
    const { completed, seconds: payoutSeconds } = burst;
    const b2c = burst.b2c.accepted;
    const initiate = median(initiateRates);
    const bare = median(bareRates);
    console.log(`
Premiums: ${PREMIUMS} per round, ${IN_FLIGHT} in flight; medians of ${ROUNDS} round(s)
  POST /api/payments/initiate (gateway → payments → STK push): ${initiate.toFixed(0)}/s, p99 ${median(initiateP99s).toFixed(0)} ms
  confirmed (callback → STK query → SUCCEEDED → activation job sent): ${median(confirmedRates).toFixed(0)}/s
  bare STK push to the simulator, same client:                 ${bare.toFixed(0)}/s, p99 ${median(bareP99s).toFixed(0)} ms
  ratio initiate / bare:                                        ${((100 * initiate) / bare).toFixed(1)}%

Payouts: ${PAYOUTS} originations at once, MPESA_B2C_MAX_PER_SECOND=${B2C_PER_SECOND} (the simulator's spike arrest off)
  completed: ${completed}/${PAYOUTS} (B2C requests the simulator received: ${b2c})
  observed pace: ${(PAYOUTS / payoutSeconds).toFixed(1)} payouts/s over ${payoutSeconds.toFixed(1)} s (limit ${B2C_PER_SECOND}/s)
  origination to COMPLETED, p99: ${burst.toCompletedP99Seconds.toFixed(1)} s`);
  } finally {
    await platform.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
