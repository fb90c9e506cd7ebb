import { createRateGuard, type RateReference, type RateReferenceStore } from '../../src/quotes/guard';
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

/** The reference store in memory, with the MongoDB store's rule: only a later acceptance replaces it. */
export function memoryRateReferences(initial: RateReference | null = null) {
  let current = initial;
  const store: RateReferenceStore & { current(): RateReference | null } = {
    read: async () => current,
    record: async ({ kesPerUsdc, acceptedAt }) => {
      if (!current || current.acceptedAt < acceptedAt) current = { kesPerUsdc, acceptedAt };
    },
    current: () => current,
  };
  return store;
}

/**
 * A guard that refuses nothing a well-formed rate can be (bounds 10^-18 to 10^18, a step of
 * 10^18 %), for the tests of everything else the rate source does; the guard's own tests set
 * real limits.
 */
export function lenientGuard() {
  return createRateGuard({
    limits: {
      min: '0.000000000000000001',
      max: '1000000000000000000',
      maxStepPercent: '1000000000000000000',
    },
    store: memoryRateReferences(),
  });
}

/** A rate source on `url` with test-sized defaults: long breaker reset, 30 s cache, 2 s timeout. */
export function rateSourceFor(url: string, options: Partial<RateSourceOptions> = {}): RateSource {
  return createRateSource({
    url,
    timeoutMs: 2_000,
    cacheSeconds: 30,
    maxAgeSeconds: 120,
    breakerResetMs: 60_000,
    guard: lenientGuard(),
    ...options,
  });
}
