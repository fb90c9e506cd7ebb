import type {
  OpsDetermination,
  PayableCursor,
  PayableDeterminations,
} from '@parametric/determinations-client';
import { originatePayout } from '../../src/payouts/originate';
import { type SweepState, sweepOriginations } from '../../src/payouts/sweep';
import { originationRetryDelay } from '../../src/payouts/workers';
import { PayoutWorld } from './payout-harness';

// The origination sweep (docs/payments.md, "Payouts"): every payable determination gets its
// payout, whatever became of its job; the sweep resumes where it stopped and never skips one it
// could not pay yet.

let w: PayoutWorld;
let cursor: PayableCursor | null;
const state: SweepState = {
  get: async () => cursor,
  set: async (next) => {
    cursor = next;
  },
};

beforeEach(() => {
  w = new PayoutWorld();
  cursor = null;
});

/** The determinations service's payable list, over the world's determinations, in its order. */
const payable: PayableDeterminations = async ({ after, issuedBefore, limit }) => {
  const key = (d: OpsDetermination) => `${d.issuedAt}|${d.determinationId}`;
  return [...w.determinations.values()]
    .filter((d) => d.status === 'ISSUED' && d.triggered && d.owed && d.owed.amountMinor !== '0')
    .filter((d) => d.settlementMode === 'DETERMINATION_AND_SETTLEMENT')
    .filter((d) => Date.parse(d.issuedAt as string) < issuedBefore.getTime())
    .filter((d) => !after || key(d) > `${after.issuedAt}|${after.id}`)
    .sort((a, b) => (key(a) < key(b) ? -1 : 1))
    .slice(0, limit);
};

const sweep = (settleMs = 60_000) =>
  sweepOriginations(
    { originate: w.originateDeps(), payable, state, settleMs, pageSize: 3, logger: w.logger },
    w.now(),
  );

/** `n` payable determinations issued a second apart; their ids, oldest first. */
function issued(n: number): string[] {
  return Array.from({ length: n }, () => {
    w.advance(1_000);
    return w.determination();
  });
}

describe('the payout origination sweep', () => {
  it('originates the payout of every payable determination that has none, page after page', async () => {
    const ids = issued(8);
    // Two already have their payout (their jobs ran).
    await originatePayout(ids[1] as string, w.originateDeps());
    await originatePayout(ids[5] as string, w.originateDeps());
    w.advance(120_000);
    expect(await sweep()).toEqual({ checked: 8, originated: 6, blocked: false });
    expect(w.store.payouts.size).toBe(8);
    expect(new Set([...w.store.payouts.values()].map((p) => p.determinationId))).toEqual(new Set(ids));
    // The next pass starts after the last one checked: nothing again.
    expect(await sweep()).toEqual({ checked: 0, originated: 0, blocked: false });
  });

  it('leaves determinations younger than the settling time to their jobs', async () => {
    const old = issued(1);
    w.advance(50_000);
    const recent = issued(1);
    expect(await sweep(30_000)).toEqual({ checked: 1, originated: 1, blocked: false });
    expect(w.store.payouts.size).toBe(1);
    expect((await w.store.byDetermination(old[0] as string))?.determinationId).toBe(old[0]);
    w.advance(31_000);
    expect(await sweep(30_000)).toEqual({ checked: 1, originated: 1, blocked: false });
    expect((await w.store.byDetermination(recent[0] as string))?.determinationId).toBe(recent[0]);
  });

  it('stops at a determination it cannot pay yet and starts from it next time: none is skipped', async () => {
    const ids = issued(5);
    w.advance(120_000);
    w.rateDown = true;
    expect(await sweep()).toEqual({ checked: 1, originated: 0, blocked: true });
    expect(await sweep()).toEqual({ checked: 1, originated: 0, blocked: true });
    expect(w.store.payouts.size).toBe(0);
    w.rateDown = false;
    expect(await sweep()).toEqual({ checked: 5, originated: 5, blocked: false });
    expect(new Set([...w.store.payouts.values()].map((p) => p.determinationId))).toEqual(new Set(ids));
  });

  it('passes a determination payouts refuse for good (owed in a currency M-Pesa does not pay), once', async () => {
    issued(1);
    w.advance(1_000);
    w.determination({ currency: 'GHS' });
    issued(1);
    w.advance(120_000);
    expect(await sweep()).toEqual({ checked: 3, originated: 2, blocked: false });
    expect(await sweep()).toEqual({ checked: 0, originated: 0, blocked: false });
  });
});

describe('the origination job’s retry delay', () => {
  it('doubles from a second and stays at five minutes, so retries go on for the whole budget', () => {
    expect(originationRetryDelay(0)).toBe(1_000);
    expect(originationRetryDelay(1_000)).toBe(1_000);
    expect(originationRetryDelay(3_000)).toBe(3_000);
    expect(originationRetryDelay(60_000)).toBe(60_000);
    expect(originationRetryDelay(24 * 3_600_000)).toBe(300_000);
    // Tries within 24 hours: ~9 while the delay grows to five minutes, then one every five minutes.
    let age = 0;
    let tries = 0;
    while (age < 24 * 3_600_000) {
      age += originationRetryDelay(age);
      tries++;
    }
    expect(tries).toBeGreaterThan(280);
  });
});
