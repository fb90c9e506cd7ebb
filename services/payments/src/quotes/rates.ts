import { formatMinor, mulDiv, parseMinor } from '@parametric/money';
import { outbound } from '@parametric/tracing';
import CircuitBreaker from 'opossum';
import type { RateGuard, RateReference } from './guard';

/**
 * Decimals of the USDC-per-KES rate we derive. 18 keeps the rate's truncation below one
 * micro-USDC on the largest amount quoted (10^12 KES × 10^-18 = 10^-6), and is the most
 * `formatMinor` takes.
 */
export const RATE_DECIMALS = 18;

/** Our extension of Coinbase's answer (the rate simulator sends it; Coinbase does not). */
export const RATE_TIMESTAMP_HEADER = 'x-rate-timestamp';

/** An answer larger than this is not an exchange-rate list (Coinbase's is about 10 KiB). */
const MAX_BODY_BYTES = 1024 * 1024;
/** Longest KES rate string we read; Coinbase's have fewer than 20 characters. */
const MAX_RATE_LENGTH = 64;

export type RateSourceErrorCode =
  | 'TIMEOUT'
  | 'UNAVAILABLE'
  | 'BAD_STATUS'
  | 'MALFORMED'
  | 'NOT_POSITIVE'
  | 'OUT_OF_RANGE'
  | 'STALE'
  | 'OUT_OF_BOUNDS'
  | 'STEP_TOO_LARGE'
  | 'BREAKER_OPEN'
  | 'CLOSED';

/** Why no rate could be had. `message` is safe to show: it never holds the source's URL. */
export class RateSourceError extends Error {
  override readonly name = 'RateSourceError';
  constructor(
    readonly code: RateSourceErrorCode,
    message: string,
  ) {
    super(message);
  }
}

export interface UsdcPerKes {
  /** USDC per 1 KES, a decimal string with RATE_DECIMALS decimals, truncated toward zero. */
  rate: string;
  /** KES per 1 USDC, exactly as the source gave it. */
  kesPerUsdc: string;
  /** When the source's answer arrived (our clock). */
  fetchedAt: Date;
  /** When the rate was current: the source's `X-Rate-Timestamp` if sent (never later than `fetchedAt`), else `fetchedAt`. */
  asOf: Date;
  /** The source's name, shown in quotes. */
  source: string;
}

export type BreakerState = 'closed' | 'open' | 'half-open';

export interface RateSource {
  /**
   * The current rate, from the cache while it is fresh; throws RateSourceError when none can be
   * had (a rate the guard refuses included). A database error reading or recording the guard's
   * reference is thrown as it is: our database failing is not the source failing.
   */
  usdcPerKes(): Promise<UsdcPerKes>;
  breakerState(): BreakerState;
  /** Shuts the breaker down (no timers left), aborts the request in flight and waits for it. */
  close(): Promise<void>;
}

export interface RateSourceOptions {
  /** Base URL of a Coinbase-compatible API (`https://api.coinbase.com`); rates are read from `/v2/exchange-rates?currency=USDC`. */
  url: string;
  /** Limit for one request, answer body included. */
  timeoutMs: number;
  /** How long a good answer is reused (0: every call asks the source). */
  cacheSeconds: number;
  /** A rate older than this (by `asOf`) is refused (default 120). */
  maxAgeSeconds?: number;
  /** How long the breaker stays open before letting one trial request through. */
  breakerResetMs: number;
  /**
   * The bounds and step every fetched rate is held to (`createRateGuard`). A refused rate fails
   * like a failing source: an error, counted by the breaker, never cached.
   */
  guard: RateGuard;
  /** Failure percentage, over the rolling 10 s window, at which the breaker opens (default 50). */
  errorThresholdPercentage?: number;
  /** Minimum requests in the window before the breaker may open (default 3). */
  volumeThreshold?: number;
  /**
   * Called once with the client's opossum breaker when it is created, e.g. to observe its
   * state changes (`metrics.observeBreaker`).
   */
  onBreaker?: (breaker: CircuitBreaker) => void;
  /** Name shown in quotes (default: the URL's host, e.g. `api.coinbase.com`). */
  name?: string;
  now?: () => Date;
}

const PLAIN_DECIMAL = /^-?\d+(\.\d+)?$/;

/** A KES-per-USDC rate as an exact fraction: `units` / 10^`decimals`. */
export interface ExactRate {
  units: bigint;
  decimals: number;
}

/**
 * The source's KES per 1 USDC, exactly. Refuses what is not a plain decimal (no exponent
 * notation, at most 64 characters), has more than 18 decimals, or is zero or negative.
 */
