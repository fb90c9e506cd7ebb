import { formatMinor, MAX_EXPONENT, minorFromNumber, numberFromMinor, parseMinor } from '@parametric/money';
import { expectMoneyError, moneyErrorOf } from './expect-money-error';

describe('parseMinor', () => {
  it.each([
    ['1234.56', 2, 123456n],
    ['1234.5', 2, 123450n],
    ['1234', 2, 123400n],
    ['0', 2, 0n],
    ['0.00', 2, 0n],
    ['-0', 2, 0n],
    ['-0.05', 2, -5n],
    ['-1234.56', 2, -123456n],
    ['007.10', 2, 710n],
    ['5', 0, 5n],
    ['1500', 0, 1500n],
    ['-1500', 0, -1500n],
    ['1.5', 6, 1_500_000n],
    ['0.000001', 6, 1n],
    ['0.000000000000000001', 18, 1n],
    ['123456789012345678901234567890.12', 2, 12345678901234567890123456789012n],
  ])('%j with exponent %d → %p', (decimal, exponent, minor) => {
    expect(parseMinor(decimal, exponent)).toBe(minor);
  });

  it('handles values far beyond 2^64', () => {
    expect(parseMinor(`${2n ** 100n}.01`, 2)).toBe(2n ** 100n * 100n + 1n);
  });

  it.each([
    '',
    '-',
    '.5',
    '1.',
    '+1',
    '1e3',
    '1E3',
    '1,000',
    '1_000',
    ' 1',
    '1 ',
    '0x10',
    '--1',
    '1.2.3',
    '-.5',
    'NaN',
    'Infinity',
    '١٢',
    '１２',
  ])('refuses %j', (decimal) => {
    expectMoneyError(() => parseMinor(decimal, 2), 'INVALID_DECIMAL');
  });

  it('refuses a non-string at run time', () => {
    expectMoneyError(() => parseMinor(12 as unknown as string, 2), 'INVALID_DECIMAL');
  });

  it.each([
    ['1.234', 2],
    ['-0.001', 2],
    ['5.0', 0],
    ['5.00', 0],
    ['1.5', 0],
    ['0.0000001', 6],
  ])('refuses %j with exponent %d instead of rounding', (decimal, exponent) => {
    const error = moneyErrorOf(() => parseMinor(decimal, exponent));
    expect(error.code).toBe('TOO_MANY_DECIMALS');
    expect(error.message).toContain(`at most ${exponent}`);
  });

  it.each([-1, 1.5, MAX_EXPONENT + 1, Number.NaN, Number.POSITIVE_INFINITY])(
    'refuses exponent %p',
    (exponent) => {
      expectMoneyError(() => parseMinor('1', exponent), 'INVALID_EXPONENT');
    },
  );
});

describe('formatMinor', () => {
  it.each([
    [123456n, 2, '1234.56'],
    [123450n, 2, '1234.50'],
    [5n, 2, '0.05'],
    [-5n, 2, '-0.05'],
    [-123456n, 2, '-1234.56'],
    [0n, 2, '0.00'],
    [0n, 0, '0'],
    [5n, 0, '5'],
    [-5n, 0, '-5'],
    [1n, 6, '0.000001'],
    [-1_500_000n, 6, '-1.500000'],
    [1n, 18, '0.000000000000000001'],
    [2n ** 70n, 2, '11805916207174113034.24'],
  ])('%p with exponent %d → %j', (minor, exponent, decimal) => {
    expect(formatMinor(minor, exponent)).toBe(decimal);
  });

  it('refuses a number where a bigint belongs', () => {
    expectMoneyError(() => formatMinor(5 as unknown as bigint, 2), 'NOT_BIGINT');
  });

  it('refuses a bad exponent', () => {
    expectMoneyError(() => formatMinor(5n, -1), 'INVALID_EXPONENT');
  });
});

