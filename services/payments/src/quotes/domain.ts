import { randomUUID } from 'node:crypto';
import type { createQuoteBody, quoteSchema } from '@parametric/contracts';
import { AppError } from '@parametric/http';
import { MoneyError, minorFromNumber } from '@parametric/money';
import { scopedTo, type TenantScope } from '@parametric/mongo';
import { Types } from 'mongoose';
import type { z } from 'zod';
import {
  convertKesToUsdc,
  formatKes,
  formatRate,
  formatUsdc,
  KES_EXPONENT,
  scaledFromDecimalText,
} from './conversion';
import type { QuoteDoc, QuoteModel } from './model';
import { invertKesPerUsdc, RATE_DECIMALS, type RateSource, RateSourceError } from './rates';

/** One organization's quotes: what partner handlers and these functions receive. */
export interface QuoteTenant {
  quotes: TenantScope<QuoteDoc>;
}

/** Binds the quotes collection to one organization (for a service's `forOrganization`). */
export function quotesOf(model: QuoteModel, organizationId: string): QuoteTenant {
  return { quotes: scopedTo(model, organizationId) };
}

export interface QuoteDeps {
  rates: Pick<RateSource, 'usdcPerKes'>;
  now: () => Date;
  /** How long a quote holds (`QUOTE_TTL_SECONDS`). */
  ttlSeconds: number;
}

export type QuoteInput = z.output<typeof createQuoteBody>;
export type QuoteView = z.input<typeof quoteSchema>;

const INT64_MAX = 2n ** 63n - 1n;

/** Why there is no quote, for the partner: the source's failure, never its URL. */
function paymentError(err: RateSourceError): AppError {
  return new AppError(
    'PAYMENT_ERROR',
    `No current KES→USDC exchange rate is available (${err.message}); nothing was quoted, try again shortly`,
  );
}

/** The KES amount in cents, exactly; the contract has checked it, this refuses anything that slipped past. */
function amountMinorOf(amount: number): bigint {
  let minor: bigint;
  try {
    minor = minorFromNumber(amount, KES_EXPONENT);
  } catch (err) {
    if (!(err instanceof MoneyError)) throw err;
    throw AppError.invalid('Invalid request body', [{ field: 'amount', message: err.message }]);
  }
  if (minor <= 0n) {
    throw AppError.invalid('Invalid request body', [{ field: 'amount', message: 'must be greater than 0' }]);
  }
  return minor;
}

export function quoteView(quote: QuoteDoc, now: Date): QuoteView {
  return {
    quoteId: quote._id,
    status: now < quote.expiresAt ? 'ACTIVE' : 'EXPIRED',
    amount: formatKes(quote.amountMinor),
    fromCurrency: quote.fromCurrency as QuoteView['fromCurrency'],
    toCurrency: quote.toCurrency as QuoteView['toCurrency'],
    rate: formatRate(scaledFromDecimalText(quote.rate.toString(), RATE_DECIMALS)),
    convertedAmount: formatUsdc(quote.convertedMinor),
    sourceRate: quote.sourceRate,
    source: quote.source,
    rateAsOf: quote.rateAsOf.toISOString(),
    createdAt: quote.createdAt.toISOString(),
    expiresAt: quote.expiresAt.toISOString(),
  };
}

/**
 * Quotes `input.amount` KES in USDC at the current rate and stores the quote, held for
 * `ttlSeconds`. No current rate (source down, slow, unusable, stale, breaker open) is
 * `502 PAYMENT_ERROR` with nothing stored.
 */
export async function createQuote(
  tenant: QuoteTenant,
  input: QuoteInput,
  deps: QuoteDeps,
): Promise<QuoteView> {
  const amountMinor = amountMinorOf(input.amount);
  let rate: Awaited<ReturnType<RateSource['usdcPerKes']>>;
  try {
    rate = await deps.rates.usdcPerKes();
  } catch (err) {
    if (err instanceof RateSourceError) throw paymentError(err);
    throw err;
  }
  let convertedMinor: bigint;
  let rateScaled: bigint;
  try {
    convertedMinor = convertKesToUsdc(amountMinor, rate.kesPerUsdc);
    rateScaled = invertKesPerUsdc(rate.kesPerUsdc);
  } catch (err) {
    // Only from a rate source that does not check what it passes on (ours does).
    if (err instanceof RateSourceError) throw paymentError(err);
    throw err;
  }
  if (convertedMinor > INT64_MAX) {
    throw new AppError('PAYMENT_ERROR', 'The converted amount is too large to quote at the current rate');
  }
  const createdAt = deps.now();
  const quote = await tenant.quotes.create({
    _id: randomUUID(),
    fromCurrency: input.fromCurrency,
    toCurrency: input.toCurrency,
    amountMinor,
    rate: Types.Decimal128.fromString(formatRate(rateScaled)),
    convertedMinor,
    sourceRate: rate.kesPerUsdc,
    source: rate.source,
    rateFetchedAt: rate.fetchedAt,
    rateAsOf: rate.asOf,
    createdAt,
    expiresAt: new Date(createdAt.getTime() + deps.ttlSeconds * 1000),
  });
  return quoteView(quote, createdAt);
}

/** The organization's quote, `EXPIRED` from `expiresAt` on; another organization's is `404`. */
export async function readQuote(tenant: QuoteTenant, id: string, now: Date): Promise<QuoteView> {
  const quote = await tenant.quotes.findById(id);
  if (!quote) throw AppError.notFound('Quote');
  return quoteView(quote, now);
}