export function parseKesPerUsdc(kesPerUsdc: string): ExactRate {
  if (
    typeof kesPerUsdc !== 'string' ||
    kesPerUsdc.length > MAX_RATE_LENGTH ||
    !PLAIN_DECIMAL.test(kesPerUsdc)
  ) {
    throw new RateSourceError('MALFORMED', 'the rate source gave a KES rate that is not a plain decimal');
  }
  const decimals = kesPerUsdc.split('.')[1]?.length ?? 0;
  if (decimals > RATE_DECIMALS) {
    throw new RateSourceError(
      'MALFORMED',
      `the rate source gave a KES rate with more than ${RATE_DECIMALS} decimals`,
    );
  }
  const units = parseMinor(kesPerUsdc, decimals);
  if (units <= 0n) {
    throw new RateSourceError('NOT_POSITIVE', 'the rate source gave a zero or negative KES rate');
  }
  return { units, decimals };
}

/**
 * USDC per 1 KES × 10^RATE_DECIMALS: the exact inverse of the source's rate (10^(18+k) / N for
 * a rate N / 10^k), truncated toward zero once. A rate so large that its inverse is below
 * 10^-18 is refused (`OUT_OF_RANGE`).
 */
export function invertKesPerUsdc(kesPerUsdc: string): bigint {
  const { units, decimals } = parseKesPerUsdc(kesPerUsdc);
  const inverse = mulDiv(10n ** BigInt(RATE_DECIMALS), 10n ** BigInt(decimals), units, 'TRUNCATE');
  if (inverse === 0n) {
    throw new RateSourceError(
      'OUT_OF_RANGE',
      `the rate source's KES rate gives less than 10^-${RATE_DECIMALS} USDC per KES`,
    );
  }
  return inverse;
}

/** Reads the answer's body, refusing more than MAX_BODY_BYTES. */
async function readBody(response: Response): Promise<string> {
  if (!response.body) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_BODY_BYTES) {
      await reader.cancel();
      throw new RateSourceError('MALFORMED', 'the rate source answered more than 1 MiB');
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** `data.rates.KES` of `{ data: { currency: "USDC", rates: { KES: "129.4" } } }`, a string. */
function kesRateOf(text: string): string {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new RateSourceError('MALFORMED', 'the rate source answered something that is not JSON');
  }
  const data = (body as { data?: unknown } | null)?.data as
    | { currency?: unknown; rates?: unknown }
    | undefined;
  if (typeof data !== 'object' || data === null || data.currency !== 'USDC') {
    throw new RateSourceError('MALFORMED', 'the rate source did not answer USDC exchange rates');
  }
  const rates = data.rates as Record<string, unknown> | null | undefined;
  const kes = typeof rates === 'object' && rates !== null ? rates.KES : undefined;
  // A JSON number has already been through a double: only the decimal string is exact.
  if (typeof kes !== 'string') {
    throw new RateSourceError('MALFORMED', 'the rate source gave no KES rate as a decimal string');
  }
  return kes;
}

/** Anything a request threw, as a RateSourceError with a message safe to show. */
function toRateError(err: unknown, closed: boolean): RateSourceError {
  if (err instanceof RateSourceError) return err;
  const code = (err as { code?: unknown } | null)?.code;
  if (code === 'EOPENBREAKER') {
    return new RateSourceError(
      'BREAKER_OPEN',
      'the rate source failed repeatedly; not asking it again for a while',
    );
  }
  if (code === 'ESHUTDOWN' || closed)
    return new RateSourceError('CLOSED', 'the rate source client is closed');
  if (code === 'ETIMEDOUT' || (err as Error | null)?.name === 'TimeoutError') {
    return new RateSourceError('TIMEOUT', 'the rate source did not answer in time');
  }
  return new RateSourceError('UNAVAILABLE', 'the rate source could not be reached');
}

/**
 * USDC per KES from a Coinbase-compatible exchange-rates API (`GET /v2/exchange-rates?currency=USDC`
 * → `{ data: { currency: "USDC", rates: { KES: "129.4" } } }`), through an opossum breaker with a
 * timeout. Every fetched rate passes the guard (bounds, and the step from the last accepted rate)
 * before it is served; a good answer is reused for `cacheSeconds`; concurrent callers share one
 * request. Failures and refusals are never cached and never replaced by an older rate: the caller
 * gets a RateSourceError.
 */
