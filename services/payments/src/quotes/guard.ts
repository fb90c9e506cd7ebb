import type { Logger } from '@parametric/logger';
import { type ExactRate, parseKesPerUsdc, RateSourceError, type UsdcPerKes } from './rates';

/**
 * How long the last accepted rate is the reference of the step check. A rate moved further than
 * the step is refused while the last accepted one is younger than this; once it is older, only
 * the bounds apply, so a genuine large move is accepted at most an hour after the last accepted
 * rate (docs/payments.md, "Quotes").
 */
export const REFERENCE_WINDOW_MS = 60 * 60 * 1000;

/** What a well-formed rate must also satisfy (`RATE_KES_PER_USDC_MIN` / `_MAX`, `RATE_MAX_STEP_PERCENT`). */
export interface RateLimits {
  /** Lowest KES per USDC accepted (the bound itself is accepted), a positive decimal string. */
  min: string;
  /** Highest KES per USDC accepted (the bound itself is accepted), a positive decimal string. */
  max: string;
  /** Largest move from the last accepted rate, in percent of it (exactly this much is accepted). */
  maxStepPercent: string;
}

/** The last rate accepted, by any replica: what the next one is compared with. */
export interface RateReference {
  /** KES per 1 USDC exactly as the source gave it. */
  kesPerUsdc: string;
  /** When it was fetched (the accepting replica's clock). */
  acceptedAt: Date;
}

/**
 * Where the reference is kept: shared by the replicas and kept across restarts (MongoDB in the
 * service, `mongoRateReferences`).
 */
export interface RateReferenceStore {
  /** The last accepted rate; null before the first. */
  read(): Promise<RateReference | null>;
  /** Makes `reference` the last accepted rate, unless one accepted later is recorded already. */
  record(reference: RateReference & { source: string }): Promise<void>;
}

export type RateRefusal =
  | { code: 'OUT_OF_BOUNDS'; kesPerUsdc: string; min: string; max: string }
  | {
      code: 'STEP_TOO_LARGE';
      kesPerUsdc: string;
      reference: string;
      referenceAcceptedAt: Date;
      maxStepPercent: string;
    };
export type RateRefusalCode = RateRefusal['code'];

/** `a` compared with `b`, exactly (cross-multiplied, no division). */
export function compareRates(a: ExactRate, b: ExactRate): -1 | 0 | 1 {
  const left = a.units * 10n ** BigInt(b.decimals);
  const right = b.units * 10n ** BigInt(a.decimals);
  if (left === right) return 0;
  return left < right ? -1 : 1;
}

/** A limit as an exact decimal; the config has checked it, so a bad one is a programming error. */
function limitOf(name: string, text: string): ExactRate {
  try {
    return parseKesPerUsdc(text);
  } catch {
    throw new Error(
      `${name} must be a positive decimal with at most 18 decimals, not ${JSON.stringify(text)}`,
    );
  }
}

/** Checks the limits are usable (positive decimals, min below max) and parses them. */
export function parseRateLimits(limits: RateLimits): { min: ExactRate; max: ExactRate; step: ExactRate } {
  const min = limitOf('the minimum rate', limits.min);
  const max = limitOf('the maximum rate', limits.max);
  const step = limitOf('the maximum step', limits.maxStepPercent);
  if (compareRates(min, max) >= 0) {
    throw new Error(`the minimum rate (${limits.min}) must be below the maximum rate (${limits.max})`);
  }
  return { min, max, step };
}

/**
 * Why a well-formed rate fetched at `at` is refused, or null when it is accepted:
 * - below `min` or above `max` (both bounds inclusive: exactly 50 or 500 is accepted);
 * - else, while `reference` is younger than REFERENCE_WINDOW_MS, moved by more than
 *   `maxStepPercent` % of the reference, up or down (exactly the step is accepted).
 *
 * With no reference (the first rate ever) or one an hour old or older, only the bounds apply.
 * Exact: |rate − reference| × 100 > step × reference is compared in integers.
 */
