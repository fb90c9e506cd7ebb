import { randomUUID } from 'node:crypto';
import { createLogger } from '@parametric/logger';
import { type RateSimulator, startRateSimulator } from '@parametric/rate-simulator';
import { captureLogs, connectMongoose, type MongooseHandle, outcome } from '@parametric/test-harness';
import { createQuote, quotesOf } from '../../src/quotes/domain';
import { createRateGuard, type RateLimits, type RateReferenceStore } from '../../src/quotes/guard';
import { quoteModel } from '../../src/quotes/model';
import { type RateSource, RateSourceError, type RateSourceErrorCode } from '../../src/quotes/rates';
import { mongoRateReferences, RATE_REFERENCE_ID, rateReferenceModel } from '../../src/quotes/reference';
import { manualClock, rateSourceFor, T0 } from './support';

// The guard through the real rate source: the rate simulator serves well-formed rates over HTTP,
// the reference is the MongoDB store a service uses (one database = one deployment, several
// rate sources on it = several replicas, a new one = a restart).

const LIMITS: RateLimits = { min: '50', max: '500', maxStepPercent: '10' };
const HOUR = 60 * 60 * 1000;

let mongo: MongooseHandle;
let simulator: RateSimulator;
const sources: RateSource[] = [];

beforeEach(async () => {
  mongo = await connectMongoose('payments-rate-guard');
  simulator = await startRateSimulator();
});

afterEach(async () => {
  await Promise.all(sources.splice(0).map((s) => s.close()));
  await simulator.close();
  await mongo.close();
});

/** One replica's rate source on the test's database, with its own clock, logs and refusal count. */
function replica(
  options: {
    clock?: ReturnType<typeof manualClock>;
    store?: RateReferenceStore;
    volumeThreshold?: number;
    cacheSeconds?: number;
  } = {},
) {
  const clock = options.clock ?? manualClock();
  const logs = captureLogs();
  const refused: string[] = [];
  const guard = createRateGuard({
    limits: LIMITS,
    store: options.store ?? mongoRateReferences(mongo.connection),
    logger: createLogger({ name: 'rate-guard-test', level: 'info', destination: logs.destination }),
    onRefused: (code) => refused.push(code),
  });
  const rates = rateSourceFor(simulator.url, {
    now: clock.now,
    guard,
    volumeThreshold: options.volumeThreshold ?? 100,
    cacheSeconds: options.cacheSeconds ?? 30,
  });
  sources.push(rates);
  return { rates, clock, logs, refused };
}

async function failure(call: Promise<unknown>): Promise<RateSourceErrorCode> {
  try {
    await call;
  } catch (err) {
    if (err instanceof RateSourceError) return err.code;
    throw err;
  }
  throw new Error('expected the call to fail');
}

const storedReference = () => rateReferenceModel(mongo.connection).findById(RATE_REFERENCE_ID).lean().exec();

describe('bounds', () => {
  it('the first rate ever, absurd but well formed (0.000001 KES per USDC), is refused, logged and counted', async () => {
    const { rates, logs, refused } = replica();
    simulator.setRate('0.000001');
    expect(await failure(rates.usdcPerKes())).toBe('OUT_OF_BOUNDS');
    expect(refused).toEqual(['OUT_OF_BOUNDS']);
    expect(logs.records()).toEqual([
      expect.objectContaining({
        level: 50,
        code: 'OUT_OF_BOUNDS',
        kesPerUsdc: '0.000001',
        min: '50',
        max: '500',
      }),
    ]);
    // Nothing of where the source is.
    expect(logs.text()).not.toContain(new URL(simulator.url).host);
    // A refused rate is no reference for anyone.
    expect(await storedReference()).toBeNull();
  });

  it('a refused rate is never cached: the next call asks again and serves a sane rate', async () => {
    const { rates } = replica();
    simulator.setRate('5000');
    expect(await failure(rates.usdcPerKes())).toBe('OUT_OF_BOUNDS');
    simulator.setRate('129.45');
    expect((await rates.usdcPerKes()).kesPerUsdc).toBe('129.45');
    expect(simulator.requests()).toBe(2);
    expect(await storedReference()).toMatchObject({ kesPerUsdc: '129.45', acceptedAt: T0 });
  });

  it('counts towards the breaker like a failing source: repeated refusals open it', async () => {
    const { rates, refused } = replica({ volumeThreshold: 3 });
    simulator.setRate('0.000001');
    for (let i = 0; i < 3; i++) expect(await failure(rates.usdcPerKes())).toBe('OUT_OF_BOUNDS');
    expect(rates.breakerState()).toBe('open');
    simulator.setRate('129.45');
    expect(await failure(rates.usdcPerKes())).toBe('BREAKER_OPEN');
    expect(simulator.requests()).toBe(3);
    // Failing fast is not another refusal.
    expect(refused).toHaveLength(3);
  });
});