describe('minorFromNumber', () => {
  it.each([
    [1234.56, 2, 123456n],
    [0.1, 2, 10n],
    [0.01, 2, 1n],
    [0, 2, 0n],
    [-0, 2, 0n],
    [-12.5, 2, -1250n],
    [1500, 0, 1500n],
    [50000, 2, 5_000_000n],
    [1.5e-7, 8, 15n],
    [1e-7, 7, 1n],
    [1e-18, 18, 1n],
    [2.5, 6, 2_500_000n],
    [Number.MAX_SAFE_INTEGER, 0, 9_007_199_254_740_991n],
    [-Number.MAX_SAFE_INTEGER, 0, -9_007_199_254_740_991n],
    // Just below 2^46 a double is finer than a cent, so every cent is its own double.
    [70368744177663.99, 2, 7_036_874_417_766_399n],
  ])('%p with exponent %d → %p', (n, exponent, minor) => {
    expect(minorFromNumber(n, exponent)).toBe(minor);
  });

  it.each([
    [0.1 + 0.2, 2],
    [1.234, 2],
    [0.5, 0],
    [1.5e-7, 7],
    [1.5e-7, 2],
    [5e-324, 18],
    [1.0000001, 6],
  ])('refuses %p with exponent %d instead of rounding', (n, exponent) => {
    expectMoneyError(() => minorFromNumber(n, exponent), 'TOO_MANY_DECIMALS');
  });

  it.each([
    [1e21, 0],
    [1e21, 2],
    [-1e21, 2],
    [1e300, 0],
    [Number.MAX_VALUE, 2],
    [2 ** 53, 0],
    [2 ** 53 + 2, 0],
    [1e16, 0],
  ])('refuses %p with exponent %d as too large to be exact', (n, exponent) => {
    expectMoneyError(() => minorFromNumber(n, exponent), 'UNSAFE_MAGNITUDE');
  });

  it('refuses an amount whose neighbouring cent is the same double', () => {
    // 90071992547409.91 parses to the double that prints as 90071992547409.9: a conversion
    // that trusted String(n) alone would record a cent less than the client sent.
    expect(String(90071992547409.91)).toBe('90071992547409.9');
    expectMoneyError(() => minorFromNumber(90071992547409.91, 2), 'UNSAFE_MAGNITUDE');
    expectMoneyError(() => minorFromNumber(90071992547409.9, 2), 'UNSAFE_MAGNITUDE');
  });

  it.each([Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY])('refuses %p', (n) => {
    expectMoneyError(() => minorFromNumber(n, 2), 'NOT_FINITE');
  });

  it('refuses a non-number at run time', () => {
    expectMoneyError(() => minorFromNumber('12' as unknown as number, 2), 'NOT_FINITE');
  });
});

describe('numberFromMinor', () => {
  it.each([
    [123456n, 2, 1234.56],
    [10n, 2, 0.1],
    [-5n, 2, -0.05],
    [0n, 2, 0],
    [1500n, 0, 1500],
    [2_500_000n, 6, 2.5],
    [1n, 18, 1e-18],
    [2n ** 53n - 1n, 0, Number.MAX_SAFE_INTEGER],
    [-(2n ** 53n - 1n), 0, -Number.MAX_SAFE_INTEGER],
  ])('%p with exponent %d → %p', (minor, exponent, n) => {
    expect(numberFromMinor(minor, exponent)).toBe(n);
  });

  it.each([
    [2n ** 53n, 0],
    [-(2n ** 53n), 0],
    [2n ** 53n + 1n, 0],
    [2n ** 64n, 2],
    [10n ** 30n, 2],
    // Under 2^53 minor units but above 2^46 major units: a cent is finer than the double.
    [9_007_199_254_740_991n, 2],
  ])('refuses %p with exponent %d', (minor, exponent) => {
    expectMoneyError(() => numberFromMinor(minor, exponent), 'UNSAFE_MAGNITUDE');
  });
});
