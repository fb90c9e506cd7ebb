import { applyBasisPoints, mulDiv } from '@parametric/money';

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
  /** The smallest sum insured, in major units, for either product. */
  minimumSumInsured: 1000,
} as const;

export type CropCoverage = keyof typeof RATE_TABLE.crop;
export type LivestockCoverage = keyof typeof RATE_TABLE.livestock;
export type Season = keyof typeof RATE_TABLE.seasonDays;

/** Premiums round once, half up, to the minor unit. */
export function cropPremiumMinor(
  sumInsuredMinor: bigint,
  coverage: CropCoverage,
  durationDays: number,
): bigint {
  const rateTimesDays = BigInt(RATE_TABLE.crop[coverage]) * BigInt(durationDays);
  return mulDiv(sumInsuredMinor, rateTimesDays, 10_000n * 365n, 'HALF_UP');
}

export function livestockPremiumMinor(
  sumInsuredMinor: bigint,
  coverage: LivestockCoverage,
  season: Season,
): bigint {
  return applyBasisPoints(sumInsuredMinor, RATE_TABLE.livestock[coverage][season], 'HALF_UP');
}

/** 80% of the herd's value, rounded down (never insure more than the animals are worth). */
export function livestockSumInsuredMinor(estimatedValueMinor: bigint): bigint {
  return mulDiv(estimatedValueMinor, BigInt(RATE_TABLE.livestockIndemnityBp), 10_000n, 'TRUNCATE');
}

/**
 * The premium of a policy whose premium we collect by mobile money (Tier 2): M-Pesa moves whole
 * shillings only, so the premium is priced to the whole currency unit (half up, once, at sale)
 * and the partner is asked for exactly what the prompt will charge.
 */
export function wholeUnitPremiumMinor(premiumMinor: bigint, exponent: number): bigint {
  const unit = 10n ** BigInt(exponent);
  return mulDiv(premiumMinor, 1n, unit, 'HALF_UP') * unit;
}
