import { Decimal } from 'decimal.js';

/**
 * decimal.js as the reference: exact for everything the tests generate (a few hundred digits),
 * and never in exponent notation, so its strings compare with ours.
 */
export const Exact = Decimal.clone({ precision: 1_000, toExpNeg: -9e15, toExpPos: 9e15 });
export type Exact = InstanceType<typeof Exact>;

export const exact = (value: bigint | string | number): Exact =>
  new Exact(typeof value === 'bigint' ? value.toString() : value);

/** The exact value, in major units, of an amount in minor units. */
export const major = (minor: bigint, exponent: number): Exact => exact(minor).div(exact(10).pow(exponent));

/** The exact minor units of a decimal in major units (may be fractional). */
export const minorOf = (decimal: Exact, exponent: number): Exact => decimal.times(exact(10).pow(exponent));

export const toBigint = (integer: Exact): bigint => {
  if (!integer.isInteger()) throw new Error(`${integer.toString()} is not an integer`);
  return BigInt(integer.toFixed(0));
};

export const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
