import type { AMOUNT_UNAVAILABLE_REASONS } from '@parametric/contracts';
import { exponentOf, formatMinor, mulDiv } from '@parametric/money';
import type { AmountOwed } from 'determination-verify';
import type { PolicySnapshot } from '../ingestion/policies';

/** The shape partners verify (spec 2.5 `amountOwed`), declared once in the verifier. */
export type { AmountOwed };

export interface OwedFigure {
  /** What the determination shows (spec 2.5): null in Tier 2 or without a registered exponent. */
  amountOwed: AmountOwed | null;
  amountOwedUnavailableReason?: (typeof AMOUNT_UNAVAILABLE_REASONS)[number];
  /** What is owed in minor units, Tier 2 included (its payout); null when it cannot be computed. */
  owedMinor: bigint | null;
}

/**
 * amountOwed = sumInsured × damagePercentBp / 10000, truncated toward zero to the minor unit,
 * in the policy's own currency (never USDC, no exchange rate), with integers only.
 */
export function owedFigure(policy: PolicySnapshot, damagePercentBp: number): OwedFigure {
  const exponent = exponentOf(policy.currency);
  if (exponent === undefined) {
    return {
      amountOwed: null,
      amountOwedUnavailableReason: 'CURRENCY_EXPONENT_UNREGISTERED',
      owedMinor: null,
    };
  }
  if (exponent !== policy.exponent) {
    // The policy's sum insured is in its own minor units; a registry that disagrees would
    // silently scale the amount by a power of ten. Refuse rather than guess.
    throw new Error(
      `policy ${policy.id} stores ${policy.currency} with exponent ${policy.exponent}, the registry says ${exponent}`,
    );
  }
  const sumInsuredMinor = BigInt(policy.sumInsuredMinor);
  const owedMinor = mulDiv(sumInsuredMinor, BigInt(damagePercentBp), 10_000n, 'TRUNCATE');
  // Spec 6 rule 3: Tier 2 determinations stay currency-neutral; the payout carries the figure.
  if (policy.settlementMode === 'DETERMINATION_AND_SETTLEMENT') {
    return { amountOwed: null, amountOwedUnavailableReason: 'SETTLED_BY_SERVICE', owedMinor };
  }
  const c = policy.currency;
  const minorUnit = exponent === 0 ? `1 ${c}` : `0.${'0'.repeat(exponent - 1)}1 ${c}`;
  return {
    amountOwed: {
      amountMinor: owedMinor.toString(),
      amount: formatMinor(owedMinor, exponent),
      currency: c,
      exponent,
      damagePercentBp,
      basis: `sumInsured ${formatMinor(sumInsuredMinor, exponent)} ${c} × ${damagePercentBp} bp / 10000 = ${formatMinor(owedMinor, exponent)} ${c}, truncated toward zero to the minor unit (${minorUnit})`,
    },
    owedMinor,
  };
}
