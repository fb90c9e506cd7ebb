import { randomUUID } from 'node:crypto';
import { type RateSimulator, startRateSimulator } from '@parametric/rate-simulator';
import { connectMongoose, type MongooseHandle, outcome } from '@parametric/test-harness';
import fc from 'fast-check';
import { createQuote, type QuoteDeps, quotesOf, readQuote } from '../../src/quotes/domain';
import { type QuoteModel, quoteModel } from '../../src/quotes/model';
import type { RateSource } from '../../src/quotes/rates';
import { manualClock, rateSourceFor, T0 } from './support';

let mongo: MongooseHandle;
let model: QuoteModel;
let simulator: RateSimulator;
let rates: RateSource;
let clock: ReturnType<typeof manualClock>;

beforeAll(async () => {
  mongo = await connectMongoose('payments-quotes');
  model = quoteModel(mongo.connection);
  await model.init();
});

afterAll(async () => {
  await mongo.close();
});

beforeEach(async () => {
  simulator = await startRateSimulator();
  clock = manualClock();
  rates = rateSourceFor(simulator.url, { now: clock.now, timeoutMs: 2_000, name: 'coinbase-simulator' });
});

afterEach(async () => {
  await rates.close();
  await simulator.close();
});

const deps = (overrides: Partial<QuoteDeps> = {}): QuoteDeps => ({
  rates,
  now: clock.now,
  ttlSeconds: 300,
  ...overrides,
});
const kes = (amount: number) => ({ amount, fromCurrency: 'KES' as const, toCurrency: 'USDC' as const });
const newTenant = () => quotesOf(model, randomUUID());

describe('createQuote', () => {
  it('quotes, stores and answers the quote with decimal strings', async () => {
    const tenant = newTenant();
    const quote = await createQuote(tenant, kes(1000), deps());
    expect(quote).toEqual({
      quoteId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      status: 'ACTIVE',
      amount: '1000.00',
      fromCurrency: 'KES',
      toCurrency: 'USDC',
      rate: '0.007724990343762070',
      convertedAmount: '7.724990',
      sourceRate: '129.45',
      source: 'coinbase-simulator',
      rateAsOf: T0.toISOString(),
      createdAt: T0.toISOString(),
      expiresAt: new Date(T0.getTime() + 300_000).toISOString(),
    });

    // Stored as int64 minor units and a Decimal128 rate, in the caller's organization.
    const stored = await mongo.connection.db
      ?.collection('quotes')
      .findOne({ _id: quote.quoteId as never }, { useBigInt64: true });
    expect(stored).toMatchObject({
      organizationId: tenant.quotes.organizationId,
      amountMinor: 100_000n,
      convertedMinor: 7_724_990n,
      sourceRate: '129.45',
      rateFetchedAt: T0,
      rateAsOf: T0,
      expiresAt: new Date(T0.getTime() + 300_000),
    });
    expect(stored?.rate?.toString()).toBe('0.007724990343762070');
    expect(stored?.rate?._bsontype).toBe('Decimal128');
  });

  it.each([
    [0.01, '0.000077'],
    [1, '0.007724'],
    [129.45, '1.000000'],
    [129.44, '0.999922'],
    [1234.56, '9.536964'],
    [50_000, '386.249517'],
    [1e12, '7724990343.762070'],
  ])('converts %s KES at 129.45 into %s USDC (truncated)', async (amount, usdc) => {
    const quote = await createQuote(newTenant(), kes(amount), deps());
    expect(quote.convertedAmount).toBe(usdc);
  });

  it('matches the bigint reference floor(cents × 10^(k+4) / N) for any amount and rate (property)', async () => {
    const tenant = newTenant();
    /** KES per USDC = N / 10^k, from 1 to 10^6 with 0 to 8 decimals, as the source writes it. */
    const sourceRate = fc
      .integer({ min: 0, max: 8 })
      .chain((k) =>
        fc.bigInt({ min: 10n ** BigInt(k), max: 10n ** BigInt(k + 6) }).map((units) => ({ units, k })),
      );
    const decimal = (units: bigint, k: number) =>
      k === 0
        ? `${units}`
        : `${units / 10n ** BigInt(k)}.${(units % 10n ** BigInt(k)).toString().padStart(k, '0')}`;
    await fc.assert(
      fc.asyncProperty(fc.bigInt({ min: 1n, max: 10n ** 14n }), sourceRate, async (cents, { units, k }) => {
        const kesPerUsdc = decimal(units, k);
        simulator.setRate(kesPerUsdc);
        clock.advance(30_000); // past the cache, so the new rate is fetched
        const quote = await createQuote(tenant, kes(Number(decimal(cents, 2))), deps());
        expect(quote.amount).toBe(decimal(cents, 2));
        expect(quote.sourceRate).toBe(kesPerUsdc);
        expect(quote.convertedAmount).toBe(decimal((cents * 10n ** BigInt(k + 4)) / units, 6));
        expect(quote.rate).toBe(decimal(10n ** BigInt(18 + k) / units, 18));
      }),
      { numRuns: 60 },
    );
  });

  it('refuses a conversion past int64 micro-USDC (only at absurd rates) with PAYMENT_ERROR', async () => {
    const tenant = newTenant();
    simulator.setRate('0.0001');
    const result = await outcome(createQuote(tenant, kes(1e12), deps()));
    expect(result).toMatchObject({ code: 'PAYMENT_ERROR' });
    expect(await model.countDocuments({ organizationId: tenant.quotes.organizationId })).toBe(0);
  });

  it('uses one upstream request for several quotes within the cache window, and a fresh one after', async () => {
    const tenant = newTenant();
    await createQuote(tenant, kes(100), deps());
    clock.advance(10_000);
    await createQuote(tenant, kes(200), deps());
    await Promise.all([createQuote(tenant, kes(300), deps()), createQuote(tenant, kes(400), deps())]);
    expect(simulator.requests()).toBe(1);

    simulator.setRate('130');
    clock.advance(20_000);
    const after = await createQuote(tenant, kes(130), deps());
    expect(after).toMatchObject({ sourceRate: '130', convertedAmount: '1.000000' });
    expect(simulator.requests()).toBe(2);
  });

  it('refuses an amount with more than 2 decimals, or not positive, without asking for a rate', async () => {
    const tenant = newTenant();
    for (const amount of [1.005, 0, -5, Number.NaN]) {
      const result = await outcome(createQuote(tenant, kes(amount), deps()));
      expect(result).toMatchObject({ code: 'INVALID_INPUT', details: [{ field: 'amount' }] });
    }
    expect(simulator.requests()).toBe(0);
    expect(await model.countDocuments({ organizationId: tenant.quotes.organizationId })).toBe(0);
  });
});

