import { positiveInt } from '@parametric/config';
import { z } from 'zod';
import { createRateSource, type RateSource, type RateSourceOptions } from './rates';

/**
 * The quote variables, to spread into the payments service's config schema:
 * `z.object({ ...platformService('PAYMENTS', 'payments'), ...quoteConfig, … })`.
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
  /** How long a quote holds. */
  QUOTE_TTL_SECONDS: positiveInt(300),
};

const quoteConfigSchema = z.object(quoteConfig);
export type QuoteConfig = z.infer<typeof quoteConfigSchema>;

/** The rate source the configuration describes. */
export function rateSourceFrom(
  config: QuoteConfig,
  now?: () => Date,
  onBreaker?: RateSourceOptions['onBreaker'],
): RateSource {
  return createRateSource({
    url: config.RATE_SOURCE_URL,
    timeoutMs: config.RATE_TIMEOUT_MS,
    cacheSeconds: config.RATE_CACHE_SECONDS,
    maxAgeSeconds: config.RATE_MAX_AGE_SECONDS,
    breakerResetMs: config.RATE_BREAKER_RESET_MS,
    now,
    ...(onBreaker ? { onBreaker } : {}),
  });
}
