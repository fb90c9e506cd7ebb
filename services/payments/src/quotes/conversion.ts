import { CURRENCY_EXPONENTS, formatMinor, mulDiv, TOKEN_DECIMALS } from '@parametric/money';
import { parseKesPerUsdc, RATE_DECIMALS } from './rates';

export const KES_EXPONENT = CURRENCY_EXPONENTS.KES;
export const USDC_DECIMALS = TOKEN_DECIMALS.USDC;

/**
 * USDC minor units (micro-USDC) for `amountMinor` KES (cents) at the source's `kesPerUsdc`:
 * amount ÷ rate, exact, truncated toward zero once at USDC's 6th decimal, so a quote never
 * promises more than the rate gives. For a rate N / 10^k: amountMinor × 10^(k + 6 − 2) / N.
 * The quote's displayed `rate` (18 decimals, truncated) is not an input: rounding twice could
 * only lose a micro-USDC.
 */
export function convertKesToUsdc(amountMinor: bigint, kesPerUsdc: string): bigint {
  const { units, decimals } = parseKesPerUsdc(kesPerUsdc);
  const scale = 10n ** BigInt(decimals + USDC_DECIMALS - KES_EXPONENT);
  return mulDiv(amountMinor, scale, units, 'TRUNCATE');
}

export const formatKes = (minor: bigint) => formatMinor(minor, KES_EXPONENT);
export const formatUsdc = (minor: bigint) => formatMinor(minor, USDC_DECIMALS);
export const formatRate = (scaled: bigint) => formatMinor(scaled, RATE_DECIMALS);

const DECIMAL_TEXT = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/;

/**
 * A decimal (as Decimal128's `toString` writes it, exponent notation included, e.g.
 * "7.725E-3") scaled by 10^scale, exactly; more decimals than `scale` is an error, not a rounding.
 */
export function scaledFromDecimalText(text: string, scale: number): bigint {
  const match = DECIMAL_TEXT.exec(text);
  if (!match) throw new Error(`not a decimal: ${text}`);
  const [, sign = '', whole = '', fraction = '', power = '0'] = match;
  const shift = Number(power) - fraction.length + scale;
  let digits = BigInt(whole + fraction);
  if (shift >= 0) digits *= 10n ** BigInt(shift);
  else {
    const divisor = 10n ** BigInt(-shift);
    if (digits % divisor !== 0n) throw new Error(`${text} has more than ${scale} decimals`);
    digits /= divisor;
  }
  return sign === '-' ? -digits : digits;
}