describe('no current rate: 502 PAYMENT_ERROR and nothing stored', () => {
  const paymentError = { code: 'PAYMENT_ERROR', message: expect.stringContaining('nothing was quoted') };

  it.each([
    ['down', () => simulator.setBehaviour('down')],
    ['hang', () => simulator.setBehaviour('hang')],
    ['garbage', () => simulator.setBehaviour('garbage')],
    ['a zero rate', () => simulator.setRate('0')],
    ['a negative rate', () => simulator.setRate('-129.45')],
    ['a stale rate', () => simulator.setRate('129.45', { asOf: new Date(T0.getTime() - 121_000) })],
  ])('%s', async (_what, arrange) => {
    arrange();
    const tenant = newTenant();
    const result = await outcome(createQuote(tenant, kes(1000), deps()));
    expect(result).toMatchObject(paymentError);
    expect(result.message).not.toContain(simulator.url);
    expect(await model.countDocuments({ organizationId: tenant.quotes.organizationId })).toBe(0);
  });

  it('with the breaker open, fails at once without an upstream request', async () => {
    const tenant = newTenant();
    simulator.setBehaviour('down');
    for (let i = 0; i < 3; i++) await outcome(createQuote(tenant, kes(10), deps()));
    expect(rates.breakerState()).toBe('open');
    const before = simulator.requests();
    simulator.setBehaviour('ok');
    const result = await outcome(createQuote(tenant, kes(10), deps()));
    expect(result).toMatchObject({
      code: 'PAYMENT_ERROR',
      message: expect.stringContaining('not asking it again for a while'),
    });
    expect(simulator.requests()).toBe(before);
    expect(await model.countDocuments({ organizationId: tenant.quotes.organizationId })).toBe(0);
  });

  it('once the cache has expired, a failing source is an error, not the old rate', async () => {
    const tenant = newTenant();
    await createQuote(tenant, kes(10), deps());
    clock.advance(30_000);
    simulator.setBehaviour('down');
    expect(await outcome(createQuote(tenant, kes(10), deps()))).toMatchObject(paymentError);
    expect(await model.countDocuments({ organizationId: tenant.quotes.organizationId })).toBe(1);
  });
});

describe('readQuote', () => {
  it('reads the quote back as it was given; EXPIRED from expiresAt on', async () => {
    const tenant = newTenant();
    const quote = await createQuote(tenant, kes(2500.5), deps({ ttlSeconds: 60 }));
    expect(quote.expiresAt).toBe(new Date(T0.getTime() + 60_000).toISOString());

    expect(await readQuote(tenant, quote.quoteId, new Date(T0.getTime() + 59_999))).toEqual(quote);
    expect(await readQuote(tenant, quote.quoteId, new Date(T0.getTime() + 60_000))).toEqual({
      ...quote,
      status: 'EXPIRED',
    });
  });

  it('reads a rate with trailing zeros and a tiny rate (Decimal128 in exponent notation) exactly', async () => {
    const tenant = newTenant();
    simulator.setRate('100');
    const round = await createQuote(tenant, kes(1), deps());
    expect(round.rate).toBe('0.010000000000000000');
    simulator.setRate('10000000000');
    clock.advance(30_000);
    const tiny = await createQuote(tenant, kes(1), deps());
    expect(tiny.rate).toBe('0.000000000100000000');
    expect(tiny.convertedAmount).toBe('0.000000');
    // Decimal128 writes this one in exponent notation; the view reads it back exactly.
    expect((await model.findById(tiny.quoteId))?.rate.toString()).toBe('1.00000000E-10');
    expect(await readQuote(tenant, round.quoteId, clock.now())).toMatchObject({ rate: round.rate });
    expect(await readQuote(tenant, tiny.quoteId, clock.now())).toMatchObject({ rate: tiny.rate });
  });

  it('another organization’s quote is not found, like an unknown id', async () => {
    const owner = newTenant();
    const quote = await createQuote(owner, kes(10), deps());
    const other = newTenant();
    const foreign = await outcome(readQuote(other, quote.quoteId, clock.now()));
    const unknown = await outcome(readQuote(other, randomUUID(), clock.now()));
    expect(foreign).toEqual({ code: 'NOT_FOUND', message: 'Quote not found', details: undefined });
    expect(foreign).toEqual(unknown);
  });
});