export function refusalOf(
  kesPerUsdc: string,
  at: Date,
  limits: RateLimits,
  reference: RateReference | null,
): RateRefusal | null {
  const { min, max, step } = parseRateLimits(limits);
  const rate = parseKesPerUsdc(kesPerUsdc);
  if (compareRates(rate, min) < 0 || compareRates(rate, max) > 0) {
    return { code: 'OUT_OF_BOUNDS', kesPerUsdc, min: limits.min, max: limits.max };
  }
  if (!reference || at.getTime() - reference.acceptedAt.getTime() >= REFERENCE_WINDOW_MS) return null;
  const last = parseKesPerUsdc(reference.kesPerUsdc);
  // rate = r / 10^dr, last = l / 10^dl, step = s / 10^ds; everything scaled by 10^(dr + dl + ds).
  const r = rate.units * 10n ** BigInt(last.decimals);
  const l = last.units * 10n ** BigInt(rate.decimals);
  const moved = r > l ? r - l : l - r;
  const allowed = step.units * last.units * 10n ** BigInt(rate.decimals);
  if (moved * 100n * 10n ** BigInt(step.decimals) <= allowed) return null;
  return {
    code: 'STEP_TOO_LARGE',
    kesPerUsdc,
    reference: reference.kesPerUsdc,
    referenceAcceptedAt: reference.acceptedAt,
    maxStepPercent: limits.maxStepPercent,
  };
}

/** The refusal as the partner sees it (in `502 PAYMENT_ERROR`): no bound, no reference, no URL. */
function refusalError(refusal: RateRefusal): RateSourceError {
  if (refusal.code === 'OUT_OF_BOUNDS') {
    return new RateSourceError(
      'OUT_OF_BOUNDS',
      'the rate source gave a KES rate outside the range we accept',
    );
  }
  return new RateSourceError(
    'STEP_TOO_LARGE',
    'the rate source gave a KES rate too far from the last accepted one',
  );
}

export interface RateGuardOptions {
  limits: RateLimits;
  store: RateReferenceStore;
  /** Where a refusal is logged, at error, with the rate and what it was held to. */
  logger?: Pick<Logger, 'error'>;
  /** Called once per refused rate (e.g. `rate_source_refusals_total{reason}`). */
  onRefused?: (code: RateRefusalCode) => void;
}

/**
 * The checks a well-formed rate passes before any quote uses it. The rate source reads the
 * reference before fetching, checks the fetched rate inside its breaker (a refused rate is a
 * failing source) and records each accepted rate as the new reference.
 */
export interface RateGuard {
  /** The last accepted rate (a database error is thrown as it is: that is not the source failing). */
  reference(): Promise<RateReference | null>;
  /** Throws RateSourceError `OUT_OF_BOUNDS` / `STEP_TOO_LARGE` for a refused rate, logged and counted. */
  check(rate: Pick<UsdcPerKes, 'kesPerUsdc' | 'fetchedAt'>, reference: RateReference | null): void;
  /** Records an accepted rate as the reference for every replica. */
  accepted(rate: Pick<UsdcPerKes, 'kesPerUsdc' | 'fetchedAt' | 'source'>): Promise<void>;
}

export function createRateGuard(options: RateGuardOptions): RateGuard {
  const { limits, store, logger, onRefused } = options;
  // Bad limits stop the service at start, not the first quote.
  parseRateLimits(limits);
  return {
    reference: () => store.read(),
    check(rate, reference) {
      const refusal = refusalOf(rate.kesPerUsdc, rate.fetchedAt, limits, reference);
      if (!refusal) return;
      // The rate and what it was held to; nothing of where the source is (RATE_SOURCE_URL).
      logger?.error(
        refusal.code === 'OUT_OF_BOUNDS'
          ? { code: refusal.code, kesPerUsdc: refusal.kesPerUsdc, min: refusal.min, max: refusal.max }
          : {
              code: refusal.code,
              kesPerUsdc: refusal.kesPerUsdc,
              reference: refusal.reference,
              referenceAcceptedAt: refusal.referenceAcceptedAt.toISOString(),
              maxStepPercent: refusal.maxStepPercent,
            },
        'rate source: rate refused, no quote until the source gives an acceptable one',
      );
      onRefused?.(refusal.code);
      throw refusalError(refusal);
    },
    accepted: (rate) =>
      store.record({ kesPerUsdc: rate.kesPerUsdc, acceptedAt: rate.fetchedAt, source: rate.source }),
  };
}
