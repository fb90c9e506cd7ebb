import {
  allocateEvenly,
  applyBasisPoints,
  CURRENCY_EXPONENTS,
  decimalString,
  formatMinor,
  formatMoney,
  MAX_EXPONENT,
  MoneyError,
  minorFromNumber,
  mulDiv,
  numberFromMinor,
  parseMinor,
  type Rounding,
  roundToUnit,
  sum,
  TOKEN_DECIMALS,
} from '@parametric/money';
import fc from 'fast-check';
import { Exact, exact, MAX_SAFE, major, minorOf, toBigint } from './reference';

const RUNS = { numRuns: 1_000 };

const exponent = fc.integer({ min: 0, max: MAX_EXPONENT });
const rounding = fc.constantFrom<Rounding>('TRUNCATE', 'HALF_UP', 'CEILING');

/** Small values (where ties and zero live), the 2^53 boundary, and far beyond 2^64. */
const minor = fc.oneof(
  fc.bigInt({ min: -1_000n, max: 1_000n }),
  fc.bigInt({ min: -(2n ** 54n), max: 2n ** 54n }),
  fc.bigInt({ min: -(2n ** 200n), max: 2n ** 200n }),
);
const nonZero = minor.filter((d) => d !== 0n);

function codeOf(run: () => unknown): string | undefined {
  try {
    run();
    return undefined;
  } catch (error) {
    if (error instanceof MoneyError) return error.code;
    throw error;
  }
}

/** Plain decimal strings: optional minus, 1–40 integer digits (leading zeros too), 0–25 decimals. */
const decimalParts = fc.record({
  negative: fc.boolean(),
  whole: fc.stringMatching(/^\d{1,40}$/),
  fraction: fc.stringMatching(/^\d{0,25}$/),
});
const decimalText = ({ negative, whole, fraction }: { negative: boolean; whole: string; fraction: string }) =>
  `${negative ? '-' : ''}${whole}${fraction ? `.${fraction}` : ''}`;

describe('decimal strings against decimal.js', () => {
  it('formatMinor writes the exact value with exactly `exponent` decimals', () => {
    fc.assert(
      fc.property(minor, exponent, (m, e) => {
        expect(formatMinor(m, e)).toBe(major(m, e).toFixed(e));
      }),
      RUNS,
    );
  });

  it('parseMinor ∘ formatMinor is the identity', () => {
    fc.assert(
      fc.property(minor, exponent, (m, e) => {
        expect(parseMinor(formatMinor(m, e), e)).toBe(m);
      }),
      RUNS,
    );
  });

  it('parseMinor agrees with decimal.js when the decimals fit, and refuses when they do not', () => {
    fc.assert(
      fc.property(decimalParts, exponent, (parts, e) => {
        const text = decimalText(parts);
        if (parts.fraction.length <= e) {
          expect(parseMinor(text, e)).toBe(toBigint(minorOf(exact(text), e)));
        } else {
          expect(codeOf(() => parseMinor(text, e))).toBe('TOO_MANY_DECIMALS');
        }
      }),
      RUNS,
    );
  });

  it('parseMinor refuses everything outside -?\\d+(\\.\\d+)?', () => {
    const junk = fc
      .string({ unit: fc.constantFrom('0', '1', '9', '.', '-', '+', 'e', 'E', ' ', ',', '_', 'x', '٣') })
      .filter((s) => !/^-?[0-9]+(\.[0-9]+)?$/.test(s));
    fc.assert(
      fc.property(junk, exponent, (s, e) => {
        expect(codeOf(() => parseMinor(s, e))).toBe('INVALID_DECIMAL');
      }),
      RUNS,
    );
  });

  it('decimalString accepts exactly what parseMinor accepts', () => {
    const text = fc.oneof(
      decimalParts.map(decimalText),
      fc.string({ unit: fc.constantFrom('0', '7', '.', '-', 'e') }),
    );
    fc.assert(
      fc.property(text, exponent, (s, e) => {
        expect(decimalString(e).safeParse(s).success).toBe(codeOf(() => parseMinor(s, e)) === undefined);
      }),
      RUNS,
    );
  });
});

