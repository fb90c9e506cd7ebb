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

describe('darajaPacing', () => {
  const closers: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const close of closers.splice(0)) await close();
  });

  it('keeps any second of B2C attempts at the limit (+1) when a burst arrives late in a window', async () => {
    const prefix = uniqueRedisPrefix('pacing');
    const starts: number[] = [];
    let allStarted: () => void = () => {};
    const done = new Promise<void>((resolve) => {
      allStarted = resolve;
    });
    const total = 2 * MAX_PER_SECOND;
    const worker = createWorker(
      'payout-attempts',
      async () => {
        starts.push(performance.now());
        if (starts.length === total) allStarted();
      },
      { connection: testRedisUrl(), prefix, concurrency: 4, limiter: darajaPacing(MAX_PER_SECOND) },
    );
    const producer = createProducer('payout-attempts', { connection: testRedisUrl(), prefix });
    closers.push(
      () => worker.close(),
      () => producer.close(),
    );

    // One attempt opens a window; the rest arrive near its end. A limiter of MAX_PER_SECOND
    // per 1000 ms lets MAX_PER_SECOND − 1 of them through in that window and MAX_PER_SECOND
    // more as the next opens: almost twice the limit within one second.
    await producer.add(payload(0), { jobId: 'p-0' });
    await new Promise((resolve) => setTimeout(resolve, 900));
    await Promise.all(
      Array.from({ length: total - 1 }, (_, i) => producer.add(payload(i + 1), { jobId: `p-${i + 1}` })),
    );
    await done;

    expect(starts).toHaveLength(total);
    expect(busiestSecond(starts)).toBeLessThanOrEqual(MAX_PER_SECOND + 1);
  }, 30_000);

  it('spaces starts evenly at the limit: 1000 / max ms each, never slower than the limit allows', () => {
    for (const max of [1, 3, 7, 20, 60, 1000]) {
      const { max: perWindow, duration } = darajaPacing(max);
      expect(perWindow).toBe(1);
      // Never above the limit over a second...
      expect(Math.floor(1000 / duration)).toBeLessThanOrEqual(max);
      // ...and within one window's rounding of it.
      expect(1000 / (duration - 1)).toBeGreaterThan(max - 1);
    }
  });
});
