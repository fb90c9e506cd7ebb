import { MoneyError } from './errors';

/**
 * Every rounding the platform makes, in one place:
 * - TRUNCATE drops the remainder (toward zero). Determinations truncate: we never owe more than
 *   the terms say.
 * - HALF_UP rounds to the nearest and ties away from zero, as commercial rounding does, so −2.5
 *   becomes −3 and a refund mirrors its charge. Premiums round half up.
 * - CEILING rounds toward +∞. Payouts round up to the unit the provider moves (M-Pesa: whole
 *   shillings), so the farmer is never paid less than owed; the platform absorbs the fraction
 *   (docs/payments.md, "Payouts").
 */
export type Rounding = 'TRUNCATE' | 'HALF_UP' | 'CEILING';

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
  const remainder = product % d;
  if (rounding === 'CEILING') {
    // Truncation moved a positive quotient down; a negative one it already moved up.
    return remainder !== 0n && product < 0n === d < 0n ? quotient + 1n : quotient;
  }
  if (rounding !== 'HALF_UP')
    throw new MoneyError('INVALID_ROUNDING', `unknown rounding ${String(rounding)}`);
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

/**
 * `amountMinor` rounded to a multiple of `unitMinor` (e.g. 100n: whole shillings of KES), still in
 * minor units. The one place an amount is fitted to what a provider can move.
 */
export function roundToUnit(amountMinor: bigint, unitMinor: bigint, rounding: Rounding): bigint {
  if (typeof amountMinor !== 'bigint' || typeof unitMinor !== 'bigint') {
    throw new MoneyError('NOT_BIGINT', 'roundToUnit takes bigints only');
  }
  if (unitMinor <= 0n) throw new MoneyError('DIVISION_BY_ZERO', 'the unit must be positive');
  return mulDiv(amountMinor, 1n, unitMinor, rounding) * unitMinor;
}

/**
 * `total` split into `count` parts that differ by at most one unit (`unitMinor`) and add up to
 * `total` exactly, larger parts first: an amount above a provider's per-transaction maximum paid
 * in as few, as equal parts as possible, so no part falls below the provider's minimum. `total`
 * must be a non-negative multiple of `unitMinor`.
 */
export function allocateEvenly(total: bigint, count: number, unitMinor = 1n): bigint[] {
  if (typeof total !== 'bigint' || typeof unitMinor !== 'bigint') {
    throw new MoneyError('NOT_BIGINT', 'allocateEvenly takes bigints only');
  }
  if (!Number.isSafeInteger(count) || count < 1) {
    throw new MoneyError('INVALID_PARTS', 'count must be a positive integer');
  }
  if (unitMinor <= 0n || total < 0n || total % unitMinor !== 0n) {
    throw new MoneyError('INVALID_PARTS', 'total must be a non-negative multiple of the unit');
  }
  const units = total / unitMinor;
  const n = BigInt(count);
  const base = units / n;
  const larger = Number(units % n);
  return Array.from({ length: count }, (_, i) => (base + (i < larger ? 1n : 0n)) * unitMinor);
}
