import { Decimal128 } from 'bson';

/**
 * IEEE 754-2008 decimal128 arithmetic on `(-1)^neg × coef × 10^exp` with a BigInt
 * coefficient, because `bson`'s Decimal128 only stores values. Results are rounded to 34
 * digits, half to even, and keep the exponents IEEE prescribes (1.50 + 1 = 2.50), which is
 * what mongod's Intel library does.
 */
export interface FiniteDec {
  kind: 'finite';
  neg: boolean;
  coef: bigint;
  exp: number;
}
export type Dec = FiniteDec | { kind: 'nan' } | { kind: 'inf'; neg: boolean };

const PRECISION = 34;
const MAX_EXP = 6111;
const MIN_EXP = -6176;
export const NAN: Dec = { kind: 'nan' };

const POW10: bigint[] = [1n];
for (let i = 1; i <= 80; i++) POW10.push((POW10[i - 1] as bigint) * 10n);

export function pow10(n: number): bigint {
  return POW10[n] ?? 10n ** BigInt(n);
}

export function digitCount(coef: bigint): number {
  return coef === 0n ? 1 : coef.toString().length;
}

export function finite(neg: boolean, coef: bigint, exp: number): FiniteDec {
  return { kind: 'finite', neg, coef, exp };
}

/** Rounds to `precision` digits (half to even; `sticky` means the exact value was a bit larger) and clamps the exponent. */
export function round(neg: boolean, coef: bigint, exp: number, sticky = false, precision = PRECISION): Dec {
  const drop = Math.max(digitCount(coef) - precision, MIN_EXP - exp);
  if (drop > 0) {
    const p = pow10(drop);
    let q = coef / p;
    const rem = coef % p;
    const half = p / 2n;
    if (rem > half || (rem === half && (sticky || q % 2n === 1n))) q += 1n;
    coef = q;
    exp += drop;
    if (digitCount(coef) > precision) {
      coef /= 10n;
      exp += 1;
    }
  }
  if (exp > MAX_EXP) {
    const pad = exp - MAX_EXP;
    if (coef !== 0n && digitCount(coef) + pad > PRECISION) return { kind: 'inf', neg };
    coef *= pow10(coef === 0n ? 0 : pad);
    exp = MAX_EXP;
  }
  return finite(neg, coef, exp);
}

const DECIMAL_STRING = /^(-?)(\d+)(?:\.(\d+))?(?:E([+-]\d+))?$/;

export function fromDecimal128(value: Decimal128): Dec {
  const text = value.toString();
  if (text === 'NaN') return NAN;
  if (text === 'Infinity' || text === '-Infinity') return { kind: 'inf', neg: text.startsWith('-') };
  const m = DECIMAL_STRING.exec(text);
  if (!m) throw new Error(`unexpected Decimal128 text ${text}`);
  const fraction = m[3] ?? '';
  return finite(m[1] === '-', BigInt(`${m[2]}${fraction}`), Number(m[4] ?? 0) - fraction.length);
}

export function toDecimal128(value: Dec): Decimal128 {
  if (value.kind === 'nan') return Decimal128.fromString('NaN');
  if (value.kind === 'inf') return Decimal128.fromString(value.neg ? '-Infinity' : 'Infinity');
  const r = round(value.neg, value.coef, value.exp);
  if (r.kind !== 'finite') return toDecimal128(r);
  return Decimal128.fromString(`${r.neg ? '-' : ''}${r.coef}E${r.exp}`);
}

export function fromBigInt(value: bigint): FiniteDec {
  return finite(value < 0n, value < 0n ? -value : value, 0);
}

const FLOAT_VIEW = new DataView(new ArrayBuffer(8));

/** The exact value of a double: an odd binary mantissa times 5^k gives a terminating decimal. */
export function exactDouble(x: number): Dec {
  if (Number.isNaN(x)) return NAN;
  if (!Number.isFinite(x)) return { kind: 'inf', neg: x < 0 };
  if (Number.isSafeInteger(x)) return finite(x < 0 || Object.is(x, -0), BigInt(Math.abs(x)), 0);
  FLOAT_VIEW.setFloat64(0, x);
  const hi = FLOAT_VIEW.getUint32(0);
  const lo = FLOAT_VIEW.getUint32(4);
  const biased = (hi >>> 20) & 0x7ff;
  let mantissa = (BigInt(hi & 0xfffff) << 32n) | BigInt(lo);
  let e2 = -1074;
  if (biased !== 0) {
    mantissa |= 1n << 52n;
    e2 = biased - 1075;
  }
  while (e2 < 0 && (mantissa & 1n) === 0n) {
    mantissa >>= 1n;
    e2++;
  }
  const neg = hi >>> 31 === 1;
  if (e2 >= 0) return finite(neg, mantissa << BigInt(e2), 0);
  return finite(neg, mantissa * 5n ** BigInt(-e2), e2);
}

/**
 * A double as mongod turns it into a decimal: 34 digits where aggregation sums meet
 * decimals, exactly 15 significant digits (0.1 → 0.100000000000000) everywhere else.
 */
