import { z } from 'zod';
import { assertExponent } from './decimal';

/**
 * A decimal-string amount with at most `exponent` decimals, as parseMinor accepts it, so a
 * request is refused at validation with a field error instead of failing later in a handler.
 */
export function decimalString(exponent: number) {
  assertExponent(exponent);
  const pattern = exponent === 0 ? /^-?\d+$/ : new RegExp(`^-?\\d+(\\.\\d{1,${exponent}})?$`);
  const message =
    exponent === 0
      ? 'must be a whole-number decimal string, like "1500"'
      : `must be a decimal string with at most ${exponent} decimal places, like "1234.50"`;
  return z.string().regex(pattern, message);
}
