/**
 * ISO 4217 minor-unit exponents of the currencies we price, pay or report in. Adding a currency
 * here is a product decision: an amount in a currency missing from the registry cannot be
 * converted, and callers must say so (e.g. `CURRENCY_EXPONENT_UNREGISTERED`) rather than guess 2.
 */
export const CURRENCY_EXPONENTS = Object.freeze({
  KES: 2,
  GHS: 2,
  USD: 2,
  UGX: 0,
  TZS: 2,
  RWF: 0,
  NGN: 2,
  XOF: 0,
} as const);

/**
 * Token decimals, kept apart from ISO 4217 because they are not currencies in its sense: the
 * number comes from the token contract (USDC uses 6), and a future token with 18 decimals must
 * not be mistaken for a fiat currency with a registered exponent.
 */
export const TOKEN_DECIMALS = Object.freeze({
  USDC: 6,
} as const);

export type Iso4217Currency = keyof typeof CURRENCY_EXPONENTS;
export type Token = keyof typeof TOKEN_DECIMALS;

/**
 * The exponent of an ISO currency or a token, or `undefined` when it is registered in neither.
 * Codes are case-sensitive (ISO codes are upper case) and looked up as own keys only, so that
 * `"constructor"` or `"toString"` do not find `Object.prototype`.
 */
export function exponentOf(currency: string): number | undefined {
  if (Object.hasOwn(CURRENCY_EXPONENTS, currency)) {
    return CURRENCY_EXPONENTS[currency as Iso4217Currency];
  }
  if (Object.hasOwn(TOKEN_DECIMALS, currency)) return TOKEN_DECIMALS[currency as Token];
  return undefined;
}

/** The currency a market's policies are priced, paid and settled in. */
export const MARKET_CURRENCY = Object.freeze({
  KE: 'KES',
  GH: 'GHS',
} as const);

export type Market = keyof typeof MARKET_CURRENCY;

/** A literal tuple (not `Object.keys`, which widens to `string[]`) so it fits `z.enum(MARKETS)`. */
export const MARKETS = Object.freeze(['KE', 'GH'] as const) satisfies readonly Market[];

export function currencyOfMarket(market: Market): (typeof MARKET_CURRENCY)[Market] {
  return MARKET_CURRENCY[market];
}