export function createRateSource(options: RateSourceOptions): RateSource {
  const {
    timeoutMs,
    cacheSeconds,
    maxAgeSeconds = 120,
    breakerResetMs,
    errorThresholdPercentage = 50,
    volumeThreshold = 3,
    now = () => new Date(),
    guard,
  } = options;
  const base = new URL(options.url);
  if (base.protocol !== 'http:' && base.protocol !== 'https:') {
    throw new Error('the rate source URL must be http(s)');
  }
  const endpoint = new URL('/v2/exchange-rates?currency=USDC', base).toString();
  const source = options.name ?? base.host;
  const cacheMs = cacheSeconds * 1000;
  const maxAgeMs = maxAgeSeconds * 1000;

  const inFlight = new Set<AbortController>();
  let closed = false;

  async function fetchRate(reference: RateReference | null): Promise<UsdcPerKes> {
    const controller = new AbortController();
    inFlight.add(controller);
    // The breaker's timeout fails the call; this one also ends the request (and frees its socket).
    const timer = setTimeout(
      () => controller.abort(new DOMException('timed out', 'TimeoutError')),
      timeoutMs,
    );
    try {
      const response = await outbound('rate source', (traceparent) =>
        fetch(endpoint, {
          signal: controller.signal,
          headers: traceparent ? { accept: 'application/json', traceparent } : { accept: 'application/json' },
        }),
      );
      if (!response.ok) {
        await response.body?.cancel();
        throw new RateSourceError('BAD_STATUS', `the rate source answered HTTP ${response.status}`);
      }
      const text = await readBody(response);
      const kesPerUsdc = kesRateOf(text);
      const rate = formatMinor(invertKesPerUsdc(kesPerUsdc), RATE_DECIMALS);
      const fetchedAt = now();
      let asOf = fetchedAt;
      const stamped = response.headers.get(RATE_TIMESTAMP_HEADER);
      if (stamped !== null) {
        const at = new Date(stamped);
        if (!Number.isFinite(at.getTime())) {
          throw new RateSourceError(
            'MALFORMED',
            `the rate source sent an unreadable ${RATE_TIMESTAMP_HEADER}`,
          );
        }
        // A source clock ahead of ours does not make its rate newer than its arrival.
        if (at < fetchedAt) asOf = at;
      }
      if (fetchedAt.getTime() - asOf.getTime() > maxAgeMs) {
        throw new RateSourceError('STALE', `the rate source's rate is older than ${maxAgeSeconds} s`);
      }
      // Inside the breaker: a source serving absurd rates is a failing source.
      guard.check({ kesPerUsdc, fetchedAt }, reference);
      return { rate, kesPerUsdc, fetchedAt, asOf, source };
    } catch (err) {
      throw toRateError(err, closed);
    } finally {
      clearTimeout(timer);
      inFlight.delete(controller);
    }
  }

  const breaker = new CircuitBreaker(fetchRate, {
    timeout: timeoutMs,
    resetTimeout: breakerResetMs,
    errorThresholdPercentage,
    volumeThreshold,
  });
  options.onBreaker?.(breaker);

  let cached: UsdcPerKes | undefined;
  let pending: Promise<UsdcPerKes> | undefined;

  const fresh = (entry: UsdcPerKes, at: Date) =>
    at.getTime() - entry.fetchedAt.getTime() < cacheMs && at.getTime() - entry.asOf.getTime() <= maxAgeMs;

  /**
   * One fetch: the reference read before the breaker and recorded after it, so a slow or failing
   * database neither uses the source's time limit nor counts as the source failing.
   */
  async function guardedFetch(): Promise<UsdcPerKes> {
    const reference = await guard.reference();
    let entry: UsdcPerKes;
    try {
      entry = (await breaker.fire(reference)) as UsdcPerKes;
    } catch (err) {
      throw toRateError(err, closed);
    }
    // A rate is served only once every replica will compare the next one with it.
    await guard.accepted(entry);
    return entry;
  }

  return {
    async usdcPerKes() {
      if (closed) throw new RateSourceError('CLOSED', 'the rate source client is closed');
      if (cached && fresh(cached, now())) return cached;
      pending ??= guardedFetch()
        .then((entry) => {
          cached = entry;
          return entry;
        })
        .finally(() => {
          pending = undefined;
        });
      return pending;
    },
    breakerState() {
      if (breaker.opened) return 'open';
      if (breaker.halfOpen) return 'half-open';
      return 'closed';
    },
    async close() {
      closed = true;
      cached = undefined;
      breaker.shutdown();
      for (const controller of inFlight) controller.abort();
      await pending?.catch(() => undefined);
    },
  };
}
