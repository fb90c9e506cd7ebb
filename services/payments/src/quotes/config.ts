import { positiveInt } from '@parametric/config';
import type { Logger } from '@parametric/logger';
import type { Connection } from 'mongoose';
import { z } from 'zod';
import { compareRates, createRateGuard, type RateGuardOptions } from './guard';
import {
  createRateSource,
  type ExactRate,
  parseKesPerUsdc,
  type RateSource,
  type RateSourceOptions,
} from './rates';
import { mongoRateReferences } from './reference';

/**
 * A positive decimal from the environment, kept as its exact text (`"129.45"`, never a double);
 * `VAR=` (empty, as compose writes an unset `${VAR}`) means unset.
 */
const positiveDecimal = (fallback: string) =>
  z.preprocess(
    (v) => (v === '' ? undefined : v),
    z
      .string()
      .trim()
      .regex(/^\d{1,18}(\.\d{1,18})?$/, {
        error: 'must be a decimal such as 129.45 (at most 18 decimals)',
        abort: true,
      })
      .refine((v) => /[1-9]/.test(v), 'must be greater than 0')
      .default(fallback),
  );

/**
 * The quote variables, to spread into the payments service's config schema:
 * `z.object({ ...platformService('PAYMENTS', 'payments'), ...quoteConfig, … }).superRefine(checkQuoteConfig)`.
 */
export const quoteConfig = {
  /** Base URL of a Coinbase-compatible exchange-rates API (`https://api.coinbase.com`, or the rate simulator). */
  RATE_SOURCE_URL: z
    .url({ protocol: /^https?$/, error: 'must be an http(s) URL' })
    .transform((u) => u.replace(/\/+$/, '')),
  /** Limit for one rate request; past it the quote is `502 PAYMENT_ERROR`. */
  RATE_TIMEOUT_MS: positiveInt(3_000),
  /** How long one good answer of the source serves every quote. */
  RATE_CACHE_SECONDS: positiveInt(30),
  /** A rate older than this is refused (measured from the source's timestamp, else from our fetch). */
  RATE_MAX_AGE_SECONDS: positiveInt(120),
  /** How long the breaker stays open after repeated failures before one trial request. */
  RATE_BREAKER_RESET_MS: positiveInt(30_000),
  /** Lowest KES per USDC accepted from the source (inclusive); below it the source is failing. */
  RATE_KES_PER_USDC_MIN: positiveDecimal('50'),
  /** Highest KES per USDC accepted from the source (inclusive); above it the source is failing. */
  RATE_KES_PER_USDC_MAX: positiveDecimal('500'),
  /**
   * Largest move, in percent, from the last accepted rate while it is younger than an hour
   * (exactly this much is accepted); a larger one is refused like a failing source.
   */
  RATE_MAX_STEP_PERCENT: positiveDecimal('10'),
  /** How long a quote holds. */
  QUOTE_TTL_SECONDS: positiveInt(300),
};

const quoteConfigSchema = z.object(quoteConfig);
export type QuoteConfig = z.infer<typeof quoteConfigSchema>;

/** The rules across the quote variables (the bounds in order), for the service schema's `superRefine`. */
export function checkQuoteConfig(
  config: Pick<QuoteConfig, 'RATE_KES_PER_USDC_MIN' | 'RATE_KES_PER_USDC_MAX'>,
  ctx: z.RefinementCtx,
): void {
  let min: ExactRate;
  let max: ExactRate;
  try {
    min = parseKesPerUsdc(config.RATE_KES_PER_USDC_MIN);
    max = parseKesPerUsdc(config.RATE_KES_PER_USDC_MAX);
  } catch {
    return; // each variable's own issue says what is wrong with it
  }
  if (compareRates(min, max) >= 0) {
    ctx.addIssue({
      code: 'custom',
      path: ['RATE_KES_PER_USDC_MIN'],
      message: `must be less than RATE_KES_PER_USDC_MAX (${config.RATE_KES_PER_USDC_MAX})`,
    });
  }
}

function limitsOf(
  config: Pick<QuoteConfig, 'RATE_KES_PER_USDC_MIN' | 'RATE_KES_PER_USDC_MAX' | 'RATE_MAX_STEP_PERCENT'>,
) {
  return {
    min: config.RATE_KES_PER_USDC_MIN,
    max: config.RATE_KES_PER_USDC_MAX,
    maxStepPercent: config.RATE_MAX_STEP_PERCENT,
  };
}

export interface RateSourceDeps {
  /** The payments database: the last accepted rate is kept there, for every replica and restart. */
  connection: Connection;
  /** Refused rates are logged here, at error. */
  logger: Pick<Logger, 'error'>;
  now?: () => Date;
  /** Called with the source's opossum breaker (`metrics.observeBreaker('rate_source', …)`). */
  onBreaker?: RateSourceOptions['onBreaker'];
  /** Called once per refused rate (`rate_source_refusals_total{reason}`). */
  onRefused?: RateGuardOptions['onRefused'];
}

/** The guarded rate source the configuration describes. */
export function rateSourceFrom(config: QuoteConfig, deps: RateSourceDeps): RateSource {
  const guard = createRateGuard({
    limits: limitsOf(config),
    store: mongoRateReferences(deps.connection),
    logger: deps.logger,
    ...(deps.onRefused ? { onRefused: deps.onRefused } : {}),
  });
  return createRateSource({
    url: config.RATE_SOURCE_URL,
    timeoutMs: config.RATE_TIMEOUT_MS,
    cacheSeconds: config.RATE_CACHE_SECONDS,
    maxAgeSeconds: config.RATE_MAX_AGE_SECONDS,
    breakerResetMs: config.RATE_BREAKER_RESET_MS,
    guard,
    ...(deps.now ? { now: deps.now } : {}),
    ...(deps.onBreaker ? { onBreaker: deps.onBreaker } : {}),
  });
}
