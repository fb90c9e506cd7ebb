import type { PAYMENT_FAILURE_REASONS } from '@parametric/contracts';
import type { Metrics } from '@parametric/metrics';
import type { RateRefusalCode } from './quotes/guard';

/**
 * `premium_collections_total{state}`: a prompt sent (`initiated`), then how the transaction was
 * resolved. FAILED transactions are split by their stable reason: the customer cancelling
 * (`cancelled`), the prompt timing out on the phone (`timed_out`), anything else (`failed`).
 */
export const PREMIUM_STATES = ['initiated', 'succeeded', 'failed', 'cancelled', 'timed_out'] as const;
export type PremiumState = (typeof PREMIUM_STATES)[number];

/**
 * `payouts_total{state}`: a payout created (`originated`), a further attempt started after one
 * that did not pay (`retrying`, attempt 2 onwards, a manual retry's attempts included), and its
 * ends (`succeeded`: COMPLETED, `failed`: FAILED).
 */
export const PAYOUT_STATES = ['originated', 'succeeded', 'failed', 'retrying'] as const;
export type PayoutState = (typeof PAYOUT_STATES)[number];

/**
 * `rate_source_refusals_total{reason}`: a well-formed rate the rate source's guard refused
 * (docs/payments.md, "Quotes"): outside `RATE_KES_PER_USDC_MIN`..`_MAX` (`out_of_bounds`), or
 * moved more than `RATE_MAX_STEP_PERCENT` from the last accepted rate within the hour
 * (`step_too_large`).
 */
export const RATE_REFUSAL_REASONS = ['out_of_bounds', 'step_too_large'] as const;
export type RateRefusalReason = (typeof RATE_REFUSAL_REASONS)[number];

/** The label a guard's refusal code counts under. */
export function rateRefusalReasonOf(code: RateRefusalCode): RateRefusalReason {
  return code === 'OUT_OF_BOUNDS' ? 'out_of_bounds' : 'step_too_large';
}

/** The state a resolved premium counts as. */
export function premiumStateOf(
  outcome: { succeeded: true } | { succeeded: false; reason: (typeof PAYMENT_FAILURE_REASONS)[number] },
): PremiumState {
  if (outcome.succeeded) return 'succeeded';
  if (outcome.reason === 'CANCELLED_BY_USER') return 'cancelled';
  if (outcome.reason === 'TIMEOUT') return 'timed_out';
  return 'failed';
}

/** A payout's change, as `payouts_total` counts it (none for a change that is not one of its states). */
export function payoutStatesOf(
  before: { status: string; parts: readonly { index: number; attempts: number }[] },
  after: { status: string; parts: readonly { index: number; attempts: number }[] },
): PayoutState[] {
  const states: PayoutState[] = [];
  const attemptsBefore = new Map(before.parts.map((part) => [part.index, part.attempts]));
  // A part's attempt 2 onwards; a later part's first attempt is not a retry.
  if (
    after.parts.some((part) => part.attempts >= 2 && part.attempts > (attemptsBefore.get(part.index) ?? 0))
  ) {
    states.push('retrying');
  }
  if (after.status !== before.status) {
    if (after.status === 'COMPLETED') states.push('succeeded');
    else if (after.status === 'FAILED') states.push('failed');
  }
  return states;
}

export interface PaymentMetrics {
  premium(state: PremiumState): void;
  payout(state: PayoutState): void;
  /** One rate the guard refused, by its code. */
  rateRefused(code: RateRefusalCode): void;
}

/**
 * The counters, registered at start with every state (and reason) at 0; incremented where each
 * change is committed (a refusal: where the rate source refuses the rate).
 */
export function paymentMetrics(metrics: Metrics): PaymentMetrics {
  const premiums = metrics.counter(
    'premium_collections_total',
    'Premium collections (M-Pesa STK) by state change: initiated (prompt sent), succeeded, failed, cancelled, timed_out',
    ['state'],
  );
  const payouts = metrics.counter(
    'payouts_total',
    'Payouts by state change: originated, succeeded (COMPLETED), failed (FAILED), retrying (attempt 2 onwards started)',
    ['state'],
  );
  for (const state of PREMIUM_STATES) premiums.inc({ state }, 0);
  for (const state of PAYOUT_STATES) payouts.inc({ state }, 0);
  const refusals = metrics.counter(
    'rate_source_refusals_total',
    'Well-formed KES rates the rate source refused, by reason: out_of_bounds (outside RATE_KES_PER_USDC_MIN..MAX), step_too_large (moved more than RATE_MAX_STEP_PERCENT within the hour)',
    ['reason'],
  );
  for (const reason of RATE_REFUSAL_REASONS) refusals.inc({ reason }, 0);
  return {
    premium: (state) => premiums.inc({ state }),
    payout: (state) => payouts.inc({ state }),
    rateRefused: (code) => refusals.inc({ reason: rateRefusalReasonOf(code) }),
  };
}
