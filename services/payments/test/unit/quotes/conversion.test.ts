import { formatMinor } from '@parametric/money';
import { Decimal } from 'decimal.js';
import fc from 'fast-check';
import { convertKesToUsdc, scaledFromDecimalText } from '../../../src/quotes/conversion';
import { invertKesPerUsdc, parseKesPerUsdc, RateSourceError } from '../../../src/quotes/rates';

/** decimal.js as the exact reference (a thousand digits: far more than any value here has). */
const Exact = Decimal.clone({ precision: 1_000, toExpNeg: -9e15, toExpPos: 9e15 });
const exact = (v: bigint | string) => new Exact(typeof v === 'bigint' ? v.toString() : v);
const floorBigint = (d: InstanceType<typeof Exact>) => BigInt(d.floor().toFixed(0));

/** micro-USDC for `amountMinor` KES cents at `kesPerUsdc`: floor(amount ÷ rate × 10^6), by decimal.js. */
const referenceConverted = (amountMinor: bigint, kesPerUsdc: string) =>
  floorBigint(exact(amountMinor).div(100).div(exact(kesPerUsdc)).times(1_000_000));
/** USDC per KES × 10^18, floor, by decimal.js. */
const referenceRate = (kesPerUsdc: string) => floorBigint(exact(10n ** 18n).div(exact(kesPerUsdc)));

function codeOf(run: () => unknown): string | undefined {
  try {
    run();
    return undefined;
  } catch (err) {
    if (err instanceof RateSourceError) return err.code;
    throw err;
  }
}

describe('the source rate, read exactly', () => {
  it('parses plain decimals as units / 10^decimals', () => {
    expect(parseKesPerUsdc('129.45')).toEqual({ units: 12945n, decimals: 2 });
    expect(parseKesPerUsdc('129.4500')).toEqual({ units: 1294500n, decimals: 4 });
    expect(parseKesPerUsdc('130')).toEqual({ units: 130n, decimals: 0 });
    expect(parseKesPerUsdc('0.000000000000000001')).toEqual({ units: 1n, decimals: 18 });
  });

  it('refuses zero, negatives, exponent notation, more than 18 decimals and junk', () => {
    expect(codeOf(() => parseKesPerUsdc('0'))).toBe('NOT_POSITIVE');
    expect(codeOf(() => parseKesPerUsdc('0.000'))).toBe('NOT_POSITIVE');
    expect(codeOf(() => parseKesPerUsdc('-0'))).toBe('NOT_POSITIVE');
    expect(codeOf(() => parseKesPerUsdc('-129.45'))).toBe('NOT_POSITIVE');
    for (const junk of ['1.2945e2', '', 'abc', '129,45', ' 129.45', '+129', '.5', '5.', '1'.repeat(65)]) {
      expect(codeOf(() => parseKesPerUsdc(junk))).toBe('MALFORMED');
    }
    expect(codeOf(() => parseKesPerUsdc('1.0000000000000000001'))).toBe('MALFORMED');
  });
});

describe('USDC per KES: the exact inverse, truncated at the 18th decimal', () => {
  it('inverts known rates', () => {
    expect(formatMinor(invertKesPerUsdc('129.45'), 18)).toBe('0.007724990343762070');
    expect(formatMinor(invertKesPerUsdc('100'), 18)).toBe('0.010000000000000000');
    // 1/3 = 0.333…: truncated, never rounded up.
    expect(formatMinor(invertKesPerUsdc('3'), 18)).toBe('0.333333333333333333');
    // 1/0.6 = 1.666…: truncated toward zero, not to …667.
    expect(formatMinor(invertKesPerUsdc('0.6'), 18)).toBe('1.666666666666666666');
  });

  it('refuses a rate whose inverse is below 10^-18', () => {
    expect(formatMinor(invertKesPerUsdc('1000000000000000000'), 18)).toBe('0.000000000000000001');
    expect(codeOf(() => invertKesPerUsdc('1000000000000000001'))).toBe('OUT_OF_RANGE');
  });

  it('matches floor(10^18 / rate) for any rate (property)', () => {
    fc.assert(
      fc.property(kesRate, (rate) => {
        expect(invertKesPerUsdc(rate)).toBe(referenceRate(rate));
      }),
      { numRuns: 1_000 },
    );
  });
});

