import { allocateEvenly, applyBasisPoints, mulDiv, type Rounding, roundToUnit, sum } from '@parametric/money';
import { expectMoneyError } from './expect-money-error';

describe('mulDiv', () => {
  it.each<[bigint, bigint, bigint, bigint, bigint]>([
    // a, b, d, TRUNCATE, HALF_UP
    [10n, 3n, 4n, 7n, 8n], // 7.5: a tie
    [-10n, 3n, 4n, -7n, -8n], // −7.5: ties go away from zero
    [10n, -3n, 4n, -7n, -8n],
    [10n, 3n, -4n, -7n, -8n],
    [-10n, -3n, 4n, 7n, 8n],
    [-10n, 3n, -4n, 7n, 8n],
    [29n, 1n, 4n, 7n, 7n], // 7.25
    [31n, 1n, 4n, 7n, 8n], // 7.75
    [-31n, 1n, 4n, -7n, -8n],
    [-29n, 1n, 4n, -7n, -7n],
    [1n, 1n, 2n, 0n, 1n], // 0.5
    [-1n, 1n, 2n, 0n, -1n], // −0.5: the quotient is 0, the rounding still goes down
    [1n, 1n, 3n, 0n, 0n],
    [2n, 1n, 3n, 0n, 1n],
    [-2n, 1n, 3n, 0n, -1n],
    [0n, 5n, 7n, 0n, 0n],
    [0n, 5n, -7n, 0n, 0n],
    [12n, 5n, 1n, 60n, 60n],
  ])('%p × %p / %p → %p truncated, %p half up', (a, b, d, truncated, halfUp) => {
    expect(mulDiv(a, b, d, 'TRUNCATE')).toBe(truncated);
    expect(mulDiv(a, b, d, 'HALF_UP')).toBe(halfUp);
  });

  it('keeps the whole product beyond 2^64', () => {
    expect(mulDiv(2n ** 130n, 2n ** 130n, 2n ** 200n, 'TRUNCATE')).toBe(2n ** 60n);
    // (2^100 + 1) × 3 / 2 = 1.5 × 2^100 + 1.5
    expect(mulDiv(2n ** 100n + 1n, 3n, 2n, 'TRUNCATE')).toBe(3n * 2n ** 99n + 1n);
    expect(mulDiv(2n ** 100n + 1n, 3n, 2n, 'HALF_UP')).toBe(3n * 2n ** 99n + 2n);
    expect(mulDiv(-(2n ** 100n + 1n), 3n, 2n, 'HALF_UP')).toBe(-(3n * 2n ** 99n + 2n));
  });

  it.each<[bigint, bigint, bigint]>([
    [7n, 4n, 2n], // 1.75 → 2
    [8n, 4n, 2n], // exact
    [-7n, 4n, -1n], // −1.75 → −1 (toward +∞)
    [7n, -4n, -1n],
    [-7n, -4n, 2n],
    [1n, 100n, 1n],
    [0n, 3n, 0n],
  ])('%p / %p → %p rounded toward +∞ (CEILING)', (a, d, ceiling) => {
    expect(mulDiv(a, 1n, d, 'CEILING')).toBe(ceiling);
  });

  it('refuses a zero divisor', () => {
    expectMoneyError(() => mulDiv(1n, 1n, 0n, 'TRUNCATE'), 'DIVISION_BY_ZERO');
  });

  it('refuses an unknown rounding mode', () => {
    expectMoneyError(() => mulDiv(1n, 1n, 2n, 'HALF_EVEN' as Rounding), 'INVALID_ROUNDING');
  });

  it('refuses numbers where bigints belong', () => {
    expectMoneyError(() => mulDiv(1 as unknown as bigint, 1n, 2n, 'TRUNCATE'), 'NOT_BIGINT');
    expectMoneyError(() => mulDiv(1n, 1n, 2 as unknown as bigint, 'TRUNCATE'), 'NOT_BIGINT');
  });
});