describe('step, from the last accepted rate within the hour', () => {
  it('refuses a move of more than 10 % up or down; exactly 10 % and less are accepted and become the reference', async () => {
    const { rates, clock, refused } = replica();
    simulator.setRate('100');
    await rates.usdcPerKes();
    for (const [rate, code] of [
      ['110.01', 'STEP_TOO_LARGE'],
      ['89.99', 'STEP_TOO_LARGE'],
      ['110', 'ACCEPTED'], // now the reference: 10 % of 110 is 11
      ['121.01', 'STEP_TOO_LARGE'],
      ['99', 'ACCEPTED'],
    ] as const) {
      clock.advance(30_000); // past the cache
      simulator.setRate(rate);
      const got = await rates.usdcPerKes().then(
        (r) => (r.kesPerUsdc === rate ? 'ACCEPTED' : `served ${r.kesPerUsdc}`),
        (err: RateSourceError) => err.code,
      );
      expect([rate, got]).toEqual([rate, code]);
    }
    expect(refused).toEqual(['STEP_TOO_LARGE', 'STEP_TOO_LARGE', 'STEP_TOO_LARGE']);
    expect(await storedReference()).toMatchObject({
      kesPerUsdc: '99',
      acceptedAt: new Date(T0.getTime() + 150_000),
    });
  });

  it('ignores a reference an hour old or older: a genuine large move is accepted then', async () => {
    const { rates, clock } = replica();
    simulator.setRate('100');
    await rates.usdcPerKes();
    simulator.setRate('130');
    clock.advance(HOUR - 1);
    expect(await failure(rates.usdcPerKes())).toBe('STEP_TOO_LARGE');
    clock.advance(1);
    expect((await rates.usdcPerKes()).kesPerUsdc).toBe('130');
    expect(await storedReference()).toMatchObject({
      kesPerUsdc: '130',
      acceptedAt: new Date(T0.getTime() + HOUR),
    });
    // …and the step applies again from the new reference.
    clock.advance(30_000);
    simulator.setRate('100');
    expect(await failure(rates.usdcPerKes())).toBe('STEP_TOO_LARGE');
  });

  it('is shared by the replicas and kept across a restart (the reference is in MongoDB)', async () => {
    const clock = manualClock();
    const first = replica({ clock });
    simulator.setRate('129.45');
    await first.rates.usdcPerKes();

    // Another replica, which has never fetched: the reference is the first one's.
    clock.advance(60_000);
    simulator.setRate('150');
    const second = replica({ clock });
    expect(await failure(second.rates.usdcPerKes())).toBe('STEP_TOO_LARGE');
    expect(second.refused).toEqual(['STEP_TOO_LARGE']);

    // Every replica gone, one started again: still the same reference.
    await Promise.all(sources.splice(0).map((s) => s.close()));
    const restarted = replica({ clock });
    expect(await failure(restarted.rates.usdcPerKes())).toBe('STEP_TOO_LARGE');
    simulator.setRate('131');
    expect((await restarted.rates.usdcPerKes()).kesPerUsdc).toBe('131');
    // The first replica's acceptance is older, so this one is now the reference for all.
    expect(await storedReference()).toMatchObject({ kesPerUsdc: '131', acceptedAt: clock.now() });
  });
});

describe('the reference in MongoDB', () => {
  it('is replaced only by a later acceptance (a replica recording late does not put an older rate back)', async () => {
    const store = mongoRateReferences(mongo.connection);
    expect(await store.read()).toBeNull();
    const at = (ms: number) => new Date(T0.getTime() + ms);
    await store.record({ kesPerUsdc: '129.45', acceptedAt: at(60_000), source: 'a' });
    await store.record({ kesPerUsdc: '128', acceptedAt: at(30_000), source: 'b' });
    await store.record({ kesPerUsdc: '127', acceptedAt: at(60_000), source: 'b' });
    expect(await store.read()).toEqual({ kesPerUsdc: '129.45', acceptedAt: at(60_000) });
    // Several replicas at once: the latest wins, whatever order the writes land in.
    await Promise.all(
      [5, 3, 9, 1, 7].map((n) =>
        store.record({ kesPerUsdc: `13${n}`, acceptedAt: at(60_000 + n), source: 'c' }),
      ),
    );
    expect(await store.read()).toEqual({ kesPerUsdc: '139', acceptedAt: at(60_009) });
    expect(await rateReferenceModel(mongo.connection).countDocuments()).toBe(1);
  });

  it('a document that is not a reference is an error, never a reference', async () => {
    await rateReferenceModel(mongo.connection).collection.insertOne({
      _id: RATE_REFERENCE_ID as never,
      kesPerUsdc: 129.45,
      acceptedAt: T0,
      source: 'hand',
    });
    await expect(mongoRateReferences(mongo.connection).read()).rejects.toThrow(/unreadable/);
  });

  it('a database failure is thrown as it is, not counted by the breaker, and the source is not asked', async () => {
    const down: RateReferenceStore = {
      read: () => Promise.reject(new Error('database unavailable')),
      record: () => Promise.reject(new Error('database unavailable')),
    };
    const { rates } = replica({ store: down, volumeThreshold: 1 });
    for (let i = 0; i < 3; i++) {
      const err = await rates.usdcPerKes().catch((e: unknown) => e);
      expect(err).not.toBeInstanceOf(RateSourceError);
      expect((err as Error).message).toBe('database unavailable');
    }
    expect(rates.breakerState()).toBe('closed');
    expect(simulator.requests()).toBe(0);
  });
});

describe('createQuote (POST /payments/quote and payout originations alike)', () => {
  it('an absurd rate is 502 PAYMENT_ERROR with nothing stored; 1,000 KES is never quoted as 1,000,000,000 USDC', async () => {
    const model = quoteModel(mongo.connection);
    const tenant = quotesOf(model, randomUUID());
    const { rates, clock } = replica();
    simulator.setRate('0.000001');
    const deps = { rates, now: clock.now, ttlSeconds: 300 };
    const input = { amount: 1000, fromCurrency: 'KES' as const, toCurrency: 'USDC' as const };
    expect(await outcome(createQuote(tenant, input, deps))).toEqual({
      code: 'PAYMENT_ERROR',
      message:
        'No current KES→USDC exchange rate is available (the rate source gave a KES rate outside the range we accept); nothing was quoted, try again shortly',
      details: undefined,
    });
    expect(await model.countDocuments({})).toBe(0);

    simulator.setRate('129.45');
    expect(await outcome(createQuote(tenant, input, deps))).toMatchObject({
      ok: { convertedAmount: '7.724990', sourceRate: '129.45' },
    });
  });
});
