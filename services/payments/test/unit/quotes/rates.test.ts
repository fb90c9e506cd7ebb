import { type RateSimulator, startRateSimulator } from '@parametric/rate-simulator';
import { eventually } from '@parametric/test-harness';
import { type RateSource, RateSourceError, type RateSourceErrorCode } from '../../../src/quotes/rates';
import { manualClock, rateSourceFor, T0 } from '../../quotes/support';

let simulator: RateSimulator;
const sources: RateSource[] = [];

beforeEach(async () => {
  simulator = await startRateSimulator();
});

afterEach(async () => {
  await Promise.all(sources.splice(0).map((s) => s.close()));
  await simulator.close();
});

function source(options: Parameters<typeof rateSourceFor>[1] = {}) {
  const clock = manualClock();
  const created = rateSourceFor(simulator.url, { now: clock.now, ...options });
  sources.push(created);
  return { rates: created, clock };
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

describe('reading the rate (Coinbase’s shape)', () => {
  it('inverts the KES rate exactly and says where and when it came from', async () => {
    const { rates } = source();
    const rate = await rates.usdcPerKes();
    expect(rate).toEqual({
      rate: '0.007724990343762070',
      kesPerUsdc: '129.45',
      fetchedAt: T0,
      asOf: T0,
      source: simulator.url.replace('http://', ''),
    });
    expect(simulator.requests()).toBe(1);
  });

  it('takes the source’s name from the options', async () => {
    const { rates } = source({ name: 'coinbase' });
    expect((await rates.usdcPerKes()).source).toBe('coinbase');
  });

  it('takes asOf from X-Rate-Timestamp, but never later than the fetch', async () => {
    const { rates, clock } = source({ cacheSeconds: 1 });
    simulator.setRate('130', { asOf: new Date(T0.getTime() - 90_000) });
    expect((await rates.usdcPerKes()).asOf).toEqual(new Date(T0.getTime() - 90_000));
    clock.advance(1_000);
    simulator.setRate('130', { asOf: new Date(T0.getTime() + 3_600_000) });
    const ahead = await rates.usdcPerKes();
    expect(ahead.asOf).toEqual(ahead.fetchedAt);
  });
});

describe('the cache', () => {
  it('serves several calls within RATE_CACHE_SECONDS from one request, and fetches again after', async () => {
    const { rates, clock } = source({ cacheSeconds: 30 });
    await rates.usdcPerKes();
    simulator.setRate('131');
    clock.advance(10_000);
    expect((await rates.usdcPerKes()).kesPerUsdc).toBe('129.45');
    clock.advance(19_999);
    expect((await rates.usdcPerKes()).kesPerUsdc).toBe('129.45');
    expect(simulator.requests()).toBe(1);
    clock.advance(1);
    const fresh = await rates.usdcPerKes();
    expect(fresh.kesPerUsdc).toBe('131');
    expect(fresh.fetchedAt).toEqual(new Date(T0.getTime() + 30_000));
    expect(simulator.requests()).toBe(2);
  });

  it('shares one request between concurrent callers', async () => {
    const { rates } = source();
    const all = await Promise.all(Array.from({ length: 5 }, () => rates.usdcPerKes()));
    expect(new Set(all.map((r) => r.rate)).size).toBe(1);
    expect(simulator.requests()).toBe(1);
  });

  it('never serves an expired rate when the source fails, and caches no failure', async () => {
    const { rates, clock } = source({ cacheSeconds: 30, volumeThreshold: 100 });
    await rates.usdcPerKes();
    clock.advance(30_000);
    simulator.setBehaviour('down');
    expect(await failure(rates.usdcPerKes())).toBe('BAD_STATUS');
    simulator.setBehaviour('ok');
    expect((await rates.usdcPerKes()).kesPerUsdc).toBe('129.45');
    expect(simulator.requests()).toBe(3);
  });

  it('refetches a cached rate that would be older than the maximum age', async () => {
    const { rates, clock } = source({ cacheSeconds: 300, maxAgeSeconds: 120 });
    simulator.setRate('129.45', { asOf: new Date(T0.getTime() - 60_000) });
    await rates.usdcPerKes();
    clock.advance(60_000);
    // Now 120 s old: still usable.
    expect(await rates.usdcPerKes()).toMatchObject({ kesPerUsdc: '129.45' });
    expect(simulator.requests()).toBe(1);
    clock.advance(1);
    simulator.setRate('132', { asOf: null });
    expect((await rates.usdcPerKes()).kesPerUsdc).toBe('132');
    expect(simulator.requests()).toBe(2);
  });
});

describe('no usable rate: an error, never a made-up or stale rate', () => {
  it('down (500) is BAD_STATUS', async () => {
    simulator.setBehaviour('down');
    expect(await failure(source().rates.usdcPerKes())).toBe('BAD_STATUS');
  });

  it('hang is TIMEOUT after timeoutMs', async () => {
    simulator.setBehaviour('hang');
    expect(await failure(source({ timeoutMs: 200 }).rates.usdcPerKes())).toBe('TIMEOUT');
    expect(simulator.requests()).toBe(1);
  });

  it('garbage (HTML) is MALFORMED', async () => {
    simulator.setBehaviour('garbage');
    expect(await failure(source().rates.usdcPerKes())).toBe('MALFORMED');
  });

  it.each([
    ['0', 'NOT_POSITIVE'],
    ['0.00', 'NOT_POSITIVE'],
    ['-129.45', 'NOT_POSITIVE'],
    ['abc', 'MALFORMED'],
    ['1.2945e2', 'MALFORMED'],
    ['1000000000000000001', 'OUT_OF_RANGE'],
  ])('a KES rate of %s is %s', async (rate, code) => {
    simulator.setRate(rate);
    expect(await failure(source().rates.usdcPerKes())).toBe(code);
  });

  it('a rate older than the maximum age is STALE (exactly the maximum is fine)', async () => {
    simulator.setRate('129.45', { asOf: new Date(T0.getTime() - 120_001) });
    expect(await failure(source({ maxAgeSeconds: 120 }).rates.usdcPerKes())).toBe('STALE');
    simulator.setRate('129.45', { asOf: new Date(T0.getTime() - 120_000) });
    expect((await source({ maxAgeSeconds: 120 }).rates.usdcPerKes()).kesPerUsdc).toBe('129.45');
  });

  it('an unreachable source is UNAVAILABLE', async () => {
    const gone = await startRateSimulator();
    await gone.close();
    const rates = rateSourceFor(gone.url);
    sources.push(rates);
    expect(await failure(rates.usdcPerKes())).toBe('UNAVAILABLE');
  });

  it('messages never carry the source’s URL', async () => {
    simulator.setBehaviour('down');
    const err = await source()
      .rates.usdcPerKes()
      .catch((e: Error) => e);
    expect((err as Error).message).not.toContain(simulator.url);
    expect((err as Error).message).not.toContain('127.0.0.1');
  });
});

describe('the breaker', () => {
  it('opens after repeated failures and then fails fast without asking the source', async () => {
    const { rates } = source({ volumeThreshold: 3 });
    simulator.setBehaviour('down');
    for (let i = 0; i < 3; i++) expect(await failure(rates.usdcPerKes())).toBe('BAD_STATUS');
    expect(rates.breakerState()).toBe('open');
    simulator.setBehaviour('ok');
    expect(await failure(rates.usdcPerKes())).toBe('BREAKER_OPEN');
    expect(simulator.requests()).toBe(3);
  });

  it('lets one trial request through after breakerResetMs, and closes when it succeeds', async () => {
    const { rates } = source({ volumeThreshold: 2, breakerResetMs: 100 });
    simulator.setBehaviour('garbage');
    await failure(rates.usdcPerKes());
    await failure(rates.usdcPerKes());
    expect(rates.breakerState()).toBe('open');
    simulator.setBehaviour('ok');
    await eventually(() => expect(rates.breakerState()).toBe('half-open'));
    expect((await rates.usdcPerKes()).kesPerUsdc).toBe('129.45');
    expect(rates.breakerState()).toBe('closed');
  });

  it('after close(), calls fail with CLOSED, and a hanging request is abandoned', async () => {
    simulator.setBehaviour('hang');
    const { rates } = source({ timeoutMs: 30_000 });
    const hanging = failure(rates.usdcPerKes());
    await eventually(() => expect(simulator.requests()).toBe(1));
    await rates.close();
    expect(await hanging).toBe('CLOSED');
    expect(await failure(rates.usdcPerKes())).toBe('CLOSED');
  });
});
