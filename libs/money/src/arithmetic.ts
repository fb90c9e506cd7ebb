import { MoneyError } from './errors';

/**
 * TRUNCATE drops the remainder (toward zero); HALF_UP rounds to the nearest and ties away from
 * zero, as commercial rounding does, so −2.5 becomes −3 and a refund mirrors its charge.
 * Determinations truncate (we never owe more than the terms say); premiums round half up.
 */
export type Rounding = 'TRUNCATE' | 'HALF_UP';

/** a × b / d, exact: the product is never rounded, only the one division at the end. */
export function mulDiv(a: bigint, b: bigint, d: bigint, rounding: Rounding): bigint {
  for (const [name, value] of [
    ['a', a],
    ['b', b],
    ['d', d],
  ] as const) {
    if (typeof value !== 'bigint') throw new MoneyError('NOT_BIGINT', `${name} must be a bigint`);
  }
  if (d === 0n) throw new MoneyError('DIVISION_BY_ZERO', 'mulDiv divisor must not be zero');
  const product = a * b;
  // bigint division already truncates toward zero, whatever the signs.
  const quotient = product / d;
  if (rounding === 'TRUNCATE') return quotient;
  if (rounding !== 'HALF_UP')
    throw new MoneyError('INVALID_ROUNDING', `unknown rounding ${String(rounding)}`);
  const remainder = product % d;
  const twiceRemainder = remainder < 0n ? -2n * remainder : 2n * remainder;
  const divisor = d < 0n ? -d : d;
  if (twiceRemainder < divisor) return quotient;
  // The quotient can be 0 here (e.g. −1 / 2), so its sign can't tell which way "away" is.
  return product < 0n !== d < 0n ? quotient - 1n : quotient + 1n;
}

/**
 * amount × bp / 10 000 (a basis point is 1/100 of a percent). Damage percentages and rates
 * arrive as basis points so they are integers too; a fractional bp means a caller did float
 * maths upstream, which we refuse rather than round.
 */
export function applyBasisPoints(amountMinor: bigint, bp: bigint | number, rounding: Rounding): bigint {
  if (typeof bp === 'number' && !Number.isSafeInteger(bp)) {
    throw new MoneyError('INVALID_BASIS_POINTS', 'basis points must be an integer');
  }
  if (typeof bp !== 'number' && typeof bp !== 'bigint') {
    throw new MoneyError('INVALID_BASIS_POINTS', 'basis points must be an integer');
  }
  const points = BigInt(bp);
  if (points < 0n) throw new MoneyError('INVALID_BASIS_POINTS', 'basis points must not be negative');
  return mulDiv(amountMinor, points, 10_000n, rounding);
}

/** The exact sum (0n for none). */
export function sum(values: readonly bigint[]): bigint {
  let total = 0n;
  for (const value of values) {
    if (typeof value !== 'bigint') throw new MoneyError('NOT_BIGINT', 'sum takes bigints only');
    total += value;
  }
  return total;
}
