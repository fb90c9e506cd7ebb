/**
 * The pace of `payout-attempts` against Daraja's spike arrest, which refuses a request when the
 * last second already holds the allowed number (tools/mpesa-simulator/src/server.ts,
 * `spikeArrest`; services/payments/src/provider/README.md, `THROTTLED`). The worker's limiter
 * (`darajaPacing`, services/payments/src/payouts/workers.ts) must keep every second of job starts
 * at the limit, give or take one at a window's edge, however the jobs arrive — on real BullMQ
 * and a real Redis.
 */
import { createProducer, createWorker } from '@parametric/queue';
import { testRedisUrl, uniqueRedisPrefix } from '@parametric/test-harness';
import { darajaPacing } from '../src/payouts/workers';

const MAX_PER_SECOND = 10;

/** The most starts any window of one second (sliding, not calendar) holds. */
function busiestSecond(starts: number[]): number {
  let busiest = 0;
  for (let i = 0; i < starts.length; i++) {
    let j = i;
    while (j < starts.length && (starts[j] as number) - (starts[i] as number) < 1000) j++;
    busiest = Math.max(busiest, j - i);
  }
  return busiest;
}

const payload = (n: number) => ({
  payoutId: `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
  part: 1,
});

/**
 * The start times of `total` attempts through a worker paced for `maxPerSecond`: one attempt
 * opens a window, the rest arrive near its end. A limiter of `maxPerSecond` per 1000 ms lets
 * `maxPerSecond − 1` of them through in that window and `maxPerSecond` more as the next opens:
 * almost twice the limit within one second.
 */
async function startsOfLateBurst(
  maxPerSecond: number,
  total: number,
  closers: Array<() => Promise<void>>,
): Promise<number[]> {
  const prefix = uniqueRedisPrefix('pacing');
  const starts: number[] = [];
  let allStarted: () => void = () => {};
  const done = new Promise<void>((resolve) => {
    allStarted = resolve;
  });
  const worker = createWorker(
    'payout-attempts',
    async () => {
      starts.push(performance.now());
      if (starts.length === total) allStarted();
    },
    { connection: testRedisUrl(), prefix, concurrency: 4, limiter: darajaPacing(maxPerSecond) },
  );
  const producer = createProducer('payout-attempts', { connection: testRedisUrl(), prefix });
  closers.push(
    () => worker.close(),
    () => producer.close(),
  );

  await producer.add(payload(0), { jobId: 'p-0' });
  await new Promise((resolve) => setTimeout(resolve, 900));
  await Promise.all(
    Array.from({ length: total - 1 }, (_, i) => producer.add(payload(i + 1), { jobId: `p-${i + 1}` })),
  );
  await done;
  return starts;
}

describe('darajaPacing', () => {
  const closers: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const close of closers.splice(0)) await close();
  });

  it('keeps any second of B2C attempts at the limit (+1) when a burst arrives late in a window', async () => {
    const starts = await startsOfLateBurst(MAX_PER_SECOND, 2 * MAX_PER_SECOND, closers);
    expect(starts).toHaveLength(2 * MAX_PER_SECOND);
    expect(busiestSecond(starts)).toBeLessThanOrEqual(MAX_PER_SECOND + 1);
  }, 30_000);

  it('holds at another limit (MPESA_B2C_MAX_PER_SECOND = 40): a burst of three seconds of attempts all start, none above 41 a second', async () => {
    const max = 40;
    const starts = await startsOfLateBurst(max, 3 * max, closers);
    expect(starts).toHaveLength(3 * max);
    expect(busiestSecond(starts)).toBeLessThanOrEqual(max + 1);
  }, 30_000);
});