/** KES per USDC as a source writes it: 1–6 integer digits (no leading zero), 0–18 decimals, positive. */
const kesRate = fc
  .record({ whole: fc.stringMatching(/^[1-9]\d{0,5}$/), fraction: fc.stringMatching(/^\d{0,18}$/) })
  .map(({ whole, fraction }) => (fraction ? `${whole}.${fraction}` : whole));
/** Amounts from one cent to 10^12 KES, in cents, with small ones (where truncation shows) likely. */
const amountMinor = fc.oneof(fc.bigInt({ min: 1n, max: 10_000n }), fc.bigInt({ min: 1n, max: 10n ** 14n }));

describe('KES → USDC conversion', () => {
  it('converts several amounts at 129.45 exactly, truncating at the 6th decimal', () => {
    const cases: Array<[bigint, string]> = [
      [1n, '0.000077'], // 0.01 KES = 0.0000772499… USDC
      [100n, '0.007724'], // 1 KES
      [100_000n, '7.724990'], // 1,000 KES = 7.72499034… USDC
      [12_945n, '1.000000'], // 129.45 KES is exactly 1 USDC
      [12_944n, '0.999922'], // a cent less: 0.99992275… truncated
      [123_456n, '9.536964'],
      [10n ** 14n, '7724990343.762070'], // the largest amount, 10^12 KES
    ];
    for (const [minor, usdc] of cases) {
      expect(formatMinor(convertKesToUsdc(minor, '129.45'), 6)).toBe(usdc);
    }
  });

  it('rounds once, from the exact rate: 3 KES at 3 KES per USDC is 1.000000, not 0.999999', () => {
    expect(formatMinor(convertKesToUsdc(300n, '3'), 6)).toBe('1.000000');
    // The displayed rate (0.333… truncated) times 3 would lose a micro-USDC.
    expect((300n * invertKesPerUsdc('3')) / 10n ** 14n).toBe(999_999n);
  });

  it('truncates toward zero: never more than the rate gives', () => {
    // 5 KES at 7 KES per USDC = 0.714285714… USDC → 0.714285 (rounding half up would give …286);
    // 2 KES at 0.3 = 6.666666… → 6.666666 (not …667).
    expect(formatMinor(convertKesToUsdc(500n, '7'), 6)).toBe('0.714285');
    expect(formatMinor(convertKesToUsdc(200n, '0.3'), 6)).toBe('6.666666');
  });

  it('equals floor(amount ÷ rate × 10^6) for any amount and rate (property, against decimal.js)', () => {
    fc.assert(
      fc.property(amountMinor, kesRate, (minor, rate) => {
        const converted = convertKesToUsdc(minor, rate);
        expect(converted).toBe(referenceConverted(minor, rate));
        // Never more than the exact value, and less by under one micro-USDC.
        const exactMicro = exact(minor).div(100).div(exact(rate)).times(1_000_000);
        expect(exact(converted).lte(exactMicro)).toBe(true);
        expect(exactMicro.minus(exact(converted)).lt(1)).toBe(true);
      }),
      { numRuns: 2_000 },
    );
  });

  it('the displayed rate times the amount is the converted amount or one micro-USDC less (property)', () => {
    fc.assert(
      fc.property(amountMinor, kesRate, (minor, rate) => {
        const viaDisplayed = (minor * invertKesPerUsdc(rate)) / 10n ** 14n;
        const converted = convertKesToUsdc(minor, rate);
        expect(converted - viaDisplayed === 0n || converted - viaDisplayed === 1n).toBe(true);
      }),
      { numRuns: 2_000 },
    );
  });
});

describe('reading a stored Decimal128 rate back', () => {
  it('takes plain and exponent notation exactly, and refuses digits beyond the scale', () => {
    expect(scaledFromDecimalText('0.007724990343762070', 18)).toBe(7_724_990_343_762_070n);
    expect(scaledFromDecimalText('1.00000000E-10', 18)).toBe(100_000_000n);
    expect(scaledFromDecimalText('1E+2', 18)).toBe(100n * 10n ** 18n);
    expect(scaledFromDecimalText('-0.5', 1)).toBe(-5n);
    expect(() => scaledFromDecimalText('0.0000000000000000001', 18)).toThrow('more than 18 decimals');
    expect(() => scaledFromDecimalText('NaN', 18)).toThrow('not a decimal');
  });
});
