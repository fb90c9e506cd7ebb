import { defineRoute } from '@parametric/http';
import { MoneyError, minorFromNumber } from '@parametric/money';
import { z } from 'zod';
import { idParams, timestamp } from '../common';

// Quotes: what an amount of KES is worth in USDC at the current rate (docs/decisions.md, "Quotes").

/** What quotes convert, for now: KES into USDC (the payout token). */
export const QUOTE_FROM_CURRENCIES = ['KES'] as const;
export const QUOTE_TO_CURRENCIES = ['USDC'] as const;
export type QuoteFromCurrency = (typeof QUOTE_FROM_CURRENCIES)[number];
export type QuoteToCurrency = (typeof QUOTE_TO_CURRENCIES)[number];

/** Largest amount quoted, in KES (major units). */
export const QUOTE_MAX_AMOUNT = 1_000_000_000_000;
/** Decimals of `rate` (USDC per 1 KES), truncated toward zero from the exact inverse of the source's rate. */
export const QUOTE_RATE_DECIMALS = 18;
export const QUOTE_STATUSES = ['ACTIVE', 'EXPIRED'] as const;

/**
 * At most 2 decimals, read exactly (the decimal the sender wrote, not the double's binary
 * value); an amount with more is refused, never rounded.
 */
function isKesAmount(n: number): boolean {
  try {
    minorFromNumber(n, 2);
    return true;
  } catch (error) {
    if (error instanceof MoneyError) return false;
    throw error;
  }
}

export const createQuoteBody = z
  .strictObject({
    amount: z
      .number({ error: 'must be a number' })
      .gt(0, 'must be greater than 0')
      .max(QUOTE_MAX_AMOUNT, 'must be at most 1000000000000')
      .refine(isKesAmount, 'must have at most 2 decimal places (KES has 2); amounts are never rounded')
      .meta({ description: 'Major units of `fromCurrency`, at most 2 decimals', example: 1000 }),
    fromCurrency: z.enum(QUOTE_FROM_CURRENCIES, {
      error: 'must be KES: quotes convert KES to USDC only, for now',
    }),
    toCurrency: z.enum(QUOTE_TO_CURRENCIES, {
      error: 'must be USDC: quotes convert KES to USDC only, for now',
    }),
  })
  .meta({
    id: 'QuoteRequest',
    example: { amount: 1000, fromCurrency: 'KES', toCurrency: 'USDC' },
  });

export const quoteSchema = z
  .object({
    quoteId: z.uuid(),
    status: z.enum(QUOTE_STATUSES).meta({
      description: '`EXPIRED` from `expiresAt` on (the quote is kept and can still be read)',
    }),
    amount: z
      .string()
      .regex(/^\d+\.\d{2}$/)
      .meta({
        description: 'The amount quoted, in KES, as a decimal string with 2 decimals',
        example: '1000.00',
      }),
    fromCurrency: z.enum(QUOTE_FROM_CURRENCIES),
    toCurrency: z.enum(QUOTE_TO_CURRENCIES),
    rate: z
      .string()
      .regex(/^\d+\.\d{18}$/)
      .meta({
        description:
          'USDC per 1 KES, 18 decimals: the exact inverse of `sourceRate`, truncated toward zero at the 18th decimal',
        example: '0.007724990343762070',
      }),
    convertedAmount: z
      .string()
      .regex(/^\d+\.\d{6}$/)
      .meta({
        description:
          '`amount` ÷ `sourceRate` in USDC, exact, truncated toward zero once at the 6th decimal: never more than the rate gives. (`amount` × `rate` truncated is the same or one micro-USDC less, `rate` being truncated itself.)',
        example: '7.724990',
      }),
    sourceRate: z.string().meta({
      description: 'KES per 1 USDC exactly as the rate source gave it; `rate` is its inverse',
      example: '129.45',
    }),
    source: z.string().meta({ description: 'Where the rate came from', example: 'api.coinbase.com' }),
    rateAsOf: timestamp.meta({
      description:
        'When the rate was current: the source’s own timestamp if it gives one, else when we fetched it',
    }),
    createdAt: timestamp,
    expiresAt: timestamp.meta({ description: 'The quote holds until this instant (exclusive)' }),
  })
  .meta({
    id: 'Quote',
    description: 'A KES → USDC quote: the rate and converted amount, held until `expiresAt`',
  });

export const createQuoteRoute = defineRoute({
  operationId: 'createQuote',
  method: 'post',
  path: '/payments/quote',
  summary: 'Quote a KES amount in USDC',
  description:
    'Converts `amount` KES into USDC at the current exchange rate and keeps the quote until `expiresAt` (5 minutes by default). `sourceRate` is the source’s KES per 1 USDC as given; `rate` is its inverse, USDC per 1 KES with 18 decimals, truncated toward zero; `convertedAmount` is `amount` ÷ `sourceRate` computed exactly and truncated toward zero once at USDC’s 6th decimal, so a quote never promises more than the rate gives. An amount with more than 2 decimals is refused, never rounded. When no current rate can be had (the source is down, slow, answers something unusable or a rate older than 2 minutes) the quote is refused with `502 PAYMENT_ERROR` and nothing is stored: we never quote a made-up or stale rate; try again shortly.',
  tags: ['Payments'],
  auth: 'partner',
  capability: 'payment:read',
  body: createQuoteBody,
  responses: { 201: { description: 'The quote, stored', data: quoteSchema } },
  errors: ['PAYMENT_ERROR'],
});

export const getQuoteRoute = defineRoute({
  operationId: 'getQuote',
  method: 'get',
  path: '/payments/quotes/{id}',
  summary: 'Read a quote',
  description:
    'The quote as it was given, with `status` `EXPIRED` once `expiresAt` has passed. Another organization’s quote is `404`, like an unknown id.',
  tags: ['Payments'],
  auth: 'partner',
  capability: 'payment:read',
  params: idParams,
  responses: { 200: { description: 'The quote', data: quoteSchema } },
  errors: [],
});

export const QUOTE_ROUTES = [createQuoteRoute, getQuoteRoute] as const;
