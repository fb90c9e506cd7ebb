import { randomUUID } from 'node:crypto';
import { type OutboxFields, withOutbox } from '@parametric/events';
import { type Connection, type InferSchemaType, type Model, Schema } from 'mongoose';

export const POLICY_STATUSES = ['PENDING', 'ACTIVE', 'EXPIRED', 'CANCELLED'] as const;
export const SETTLEMENT_MODES = ['DETERMINATION', 'DETERMINATION_AND_SETTLEMENT'] as const;

export const ACTIVATION_CHANNELS = ['PARTNER', 'PAYMENT'] as const;

const policySchema = new Schema(
  {
    _id: { type: String, default: () => randomUUID() },
    organizationId: { type: String, required: true },
    policyNumber: { type: String, required: true },
    farmerId: { type: String, required: true },
    productType: { type: String, required: true, enum: ['CROP', 'LIVESTOCK'] },
    plotId: { type: String, default: null },
    herdId: { type: String, default: null },
    season: { type: String, default: null },
    coverageType: { type: String, required: true },
    durationDays: { type: Number, required: true },
    currency: { type: String, required: true },
    exponent: { type: Number, required: true },
    sumInsuredMinor: { type: Number, required: true },
    premiumMinor: { type: Number, required: true },
    rateTableVersion: { type: String, required: true },
    settlementMode: { type: String, required: true, enum: SETTLEMENT_MODES },
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
  },
  { timestamps: true, versionKey: false },
);
withOutbox(policySchema);
// Policy numbers are what partners and farmers quote: unique across the platform.
policySchema.index({ policyNumber: 1 }, { unique: true });
// Serves an organization's policies of a farmer.
policySchema.index({ organizationId: 1, farmerId: 1 });
// Serves the expiry sweep: `{ status: 'ACTIVE', coverEndsAt: { $lte: now } }`.
policySchema.index({ status: 1, coverEndsAt: 1 });
// Serves the activation re-queue sweep: PENDING policies whose paid premium asked for
// activation. Partial: only those few documents are in it.
policySchema.index(
  { activationRequestedAt: 1 },
  { partialFilterExpression: { activationRequestedAt: { $type: 'date' } } },
);

export type PolicyDoc = InferSchemaType<typeof policySchema> & { _id: string } & OutboxFields;
export type PolicyModel = Model<PolicyDoc>;

export function policyModel(connection: Connection): PolicyModel {
  return (
    (connection.models.Policy as PolicyModel | undefined) ??
    connection.model<PolicyDoc>('Policy', policySchema, 'policies')
  );
}

const DAY_MS = 86_400_000;

export const toMajor = (minor: number, exponent: number) => minor / 10 ** exponent;

/** Whole days of cover left: the full duration until activation, then counting down to zero. */
export function daysRemaining(p: PolicyDoc, now = Date.now()): number {
  if (!p.coverEndsAt) return p.status === 'PENDING' ? p.durationDays : 0;
  return Math.max(0, Math.ceil((p.coverEndsAt.getTime() - now) / DAY_MS));
}

/** The policy as partners read it: the fields of spec 2.3, then ours. */
export function policyView(p: PolicyDoc, now = Date.now()) {
  return {
    id: p._id,
    policyNumber: p.policyNumber,
    status: p.status,
    premiumPaid: p.premiumPaid,
    sumInsured: toMajor(p.sumInsuredMinor, p.exponent),
    premium: toMajor(p.premiumMinor, p.exponent),
    coverageType: p.coverageType,
    onChainPolicyId: p.onChainPolicyId ?? null,
    daysRemaining: daysRemaining(p, now),
    payouts: [],
    damageAssessments: [],
    settlementMode: p.settlementMode,
    productType: p.productType,
    farmerId: p.farmerId,
    plotId: p.plotId ?? null,
    herdId: p.herdId ?? null,
    season: p.season ?? null,
    durationDays: p.durationDays,
    currency: p.currency,
    coverStartsAt: p.coverStartsAt ?? null,
    coverEndsAt: p.coverEndsAt ?? null,
    activatedAt: p.activatedAt ?? null,
    txHash: p.txHash ?? null,
    premiumReference: p.premiumReference ?? null,
    rateTableVersion: p.rateTableVersion,
    createdAt: p.createdAt,
  };
}
