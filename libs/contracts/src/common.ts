import { paginationQuery, uuid } from '@parametric/http';
import { MARKET_CURRENCY, type Market } from '@parametric/money';
import { z } from 'zod';

/** Timestamps are ISO 8601 strings in UTC (`2026-11-22T10:00:00.000Z`). */
export const timestamp = z.iso.datetime({ offset: true }).meta({ example: '2026-11-22T10:00:00.000Z' });

/** A date as partners read it: the ISO string, or null while it is not set. */
export const isoOrNull = (d: Date | null | undefined): string | null => (d ? d.toISOString() : null);

/** `{ id }` path parameters. */
export const idParams = z.object({
  id: uuid.meta({ description: 'The resource id (uuid)', example: '3f2b8c1e-7d4a-4e6b-9a1c-2b3d4e5f6a7b' }),
});

/** E.164, e.g. +254712345678: the one phone format of the platform. */
export const E164 = /^\+[1-9]\d{7,14}$/;
export const phoneNumber = z
  .string({ error: 'must be a string' })
  .regex(E164, 'must be an E.164 phone number, e.g. +254712345678')
  .meta({ example: '+254712345678' });

/** The one paging rule (page from 1, limit 1..100, larger served as 100). */
export const pageQuery = paginationQuery();

/** A list filter's refusal names the values it takes. */
export const oneOf = (values: readonly string[]) => ({ error: `must be one of ${values.join(', ')}` });

export { uuid };

/** `Idempotency-Key`: 1–255 printable ASCII characters, chosen by the partner per operation. */
export const IDEMPOTENCY_KEY = /^[\x20-\x7E]{1,255}$/;

/**
 * The optional `Idempotency-Key` request header of a create (docs/api.md, "Retries and
 * idempotency"): the same key with the same body answers what the first request made.
 */
export const idempotencyHeaders = z.object({
  'Idempotency-Key': z
    .string({ error: 'must be sent once' })
    .regex(IDEMPOTENCY_KEY, 'must be 1 to 255 printable ASCII characters')
    .optional()
    .meta({
      description:
        'Your unique key for this purchase (1–255 printable ASCII characters, e.g. a UUID). A retry with the same key and the same body answers the policy the first request created, and buys nothing; the same key with another body is 409 CONFLICT. Kept as long as the policy.',
      example: '5d0f3c1e-purchase-farmer-42',
    }),
});

/** Marks a 201 that repeats an earlier request with the same `Idempotency-Key`. */
export const idempotentReplayHeaders = z.object({
  'Idempotent-Replayed': z.literal('true').optional().meta({
    description:
      'Present (`true`) when this answer repeats the request first made with the same Idempotency-Key: nothing was bought again. Absent on the request that bought.',
  }),
});

/**
 * RFC 7240 `Prefer`, as far as `return` goes: a caller that needs only what each item became
 * asks `return=minimal` and gets a shorter answer, marked `Preference-Applied: return=minimal`.
 * Any other preference is ignored, as RFC 7240 asks of a server that does not support it.
 */
export const returnPreferenceHeaders = z.object({
  // A list-based field: sent on several lines, it is one list (as RFC 9110 reads list-based fields), not refused.
  Prefer: z
    .union([
      z.string().max(1024, 'must be at most 1024 characters'),
      z.array(z.string().max(1024, 'must be at most 1024 characters')).max(8, 'must be sent at most 8 times'),
    ])
    .optional()
    .meta({
      description:
        'RFC 7240. `return=minimal`: each created or replayed item carries the ingestion fields only (no signed payload, signature or canonical bytes: read those with `GET /determinations/{id}`). Without it, or with `return=representation`, each carries the full determination. Other preferences are ignored.',
      example: 'return=minimal',
    }),
});

/** Marks an answer shortened by `Prefer: return=minimal`. */
export const preferenceAppliedHeaders = z.object({
  'Preference-Applied': z.literal('return=minimal').optional().meta({
    description: 'Present (`return=minimal`) when the answer is the minimal one the request preferred.',
  }),
});

/**
 * The `return` preference of a `Prefer` header (RFC 7240): the first one given counts, later
 * ones are ignored; names and values are read case-insensitively, a quoted value as its content
 * (a comma inside quotes separates nothing); a header sent on several lines is their list in
 * order. Undefined without one, or for a value other than `minimal` and `representation`.
 */
export function returnPreference(
  prefer: string | readonly string[] | undefined,
): 'minimal' | 'representation' | undefined {
  if (prefer === undefined) return undefined;
  const list = typeof prefer === 'string' ? prefer : prefer.join(',');
  for (const preference of splitOutsideQuotes(list, ',')) {
    const nameAndValue = splitOutsideQuotes(preference, ';')[0] as string;
    const at = nameAndValue.indexOf('=');
    const name = (at === -1 ? nameAndValue : nameAndValue.slice(0, at)).trim().toLowerCase();
    if (name !== 'return') continue;
    const value = (at === -1 ? '' : nameAndValue.slice(at + 1))
      .trim()
      .replace(/^"(.*)"$/, '$1')
      .toLowerCase();
    return value === 'minimal' || value === 'representation' ? value : undefined;
  }
  return undefined;
}

/** `text` split at each `separator` outside a quoted string (a backslash escapes inside one). */
function splitOutsideQuotes(text: string, separator: string): string[] {
  const parts: string[] = [];
  let quoted = false;
  let from = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted && c === '\\') i++;
    else if (c === '"') quoted = !quoted;
    else if (!quoted && c === separator) {
      parts.push(text.slice(from, i));
      from = i + 1;
    }
  }
  parts.push(text.slice(from));
  return parts;
}

/** Where the service moves money itself: the provider and the currency it collects and pays in. */
export interface MobileMoney {
  provider: 'MPESA';
  currency: string;
}

/**
 * The markets with a mobile-money provider, the one declaration of them: Tier 2
 * (`DETERMINATION_AND_SETTLEMENT`) collects the premium and pays the farmer by mobile money, so
 * an organization of a market not listed here stays Tier 1 (the gateway's ops service-tier
 * route refuses the change) and its premiums are never collected (the payments service).
 */
export const MOBILE_MONEY: Readonly<Partial<Record<Market, MobileMoney>>> = Object.freeze({
  KE: Object.freeze({ provider: 'MPESA', currency: MARKET_CURRENCY.KE }),
});

/** The markets of `MOBILE_MONEY`, e.g. for a query on an organization's `countryCode`. */
export const MOBILE_MONEY_MARKETS = Object.freeze(Object.keys(MOBILE_MONEY) as Market[]);

/** A market's mobile money, or undefined where there is none (any string: own keys only). */
export function mobileMoneyOf(market: string): MobileMoney | undefined {
  return Object.hasOwn(MOBILE_MONEY, market) ? MOBILE_MONEY[market as Market] : undefined;
}

/** `KE (KES)`: the markets with mobile money and their currency, for messages. */
export function mobileMoneyMarketsText(): string {
  return MOBILE_MONEY_MARKETS.map((m) => `${m} (${MOBILE_MONEY[m]?.currency})`).join(', ');
}
