import {
  DETERMINATION_KINDS,
  DETERMINATION_STATUSES,
  PARTNER_SETTLEMENT_STATUSES,
  UNATTRIBUTED_REASONS,
} from '@parametric/contracts';
import { type OutboxFields, withOutbox } from '@parametric/events';
import { type JobOutboxFields, withJobOutbox } from '@parametric/queue';
import { type Connection, type InferSchemaType, type Model, Schema } from 'mongoose';
import type { SignedDeterminationPayload } from '../signing/sign';

/**
 * One assessment as ingested and, once attributed, the signed record. The signed part
 * (`signed`, `canonicalPayload`, `canonicalHash`, `signature`, `kid`) is written once, at
 * issue, and never updated; the settlement status beside it moves.
 */
const determinationSchema = new Schema(
  {
    _id: { type: String, required: true },
    idempotencyKey: { type: String, required: true },
    /** SHA-256 of the canonical ingestion input: the same key with other content is a conflict. */
    fingerprint: { type: String, required: true },
    status: { type: String, required: true, enum: DETERMINATION_STATUSES },
    unattributedReason: { type: String, enum: [...UNATTRIBUTED_REASONS, null], default: null },
    /** null while no policy of any organization could be found. */
    organizationId: { type: String, default: null },
    policyId: { type: String, default: null },
    policyNumber: { type: String, default: null },
    kind: { type: String, required: true, enum: DETERMINATION_KINDS },
    methodologyVersion: { type: String, required: true },
    triggered: { type: Boolean, required: true },
    damagePercentBp: { type: Number, required: true },
    assessedAt: { type: Date, required: true },
    receivedAt: { type: Date, required: true },

    // Issued only.
    issuedAt: { type: Date, default: null },
    settlementMode: { type: String, default: null },
    /** The policy currency and what is owed in its minor units (integer string); Tier 2 too. */
    currency: { type: String, default: null },
    owedMinor: { type: String, default: null },
    /** For ops (src/cover): sumInsured × bp / 10000 before the cover's cap, and the cover left before it. */
    uncappedOwedMinor: { type: String, default: null },
    coverRemainingBeforeMinor: { type: String, default: null },
    signed: { type: Schema.Types.Mixed, default: null },
    canonicalPayload: { type: String, default: null },
    canonicalHash: { type: String, default: null },
    signature: { type: String, default: null },
    kid: { type: String, default: null },
    evidenceHash: { type: String, default: null },

    // Settlement status (Tier 1 reports), beside the signed record.
    partnerSettlementStatus: { type: String, enum: [...PARTNER_SETTLEMENT_STATUSES, null], default: null },
    dueAt: { type: Date, default: null },
    currentReportId: { type: String, default: null },
    reportedAt: { type: Date, default: null },
    overdueAt: { type: Date, default: null },
  },
  { versionKey: false, minimize: false },
);
withOutbox(determinationSchema);
withJobOutbox(determinationSchema);
// One determination per ingestion key, whichever door it came through.
determinationSchema.index({ idempotencyKey: 1 }, { unique: true });
// Serves the partner list, newest first, and its policy filter.
determinationSchema.index({ organizationId: 1, issuedAt: -1 });
determinationSchema.index({ organizationId: 1, policyId: 1, issuedAt: -1 });
// Serves the ops list by status (the UNATTRIBUTED queue), newest first.
determinationSchema.index({ status: 1, receivedAt: -1 });
// Serves the overdue sweep: `{ partnerSettlementStatus: 'PENDING', dueAt: { $lte: now } }`.
// Partial: only determinations still awaiting a report are in it.
determinationSchema.index(
  { dueAt: 1 },
  { partialFilterExpression: { partnerSettlementStatus: 'PENDING' }, name: 'pending_reports_by_due_date' },
);
// Serves the `settlement_reports_overdue` gauge's count at each scrape; partial, so it holds only
// the determinations whose report is overdue now.
determinationSchema.index(
  { partnerSettlementStatus: 1 },
  { partialFilterExpression: { partnerSettlementStatus: 'OVERDUE' }, name: 'overdue_reports' },
);

/**
 * A determination a Tier 2 payout is owed for (the payments service's origination sweep reads
 * them through `GET /ops/payable-determinations`). "Non-zero" is on the stored integer string.
 */
export const PAYABLE = {
  status: 'ISSUED',
  settlementMode: 'DETERMINATION_AND_SETTLEMENT',
  triggered: true,
  owedMinor: { $nin: ['0', null] },
} as const;
// Serves that list, oldest first; partial, so only Tier 2 triggered determinations are in it.
determinationSchema.index(
  { issuedAt: 1, _id: 1 },
  {
    partialFilterExpression: { settlementMode: 'DETERMINATION_AND_SETTLEMENT', triggered: true },
    name: 'tier2_triggered_by_issue',
  },
);

export type DeterminationDoc = Omit<InferSchemaType<typeof determinationSchema>, 'signed'> & {
  _id: string;
  signed: SignedDeterminationPayload | null;
} & OutboxFields &
  JobOutboxFields;
export type DeterminationModel = Model<DeterminationDoc>;

export function determinationModel(connection: Connection): DeterminationModel {
  return (
    (connection.models.Determination as DeterminationModel | undefined) ??
    connection.model<DeterminationDoc>('Determination', determinationSchema, 'determinations')
  );
}

/** The evidence behind a determination (`_id` is the determination id). */
const evidenceSchema = new Schema(
  {
    _id: { type: String, required: true },
    organizationId: { type: String, default: null },
    evidence: { type: Schema.Types.Mixed, required: true },
    /** SHA-256 (hex) of the RFC 8785 form of `evidence`; signed in the determination. */
    evidenceHash: { type: String, required: true },
    createdAt: { type: Date, required: true },
  },
  { versionKey: false, minimize: false },
);

export type EvidenceDoc = InferSchemaType<typeof evidenceSchema> & {
  _id: string;
  evidence: Record<string, unknown>;
};
export type EvidenceModel = Model<EvidenceDoc>;

export function evidenceModel(connection: Connection): EvidenceModel {
  return (
    (connection.models.Evidence as EvidenceModel | undefined) ??
    connection.model<EvidenceDoc>('Evidence', evidenceSchema, 'determination_evidence')
  );
}
