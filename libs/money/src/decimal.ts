import { MoneyError } from './errors';

/**
 * The largest exponent we convert with. 18 is the most any token uses (ERC-20 default); the
 * bound also keeps `10n ** exponent` from becoming a denial of service on a bad argument.
 */
export const MAX_EXPONENT = 18;

export function assertExponent(exponent: number): void {
  if (!Number.isInteger(exponent) || exponent < 0 || exponent > MAX_EXPONENT) {
    throw new MoneyError('INVALID_EXPONENT', `exponent must be an integer from 0 to ${MAX_EXPONENT}`);
  }
}

function assertBigint(value: unknown, what: string): asserts value is bigint {
  // A JS number slipping in (a lean document, a JSON body) must fail here, not lose precision.
  if (typeof value !== 'bigint') throw new MoneyError('NOT_BIGINT', `${what} must be a bigint`);
}

const DECIMAL = /^(-?)(\d+)(?:\.(\d+))?$/;

/**
 * Minor units of a decimal string in major units ("1234.56", 2 → 123456n). Only plain decimals
 * (`-?\d+(\.\d+)?`): no exponent notation, no grouping, no "+". Trailing zeros count as digits,
 * so "5.00" is refused for a 0-exponent currency: the sender believes in cents that do not
 * exist, and we would rather tell them than round anything.
 */
export function parseMinor(decimal: string, exponent: number): bigint {
  assertExponent(exponent);
  const match = typeof decimal === 'string' ? DECIMAL.exec(decimal) : null;
  if (!match) {
    throw new MoneyError('INVALID_DECIMAL', 'amount must be a decimal string like "1234.56"');
  }
  const [, sign = '', whole = '', fraction = ''] = match;
  if (fraction.length > exponent) {
    throw new MoneyError(
      'TOO_MANY_DECIMALS',
      `amount has ${fraction.length} decimal places; at most ${exponent} allowed`,
    );
  }
  const minor = BigInt(whole + fraction.padEnd(exponent, '0'));
  return sign === '-' ? -minor : minor;
}

/** The decimal string of an amount in minor units, with exactly `exponent` decimals (123456n, 2 → "1234.56"). */
export function formatMinor(minor: bigint, exponent: number): string {
  assertBigint(minor, 'minor');
  assertExponent(exponent);
  const negative = minor < 0n;
  const digits = (negative ? -minor : minor).toString().padStart(exponent + 1, '0');
  const whole = digits.slice(0, digits.length - exponent);
  const fraction = digits.slice(digits.length - exponent);
  return `${negative ? '-' : ''}${whole}${exponent > 0 ? `.${fraction}` : ''}`;
}

/** Number.toString's grammar for finite values: digits, optional fraction, optional exponent. */
const NUMBER_STRING = /^(-?)(\d+)(?:\.(\d+))?(?:e([+-]\d+))?$/;

/**
 * Minor units of a JSON number in major units (the partner API types sumInsured, premium and
 * amount as numbers). A double like 0.1 is not 0.1, so we read the decimal the sender wrote:
 * the shortest decimal that round-trips to the double (what `String(n)` gives, e.g. "0.1",
 * "1.5e-7", "1e+21"). Refused, never rounded:
 * - NaN and ±Infinity;
 * - more decimals than the currency has;
 * - magnitudes where another amount in the same minor unit parses to the same double, e.g.
 *   90071992547409.91 with 2 decimals is the same double as 90071992547409.90, so we cannot
 *   know which was meant. Past 2^53 − 1 minor units this is always the case, and below it with
 *   exponent > 0 it starts a little earlier (ulp > 10^-exponent).
 */
export function minorFromNumber(n: number, exponent: number): bigint {
  assertExponent(exponent);
  if (typeof n !== 'number' || !Number.isFinite(n)) {
    throw new MoneyError('NOT_FINITE', 'amount must be a finite number');
  }
  const match = NUMBER_STRING.exec(String(n));
  if (!match) throw new MoneyError('INVALID_DECIMAL', `cannot read ${String(n)} as a decimal`);
  const [, sign = '', whole = '', fraction = '', power = '0'] = match;
  // value = coefficient × 10^scale, with the coefficient free of trailing zeros, so that a
  // negative shift below means digits beyond the minor unit, not zeros we could drop.
  let coefficient = (whole + fraction).replace(/^0+(?=\d)/, '');
  if (coefficient === '0') return 0n;
  let scale = Number(power) - fraction.length;
  while (coefficient.length > 1 && coefficient.endsWith('0')) {
    coefficient = coefficient.slice(0, -1);
    scale += 1;
  }
  const shift = scale + exponent;
  if (shift < 0) {
    throw new MoneyError('TOO_MANY_DECIMALS', `amount ${String(n)} has more than ${exponent} decimal places`);
  }
  // 17 digits or more is past MAX_SAFE_INTEGER (16 digits); don't build a 300-digit bigint for 1e300.
  if (coefficient.length + shift > 16) throw unsafe(n, exponent);
  const magnitude = BigInt(coefficient) * 10n ** BigInt(shift);
  if (magnitude > BigInt(Number.MAX_SAFE_INTEGER)) throw unsafe(n, exponent);
  const minor = sign === '-' ? -magnitude : magnitude;
  if (Number(formatMinor(minor - 1n, exponent)) === n || Number(formatMinor(minor + 1n, exponent)) === n) {
    throw unsafe(n, exponent);
  }
  return minor;
}

function unsafe(n: number, exponent: number): MoneyError {
  return new MoneyError(
    'UNSAFE_MAGNITUDE',
    `amount ${String(n)} is too large to be exact as a JSON number with ${exponent} decimal places; send it as a string`,
  );
}

/** Past 10^15 − 2 minor units an amount or a neighbour has 16 significant digits (see numberFromMinor). */
const EXACT_IN_A_DOUBLE = 10n ** 15n - 1n;

/**
 * The JSON number for an amount: the double nearest the exact decimal. Throws when that double
 * would not read back as the same amount (past 2^53 − 1 minor units, or a little earlier with
 * decimals; see minorFromNumber), because a client would then see a different amount from ours.
 */
export function numberFromMinor(minor: bigint, exponent: number): number {
  const n = Number(formatMinor(minor, exponent));
  // Every decimal of at most 15 significant digits reads back from its nearest double as itself
  // (a double holds 15 decimal digits, IEEE 754's DBL_DIG), so two of them never share a double:
  // such an amount and both its neighbours (minor ± 1) are exact, and the check below could
  // only agree. It is skipped for them because every money field of every read passes here.
  if (minor > -EXACT_IN_A_DOUBLE && minor < EXACT_IN_A_DOUBLE) return n;
  let back: bigint | undefined;
  try {
    back = minorFromNumber(n, exponent);
  } catch (error) {
    if (!(error instanceof MoneyError)) throw error;
  }
  if (back !== minor) {
    throw new MoneyError(
      'UNSAFE_MAGNITUDE',
      `${formatMinor(minor, exponent)} cannot be written exactly as a JSON number`,
    );
  }
  return n;
}