describe('mulDiv and applyBasisPoints against decimal.js', () => {
  const roundTo = {
    TRUNCATE: Exact.ROUND_DOWN,
    HALF_UP: Exact.ROUND_HALF_UP,
    CEILING: Exact.ROUND_CEIL,
  } as const;

  it('mulDiv is the exact quotient rounded by the mode', () => {
    fc.assert(
      fc.property(minor, minor, nonZero, rounding, (a, b, d, mode) => {
        const expected = exact(a).times(exact(b)).div(exact(d)).toDecimalPlaces(0, roundTo[mode]);
        expect(mulDiv(a, b, d, mode)).toBe(toBigint(expected));
      }),
      RUNS,
    );
  });

  it('HALF_UP lands on ties exactly and moves them away from zero', () => {
    // a × 1 / 2 with odd a is always a tie.
    const odd = minor.map((m) => m * 2n + 1n);
    fc.assert(
      fc.property(odd, (a) => {
        const result = exact(mulDiv(a, 1n, 2n, 'HALF_UP'));
        const value = exact(a).div(2);
        expect(result.minus(value).abs().toString()).toBe('0.5');
        expect(result.abs().gt(value.abs())).toBe(true);
      }),
      RUNS,
    );
  });

  const bp = fc.oneof(fc.integer({ min: 0, max: 10_000 }), fc.integer({ min: 0, max: 1_000_000 }));

  it('truncated basis points never exceed the exact value and stay within one minor unit', () => {
    fc.assert(
      fc.property(minor, bp, (amount, points) => {
        const value = exact(amount).times(points).div(10_000);
        const result = exact(applyBasisPoints(amount, points, 'TRUNCATE'));
        expect(result.abs().lte(value.abs())).toBe(true);
        expect(value.minus(result).abs().lt(1)).toBe(true);
        // Truncation never flips the sign.
        expect(result.isZero() || result.isNegative() === value.isNegative()).toBe(true);
      }),
      RUNS,
    );
  });

  it('half-up basis points are within half a minor unit', () => {
    fc.assert(
      fc.property(minor, bp, (amount, points) => {
        const value = exact(amount).times(points).div(10_000);
        const result = exact(applyBasisPoints(amount, points, 'HALF_UP'));
        expect(value.minus(result).abs().lte(0.5)).toBe(true);
      }),
      RUNS,
    );
  });

  it('a determination never owes more than the sum insured', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 0n, max: 2n ** 80n }),
        fc.integer({ min: 0, max: 10_000 }),
        (insured, damage) => {
          const owed = applyBasisPoints(insured, damage, 'TRUNCATE');
          expect(owed >= 0n && owed <= insured).toBe(true);
        },
      ),
      RUNS,
    );
  });

  it('bigint and number basis points agree', () => {
    fc.assert(
      fc.property(minor, bp, rounding, (amount, points, mode) => {
        expect(applyBasisPoints(amount, BigInt(points), mode)).toBe(applyBasisPoints(amount, points, mode));
      }),
      RUNS,
    );
  });

  it('sum agrees with decimal.js', () => {
    fc.assert(
      fc.property(fc.array(minor, { maxLength: 20 }), (values) => {
        const expected = values.reduce((total, v) => total.plus(exact(v)), exact(0));
        expect(sum(values)).toBe(toBigint(expected));
      }),
      RUNS,
    );
  });
});

