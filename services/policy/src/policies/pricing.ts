/**
 * The published rate table (docs/pricing.md). Rates are basis points of the sum insured:
 * crop rates are per 365 days of cover, prorated by duration; livestock rates are per
 * season. Changing a rate means a new version: every policy records the version it was
 * priced with.
 */
export const RATE_TABLE = {
  version: '2026-11-v1',
  crop: { DROUGHT: 600, FLOOD: 500, BOTH: 900, COMPREHENSIVE: 1200 },
  livestock: {
    LIVESTOCK_DROUGHT: { LRLD: 450, SRSD: 400 },
    LIVESTOCK_DISEASE: { LRLD: 350, SRSD: 350 },
    LIVESTOCK_COMPREHENSIVE: { LRLD: 750, SRSD: 700 },
  },
  /** Days of cover a livestock season buys, from activation. */
  seasonDays: { LRLD: 183, SRSD: 182 },
  /** Livestock sum insured: this share of the herd's estimated value. */
  livestockIndemnityBp: 8000,
} as const;

export type CropCoverage = keyof typeof RATE_TABLE.crop;
export type LivestockCoverage = keyof typeof RATE_TABLE.livestock;
export type Season = keyof typeof RATE_TABLE.seasonDays;

/** a × b / d rounded half up, in exact integer arithmetic (minor units never see a float). */
function mulDivRoundHalfUp(a: bigint, b: bigint, d: bigint): bigint {
  return (a * b * 2n + d) / (2n * d);
}

export function cropPremiumMinor(
  sumInsuredMinor: number,
  coverage: CropCoverage,
  durationDays: number,
): number {
  const rate = BigInt(RATE_TABLE.crop[coverage]);
  return Number(mulDivRoundHalfUp(BigInt(sumInsuredMinor), rate * BigInt(durationDays), 10_000n * 365n));
}

export function livestockPremiumMinor(
  sumInsuredMinor: number,
  coverage: LivestockCoverage,
  season: Season,
): number {
  return Number(
    mulDivRoundHalfUp(BigInt(sumInsuredMinor), BigInt(RATE_TABLE.livestock[coverage][season]), 10_000n),
  );
}

/** 80% of the herd's value, rounded down to the minor unit (never insure more than the animals are worth). */
export function livestockSumInsuredMinor(estimatedValueMinor: number): number {
  return Number((BigInt(estimatedValueMinor) * BigInt(RATE_TABLE.livestockIndemnityBp)) / 10_000n);
}
