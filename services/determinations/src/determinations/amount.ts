import type { AMOUNT_UNAVAILABLE_REASONS } from '@parametric/contracts';
import type { AmountOwed } from '@parametric/determination-verify';
import { exponentOf, formatMinor, mulDiv } from '@parametric/money';
import type { CoverTaken } from '../cover/claim';
import type { PolicySnapshot } from '../ingestion/policies';

/** The shape partners verify (`amountOwed`, docs/determinations.md), declared once in the verifier. */
export type { AmountOwed };

export interface OwedFigure {
  /** What the determination shows (`amountOwed`): null in Tier 2 or without a registered exponent. */
  amountOwed: AmountOwed | null;
  amountOwedUnavailableReason?: (typeof AMOUNT_UNAVAILABLE_REASONS)[number];
  /** What is owed in minor units, Tier 2 included (its payout), after the cover's cap; null when it cannot be computed. */
  owedMinor: bigint | null;
}

/**
 * sumInsured × damagePercentBp / 10000, truncated toward zero to the minor unit, in the policy's
 * own currency (never USDC, no exchange rate), with integers only: what the determination would
 * owe with the policy's whole cover left. Null when the currency's exponent is not registered.
 */
export function uncappedOwedMinor(policy: PolicySnapshot, damagePercentBp: number): bigint | null {
  const exponent = exponentOf(policy.currency);
  if (exponent === undefined) return null;
  if (exponent !== policy.exponent) {
    // The policy's sum insured is in its own minor units; a registry that disagrees would
    // silently scale the amount by a power of ten. Refuse rather than guess.
    throw new Error(
      `policy ${policy.id} stores ${policy.currency} with exponent ${policy.exponent}, the registry says ${exponent}`,
    );
  }
  return mulDiv(BigInt(policy.sumInsuredMinor), BigInt(damagePercentBp), 10_000n, 'TRUNCATE');
}

/**
 * amountOwed = min(sumInsured × damagePercentBp / 10000 truncated, the policy's remaining cover)
 * (docs/determinations.md). `cover` is what `claimCover` took for this determination; without
 * it (no cover claimed) the formula's amount stands. `basis` names the cap only when it set the
 * amount, so an uncapped determination reads as it always has.
 */
export function owedFigure(policy: PolicySnapshot, damagePercentBp: number, cover?: CoverTaken): OwedFigure {
  const uncapped = uncappedOwedMinor(policy, damagePercentBp);
  if (uncapped === null) {
    return {
      amountOwed: null,
      amountOwedUnavailableReason: 'CURRENCY_EXPONENT_UNREGISTERED',
      owedMinor: null,
    };
  }
  if (cover && (cover.uncappedMinor !== uncapped || cover.amountMinor > uncapped || cover.amountMinor < 0n)) {
    throw new Error(
      `the cover claimed ${cover.amountMinor} of ${cover.uncappedMinor} for policy ${policy.id}, the formula says ${uncapped}`,
    );
  }
  const owedMinor = cover ? cover.amountMinor : uncapped;
  // Tier 2 determinations stay currency-neutral: the service settles, and the payout carries the
  // figure (docs/api.md, "Determinations"; docs/decisions.md).
  if (policy.settlementMode === 'DETERMINATION_AND_SETTLEMENT') {
    return { amountOwed: null, amountOwedUnavailableReason: 'SETTLED_BY_SERVICE', owedMinor };
  }
  const { currency: c, exponent } = policy;
  const money = (minor: bigint) => `${formatMinor(minor, exponent)} ${c}`;
  const sumInsured = BigInt(policy.sumInsuredMinor);
  const minorUnit = exponent === 0 ? `1 ${c}` : `0.${'0'.repeat(exponent - 1)}1 ${c}`;
  const formula = `sumInsured ${money(sumInsured)} × ${damagePercentBp} bp / 10000 = ${money(uncapped)}, truncated toward zero to the minor unit (${minorUnit})`;
  const basis = cover?.capped
    ? `${formula}; capped at the remaining cover of ${money(cover.remainingBeforeMinor)} (sum insured ${money(sumInsured)} less ${money(sumInsured - cover.remainingBeforeMinor)} owed by earlier determinations of this policy)`
    : formula;
  return {
    amountOwed: {
      amountMinor: owedMinor.toString(),
      amount: formatMinor(owedMinor, exponent),
      currency: c,
      exponent,
      damagePercentBp,
      basis,
    },
    owedMinor,
  };
}
