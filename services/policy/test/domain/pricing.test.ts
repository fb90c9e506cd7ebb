import {
  cropPremiumMinor,
  livestockPremiumMinor,
  livestockSumInsuredMinor,
  RATE_TABLE,
  wholeUnitPremiumMinor,
} from '../../src/policies/pricing';

describe('pricing (docs/pricing.md)', () => {
  it('prices example 1: crop DROUGHT, KES 50,000 for 180 days is KES 1,479.45', () => {
    expect(cropPremiumMinor(5_000_000n, 'DROUGHT', 180)).toBe(147_945n);
  });

  it('prices example 2: a herd worth KES 250,000 insures KES 200,000 at KES 9,000.00 (LRLD drought)', () => {
    const sumInsured = livestockSumInsuredMinor(25_000_000n);
    expect(sumInsured).toBe(20_000_000n);
    expect(livestockPremiumMinor(sumInsured, 'LIVESTOCK_DROUGHT', 'LRLD')).toBe(900_000n);
  });

  it('rounds a premium once, half up, to the minor unit', () => {
    // 25 × 600 × 365 / 3,650,000 = 1.5 → 2; 24 → 1.44 → 1.
    expect(cropPremiumMinor(25n, 'DROUGHT', 365)).toBe(2n);
    expect(cropPremiumMinor(24n, 'DROUGHT', 365)).toBe(1n);
    // 100 × 350 / 10,000 = 3.5 → 4; 99 → 3.465 → 3.
    expect(livestockPremiumMinor(100n, 'LIVESTOCK_DISEASE', 'LRLD')).toBe(4n);
    expect(livestockPremiumMinor(99n, 'LIVESTOCK_DISEASE', 'LRLD')).toBe(3n);
  });

  it('prices a premium collected by M-Pesa (Tier 2) to the whole shilling, half up', () => {
    // Example 1 in Tier 2: KES 1,479.45 → KES 1,479; 1,479.50 → 1,480; whole amounts stay.
    expect(wholeUnitPremiumMinor(147_945n, 2)).toBe(147_900n);
    expect(wholeUnitPremiumMinor(147_950n, 2)).toBe(148_000n);
    expect(wholeUnitPremiumMinor(900_000n, 2)).toBe(900_000n);
    // A currency without minor units is already whole.
    expect(wholeUnitPremiumMinor(1_234n, 0)).toBe(1_234n);
  });

  it('rounds the livestock sum insured down: never more than 80% of what the animals are worth', () => {
    expect(livestockSumInsuredMinor(125_001n)).toBe(100_000n); // 100,000.8
    expect(livestockSumInsuredMinor(124_999n)).toBe(99_999n); // 99,999.2
    expect(livestockSumInsuredMinor(9n)).toBe(7n); // 7.2
  });

  it('is exact past the range of a double', () => {
    const huge = 10n ** 20n + 1n;
    expect(livestockPremiumMinor(huge, 'LIVESTOCK_COMPREHENSIVE', 'LRLD')).toBe(
      (huge * 750n + 5_000n) / 10_000n,
    );
  });

  it('gives every season its days of cover and every coverage a rate for each season', () => {
    expect(RATE_TABLE.seasonDays).toEqual({ LRLD: 183, SRSD: 182 });
    for (const rates of Object.values(RATE_TABLE.livestock))
      expect(Object.keys(rates).sort()).toEqual(['LRLD', 'SRSD']);
  });
});
