import { randomUUID } from 'node:crypto';
import {
  ACTIVATION_CHANNELS,
  CROP_COVERAGES,
  ENVIRONMENTS,
  LIVESTOCK_COVERAGES,
  PARTNER_SETTLEMENT_STATUSES,
  POLICY_STATUSES,
  PRODUCT_TYPES,
  SEASONS,
  SETTLEMENT_MODES,
} from '@parametric/contracts';
import { type OutboxFields, withOutbox } from '@parametric/events';
import { type Connection, type InferSchemaType, type Model, Schema } from 'mongoose';
import { readAsBigint } from '../int64';

/**
 * One determination for the policy as the determinations service summarised it (queue
 * `policy-summaries`): the highest `revision` received is kept, one entry per determination.
 */
const damageAssessmentSchema = new Schema(
  {
    determinationId: { type: String, required: true },
    revision: { type: Number, required: true },
    triggered: { type: Boolean, required: true },
    damagePercentBp: { type: Number, required: true },
    assessedAt: { type: Date, required: true },
    issuedAt: { type: Date, required: true },
    partnerSettlementStatus: { type: String, required: true, enum: PARTNER_SETTLEMENT_STATUSES },
    /** Tier 1 reporting due date; null when no report is expected. */
    dueAt: { type: Date, default: null },
  },
  { _id: false },
);

/** A payout of the policy (Tier 2), as the payments service last told us (`policy-summaries`). */
const payoutSummarySchema = new Schema(
  {
    payoutId: { type: String, required: true },
    determinationId: { type: String, required: true },
    revision: { type: Number, required: true },
    status: { type: String, required: true, enum: ['PENDING', 'PROCESSING', 'COMPLETED', 'FAILED'] },
    amount: { type: String, required: true },
    currency: { type: String, required: true },
    mobileMoneyRef: { type: String, default: null },
    reason: { type: String, default: null },
    updatedAt: { type: Date, required: true },
  },
  { _id: false },
);

