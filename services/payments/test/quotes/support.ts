import { createRateSource, type RateSource, type RateSourceOptions } from '../../src/quotes/rates';

export const T0 = new Date('2026-11-22T10:00:00.000Z');

/** A clock tests move by hand: `clock.now()` reads it, `clock.advance(ms)` moves it on. */
export function manualClock(start: Date = T0) {
  let at = start.getTime();
  return {
    now: () => new Date(at),
    advance: (ms: number) => {
      at += ms;
    },
  };
}

/** A rate source on `url` with test-sized defaults: long breaker reset, 30 s cache, 2 s timeout. */
export function rateSourceFor(url: string, options: Partial<RateSourceOptions> = {}): RateSource {
  return createRateSource({
    url,
    timeoutMs: 2_000,
    cacheSeconds: 30,
    maxAgeSeconds: 120,
    breakerResetMs: 60_000,
    ...options,
  });
}