describe('applyBasisPoints', () => {
  it('computes a determination: sum insured × damage, truncated to the cent', () => {
    // KES 12,345.67 at 43.21% damage = KES 5,334.564007 → KES 5,334.56
    expect(applyBasisPoints(1_234_567n, 4321, 'TRUNCATE')).toBe(533_456n);
  });

  it('computes a premium rounded half up', () => {
    // 4114.5885 minor units
    expect(applyBasisPoints(12_345n, 3333, 'TRUNCATE')).toBe(4114n);
    expect(applyBasisPoints(12_345n, 3333, 'HALF_UP')).toBe(4115n);
  });

  it.each<[bigint, number, Rounding, bigint]>([
    [1n, 5000, 'HALF_UP', 1n],
    [1n, 5000, 'TRUNCATE', 0n],
    [3n, 5000, 'HALF_UP', 2n],
    [-3n, 5000, 'HALF_UP', -2n],
    [-3n, 5000, 'TRUNCATE', -1n],
    [1_000_000n, 0, 'TRUNCATE', 0n],
    [1_000_000n, 10_000, 'TRUNCATE', 1_000_000n],
    [1_000_000n, 15_000, 'TRUNCATE', 1_500_000n],
    [1_000_000n, 1, 'TRUNCATE', 100n],
    [0n, 2500, 'HALF_UP', 0n],
  ])('%p at %d bp, %s → %p', (amount, bp, rounding, expected) => {
    expect(applyBasisPoints(amount, bp, rounding)).toBe(expected);
  });

  it('takes bigint basis points, beyond 2^64 too', () => {
    expect(applyBasisPoints(100_000n, 2500n, 'TRUNCATE')).toBe(25_000n);
    expect(applyBasisPoints(10_000n, 2n ** 70n, 'TRUNCATE')).toBe(2n ** 70n);
  });

  it.each([12.5, -1, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53])('refuses %p basis points', (bp) => {
    expectMoneyError(() => applyBasisPoints(100n, bp, 'TRUNCATE'), 'INVALID_BASIS_POINTS');
  });

  it('refuses negative bigint basis points and non-numbers', () => {
    expectMoneyError(() => applyBasisPoints(100n, -1n, 'TRUNCATE'), 'INVALID_BASIS_POINTS');
    expectMoneyError(
      () => applyBasisPoints(100n, '25' as unknown as number, 'TRUNCATE'),
      'INVALID_BASIS_POINTS',
    );
  });
});

describe('sum', () => {
  it('is 0n for no values', () => {
    expect(sum([])).toBe(0n);
  });

  it('adds negatives and values beyond 2^64 exactly', () => {
    expect(sum([1n, 2n, -3n])).toBe(0n);
    expect(sum([2n ** 64n, 2n ** 64n, 1n])).toBe(2n ** 65n + 1n);
    expect(sum([-5n])).toBe(-5n);
  });

  it('refuses a number among the bigints', () => {
    expectMoneyError(() => sum([1n, 2 as unknown as bigint]), 'NOT_BIGINT');
  });
});

describe('roundToUnit', () => {
  it('pays an owed KES 4,114.81 as KES 4,115 and leaves whole shillings alone', () => {
    expect(roundToUnit(411_481n, 100n, 'CEILING')).toBe(411_500n);
    expect(roundToUnit(411_400n, 100n, 'CEILING')).toBe(411_400n);
    expect(roundToUnit(50n, 100n, 'CEILING')).toBe(100n);
    expect(roundToUnit(411_481n, 100n, 'TRUNCATE')).toBe(411_400n);
  });

  it('refuses a unit that is not positive', () => {
    expectMoneyError(() => roundToUnit(1n, 0n, 'CEILING'), 'DIVISION_BY_ZERO');
    expectMoneyError(() => roundToUnit(1n, -100n, 'CEILING'), 'DIVISION_BY_ZERO');
  });
});

describe('allocateEvenly', () => {
  it('splits KES 600,000 into three parts a provider maximum of 250,000 allows', () => {
    expect(allocateEvenly(60_000_000n, 3, 100n)).toEqual([20_000_000n, 20_000_000n, 20_000_000n]);
  });

  it('never leaves a tiny last part: KES 500,005 in three is 166,669 + 166,668 + 166,668', () => {
    expect(allocateEvenly(50_000_500n, 3, 100n)).toEqual([16_666_900n, 16_666_800n, 16_666_800n]);
  });

  it('refuses a total that is not whole units, a negative total and a part count below one', () => {
    expectMoneyError(() => allocateEvenly(150n, 2, 100n), 'INVALID_PARTS');
    expectMoneyError(() => allocateEvenly(-100n, 1, 100n), 'INVALID_PARTS');
    expectMoneyError(() => allocateEvenly(100n, 0, 100n), 'INVALID_PARTS');
    expectMoneyError(() => allocateEvenly(100n, 1.5, 100n), 'INVALID_PARTS');
  });
});