const policySchema = new Schema(
  {
    _id: { type: String, default: () => randomUUID() },
    organizationId: { type: String, required: true },
    policyNumber: { type: String, required: true },
    farmerId: { type: String, required: true },
    productType: { type: String, required: true, enum: PRODUCT_TYPES },
    plotId: { type: String, default: null },
    herdId: { type: String, default: null },
    season: { type: String, enum: [...SEASONS, null], default: null },
    coverageType: { type: String, required: true, enum: [...CROP_COVERAGES, ...LIVESTOCK_COVERAGES] },
    durationDays: { type: Number, required: true },
    currency: { type: String, required: true },
    exponent: { type: Number, required: true },
    /** int64 minor units of `currency`. */
    sumInsuredMinor: { type: BigInt, required: true },
    premiumMinor: { type: BigInt, required: true },
    rateTableVersion: { type: String, required: true },
    settlementMode: { type: String, required: true, enum: SETTLEMENT_MODES },
    /**
     * The organization's environment at sale, from the gateway's signed context: `sandbox`
     * policies' determinations are signed with the sandbox keys and their money moves only to
     * the M-Pesa simulator's test numbers. Absent on policies sold before it was stored: live.
     */
    environment: { type: String, enum: ENVIRONMENTS },
    status: { type: String, required: true, enum: POLICY_STATUSES, default: 'PENDING' },
    premiumPaid: { type: Boolean, required: true, default: false },
    onChainPolicyId: { type: String, default: null },
    txHash: { type: String, default: null },
    /** keccak256 of the canonical terms registered on chain (see activation.ts: `policyTerms`). */
    termsHash: { type: String, default: null },
    coverStartsAt: { type: Date, default: null },
    coverEndsAt: { type: Date, default: null },
    activatedAt: { type: Date, default: null },
    /** PARTNER: Tier 1 activate call; PAYMENT: Tier 2 premium received by mobile money. */
    activatedVia: { type: String, enum: [...ACTIVATION_CHANNELS, null], default: null },
    /** The partner's receipt for a premium it collected, or our payment id (Tier 2). */
    premiumReference: { type: String, default: null },
    /** Tier 2: when the paid premium asked for activation; set until the policy is active. */
    activationRequestedAt: { type: Date, default: null },
    /** Chain failures since activation was asked for, and the last one (for ops and the status view). */
    activationFailures: { type: Number, default: 0 },
    lastActivationError: { type: String, default: null },
    lastActivationAttemptAt: { type: Date, default: null },
    expiredAt: { type: Date, default: null },
    /** Determinations issued for the policy (`damageAssessments`, docs/api.md). */
    damageAssessments: { type: [damageAssessmentSchema], default: [] },
    /** Tier 2 payouts of the policy (`payouts`, docs/api.md). */
    payouts: { type: [payoutSummarySchema], default: [] },
    /**
     * When the capacity sweep gave `sumInsuredMinor` back to the organization's capacity; null
     * while it is reserved. Set (conditionally, once) before the capacity is given back.
     */
    capacityReleasedAt: { type: Date, default: null },
    /**
     * The partner's `Idempotency-Key` of the purchase that created the policy (null when it sent
     * none), kept as long as the policy; `idempotencyFingerprint` is the hash of that request's
     * canonical parsed body (idempotency.ts), so a repeat with another body is refused.
     */
    idempotencyKey: { type: String, default: null },
    idempotencyFingerprint: { type: String, default: null },
    /** The keyed reservation (capacity `keyedReservations`) the sum insured was reserved under. */
    reservationClaimId: { type: String, default: null },
  },
  { timestamps: true, versionKey: false },
);
withOutbox(policySchema);
readAsBigint(policySchema, ['sumInsuredMinor', 'premiumMinor']);
// Policy numbers are what partners and farmers quote: unique across the platform.
policySchema.index({ policyNumber: 1 }, { unique: true });
// One policy per Idempotency-Key and organization: of two purchases racing with the same key
// exactly one insert succeeds, the other reads the winner's policy (purchase.ts). Serves the
// replay lookup `{ organizationId, idempotencyKey }`. Partial: policies bought without a key
// (null) are not in it, so they never collide.
policySchema.index(
  { organizationId: 1, idempotencyKey: 1 },
  { unique: true, partialFilterExpression: { idempotencyKey: { $type: 'string' } } },
);
// Serve `GET /policies` (reads.ts, `listPolicies`): the organization's policies newest first,
// and each filter, with the sort order after it so a page is read in order without a sort in
// memory (`listPage`, libs/mongo/src/tenant.ts); combined filters run on the most selective
// of these. The farmerId one also serves an organization's policies of a farmer.
policySchema.index({ organizationId: 1, createdAt: -1, _id: -1 });
policySchema.index({ organizationId: 1, status: 1, createdAt: -1, _id: -1 });
policySchema.index({ organizationId: 1, farmerId: 1, createdAt: -1, _id: -1 });
policySchema.index({ organizationId: 1, productType: 1, createdAt: -1, _id: -1 });
policySchema.index({ organizationId: 1, settlementMode: 1, createdAt: -1, _id: -1 });
// Serves the expiry sweep: `{ status: 'ACTIVE', coverEndsAt: { $lte: now } }`.
policySchema.index({ status: 1, coverEndsAt: 1 });
// Serves the activation re-queue sweep: PENDING policies whose paid premium asked for
// activation. Partial: only those few documents are in it.
policySchema.index(
  { activationRequestedAt: 1 },
  { partialFilterExpression: { activationRequestedAt: { $type: 'date' } } },
);

/**
 * The policies whose reserved capacity may be given back at `now`: EXPIRED, cover ended more
 * than the claims window ago (determinations for damage during cover can arrive after it
 * ends), not released yet, and no Tier 1 settlement report still awaited (a PENDING damage
 * assessment). The release sweep queries it and claims each policy with it (sweeps.ts).
 */
export function releasableAfterCover(now: Date, claimsWindowMs: number) {
  return {
    status: 'EXPIRED' as const,
    capacityReleasedAt: null,
    coverEndsAt: { $lte: new Date(now.getTime() - claimsWindowMs) },
    'damageAssessments.partnerSettlementStatus': { $ne: 'PENDING' as const },
  };
}
// Serves `releasableAfterCover`: partial on EXPIRED, and released policies (non-null
// `capacityReleasedAt`) sort apart from those still holding capacity, so the sweep walks only
// expired policies still reserving capacity, not every policy ever released; the
// pending-report condition is checked on what it finds.
policySchema.index(
  { capacityReleasedAt: 1, coverEndsAt: 1 },
  { partialFilterExpression: { status: 'EXPIRED' } },
);

export type DamageAssessmentDoc = InferSchemaType<typeof damageAssessmentSchema>;
export type PayoutSummaryDoc = InferSchemaType<typeof payoutSummarySchema>;
export type PolicyDoc = InferSchemaType<typeof policySchema> & { _id: string } & OutboxFields;
export type PolicyModel = Model<PolicyDoc>;

export function policyModel(connection: Connection): PolicyModel {
  return (
    (connection.models.Policy as PolicyModel | undefined) ??
    connection.model<PolicyDoc>('Policy', policySchema, 'policies')
  );
}