describe('JSON numbers against decimal.js', () => {
  /** Doubles of every kind, plus values as people type them (cents, whole shillings). */
  const double = fc.oneof(
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.integer({ min: -1_000_000_000, max: 1_000_000_000 }).map((cents) => cents / 100),
    fc.integer().map((whole) => whole * 1),
    fc.bigInt({ min: -(2n ** 56n), max: 2n ** 56n }).map((m) => Number(m) / 100),
  );

  const neighbourIsSameDouble = (n: number, m: bigint, e: number) =>
    Number(major(m - 1n, e).toString()) === n || Number(major(m + 1n, e).toString()) === n;

  it('minorFromNumber reads the decimal String(n) writes, or refuses it for a stated reason', () => {
    fc.assert(
      fc.property(double, exponent, (n, e) => {
        const value = minorOf(exact(String(n)), e);
        const code = codeOf(() => minorFromNumber(n, e));
        if (!value.isInteger()) {
          expect(code).toBe('TOO_MANY_DECIMALS');
          return;
        }
        const m = toBigint(value);
        if (m > MAX_SAFE || m < -MAX_SAFE) {
          expect(code).toBe('UNSAFE_MAGNITUDE');
        } else if (neighbourIsSameDouble(n, m, e)) {
          expect(code).toBe('UNSAFE_MAGNITUDE');
        } else {
          expect(code).toBeUndefined();
          expect(minorFromNumber(n, e)).toBe(m);
        }
      }),
      { numRuns: 5_000 },
    );
  });

  it('minorFromNumber recovers every amount of up to 15 significant digits', () => {
    // 15 digits always survive a trip through a double (DBL_DIG), whatever the exponent.
    fc.assert(
      fc.property(fc.bigInt({ min: -(10n ** 15n) + 1n, max: 10n ** 15n - 1n }), exponent, (m, e) => {
        expect(minorFromNumber(Number(major(m, e).toString()), e)).toBe(m);
      }),
      { numRuns: 5_000 },
    );
  });

  it('numberFromMinor is the double nearest the exact decimal, or refuses when that is ambiguous', () => {
    const near2p53 = fc.oneof(
      minor,
      fc.bigInt({ min: 2n ** 52n, max: 2n ** 53n + 10n }),
      fc.bigInt({ min: 2n ** 45n * 100n, max: 2n ** 47n * 100n }),
      // Where numberFromMinor stops taking 15 significant digits as exact without checking.
      fc.bigInt({ min: 10n ** 15n - 1_000n, max: 10n ** 15n + 1_000n }),
      fc.bigInt({ min: -(10n ** 15n) - 1_000n, max: -(10n ** 15n) + 1_000n }),
    );
    fc.assert(
      fc.property(near2p53, exponent, (m, e) => {
        const nearest = Number(major(m, e).toString());
        const ambiguous = m > MAX_SAFE || m < -MAX_SAFE || neighbourIsSameDouble(nearest, m, e);
        if (ambiguous) {
          expect(codeOf(() => numberFromMinor(m, e))).toBe('UNSAFE_MAGNITUDE');
        } else {
          const n = numberFromMinor(m, e);
          expect(n).toBe(nearest);
          expect(minorFromNumber(n, e)).toBe(m);
        }
      }),
      { numRuns: 5_000 },
    );
  });

  it('numberFromMinor always works below 10^15 minor units', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(10n ** 15n) + 1n, max: 10n ** 15n - 1n }), exponent, (m, e) => {
        expect(numberFromMinor(m, e)).toBe(Number(major(m, e).toString()));
      }),
      RUNS,
    );
  });
});

describe('formatMoney against Intl.NumberFormat', () => {
  const currencies = [...Object.keys(CURRENCY_EXPONENTS), ...Object.keys(TOKEN_DECIMALS)];
  const exponentOfCode = { ...CURRENCY_EXPONENTS, ...TOKEN_DECIMALS } as Record<string, number>;

  it('groups and writes decimals as en-US does for the exact value', () => {
    fc.assert(
      fc.property(minor, fc.constantFrom(...currencies), (m, currency) => {
        const e = exponentOfCode[currency] ?? Number.NaN;
        const intl = new Intl.NumberFormat('en-US', {
          minimumFractionDigits: e,
          maximumFractionDigits: e,
          useGrouping: true,
        });
        // A decimal string, not a number, so Intl formats the exact value.
        const expected = intl.format(major(m, e).toFixed(e) as Intl.StringNumericLiteral);
        expect(formatMoney(m, currency)).toBe(`${currency} ${expected}`);
      }),
      RUNS,
    );
  });
});

describe('payout amounts: roundToUnit and allocateEvenly', () => {
  const unit = fc.constantFrom(1n, 100n, 1_000n);

  it('CEILING to a unit is the smallest multiple of the unit not below the amount', () => {
    fc.assert(
      fc.property(minor, unit, (amount, u) => {
        const rounded = roundToUnit(amount, u, 'CEILING');
        expect(rounded % u).toBe(0n);
        expect(rounded >= amount).toBe(true);
        expect(rounded - amount < u).toBe(true);
      }),
      RUNS,
    );
  });

  it('parts add up to the total exactly, are whole units, and differ by at most one unit', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 0n, max: 2n ** 80n }),
        unit,
        fc.integer({ min: 1, max: 50 }),
        (raw, u, n) => {
          const total = raw * u;
          const parts = allocateEvenly(total, n, u);
          expect(parts).toHaveLength(n);
          expect(sum(parts)).toBe(total);
          for (const part of parts) expect(part % u).toBe(0n);
          const spread = (parts[0] as bigint) - (parts.at(-1) as bigint);
          expect(spread === 0n || spread === u).toBe(true);
          for (let i = 1; i < parts.length; i++)
            expect((parts[i] as bigint) <= (parts[i - 1] as bigint)).toBe(true);
        },
      ),
      RUNS,
    );
  });
});