export function fromDouble(x: number, digits: 15 | 34): Dec {
  const exact = exactDouble(x);
  if (exact.kind !== 'finite' || exact.coef === 0n)
    return exact.kind === 'finite' ? finite(exact.neg, 0n, 0) : exact;
  const rounded = round(exact.neg, exact.coef, exact.exp);
  if (digits === 34 || rounded.kind !== 'finite') return rounded;
  const n = digitCount(rounded.coef);
  if (n > 15) return round(rounded.neg, rounded.coef, rounded.exp, false, 15);
  return finite(rounded.neg, rounded.coef * pow10(15 - n), rounded.exp - (15 - n));
}

function signedCoef(value: FiniteDec, exp: number): bigint {
  const scaled = value.coef * pow10(value.exp - exp);
  return value.neg ? -scaled : scaled;
}

export function add(a: Dec, b: Dec): Dec {
  if (a.kind === 'nan' || b.kind === 'nan') return NAN;
  if (a.kind === 'inf') return b.kind === 'inf' && b.neg !== a.neg ? NAN : a;
  if (b.kind === 'inf') return b;
  const exp = Math.min(a.exp, b.exp);
  const sum = signedCoef(a, exp) + signedCoef(b, exp);
  const neg = sum < 0n || (sum === 0n && a.neg && b.neg);
  return round(neg, sum < 0n ? -sum : sum, exp);
}

export function negate(a: Dec): Dec {
  if (a.kind === 'nan') return a;
  return { ...a, neg: !a.neg };
}

export function subtract(a: Dec, b: Dec): Dec {
  return add(a, negate(b));
}

function isZero(a: Dec): boolean {
  return a.kind === 'finite' && a.coef === 0n;
}

export function multiply(a: Dec, b: Dec): Dec {
  if (a.kind === 'nan' || b.kind === 'nan') return NAN;
  const neg = a.neg !== b.neg;
  if (a.kind === 'inf' || b.kind === 'inf') return isZero(a) || isZero(b) ? NAN : { kind: 'inf', neg };
  return round(neg, a.coef * b.coef, a.exp + b.exp);
}

/** Callers reject a zero divisor first, as mongod does ("can't $divide by zero"). */
export function divide(a: Dec, b: Dec): Dec {
  if (a.kind === 'nan' || b.kind === 'nan') return NAN;
  const neg = a.neg !== b.neg;
  if (a.kind === 'inf') return b.kind === 'inf' ? NAN : { kind: 'inf', neg };
  if (b.kind === 'inf') return finite(neg, 0n, 0);
  if (b.coef === 0n) return a.coef === 0n ? NAN : { kind: 'inf', neg };
  const preferred = a.exp - b.exp;
  if (a.coef === 0n) return round(neg, 0n, preferred);
  const shift = Math.max(0, PRECISION + 1 + digitCount(b.coef) - digitCount(a.coef));
  const numerator = a.coef * pow10(shift);
  let q = numerator / b.coef;
  const rem = numerator % b.coef;
  let exp = preferred - shift;
  if (rem !== 0n) return round(neg, q, exp, true);
  while (exp < preferred && q % 10n === 0n) {
    q /= 10n;
    exp++;
  }
  return round(neg, q, exp);
}

/** Compares two finite values numerically (1.0 equals 1.00, -0 equals 0). */
export function compareFinite(a: FiniteDec, b: FiniteDec): number {
  const sa = a.coef === 0n ? 0 : a.neg ? -1 : 1;
  const sb = b.coef === 0n ? 0 : b.neg ? -1 : 1;
  if (sa !== sb || sa === 0) return Math.sign(sa - sb);
  const magA = digitCount(a.coef) + a.exp;
  const magB = digitCount(b.coef) + b.exp;
  let magnitude: number;
  if (magA !== magB) magnitude = magA < magB ? -1 : 1;
  else {
    const exp = Math.min(a.exp, b.exp);
    const x = a.coef * pow10(a.exp - exp);
    const y = b.coef * pow10(b.exp - exp);
    magnitude = x < y ? -1 : x > y ? 1 : 0;
  }
  return sa * magnitude;
}

/** Total order used by comparisons: NaN first, then -Infinity … Infinity. */
export function compare(a: Dec, b: Dec): number {
  const rank = (d: Dec) => (d.kind === 'nan' ? 0 : d.kind === 'inf' ? (d.neg ? 1 : 3) : 2);
  const ra = rank(a);
  const rb = rank(b);
  if (ra !== rb || ra !== 2) return Math.sign(ra - rb);
  return compareFinite(a as FiniteDec, b as FiniteDec);
}

/** The value with trailing zeros stripped, so equal values print alike (`D` index keys). */
export function canonicalText(value: FiniteDec): string {
  if (value.coef === 0n) return '0';
  let { coef, exp } = value;
  while (coef % 10n === 0n) {
    coef /= 10n;
    exp++;
  }
  return `${value.neg ? '-' : ''}${coef}e${exp}`;
}

/** Truncates toward zero (for $toLong and date arithmetic). */
export function truncateToBigInt(value: FiniteDec): bigint {
  const magnitude = value.exp >= 0 ? value.coef * pow10(value.exp) : value.coef / pow10(-value.exp);
  return value.neg ? -magnitude : magnitude;
}
