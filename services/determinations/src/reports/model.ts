import { SETTLEMENT_METHODS, SETTLEMENT_OUTCOMES } from '@parametric/contracts';
import { type Connection, type InferSchemaType, type Model, Schema } from 'mongoose';

/** A Tier 1 settlement report: partner-attested, never verified, never edited (corrections chain). */
const reportSchema = new Schema(
  {
    _id: { type: String, required: true },
    organizationId: { type: String, required: true },
    determinationId: { type: String, required: true },
    partnerReference: { type: String, required: true },
    /** SHA-256 of the canonical request body: a replay with another body is a conflict. */
    fingerprint: { type: String, required: true },
    outcome: { type: String, required: true, enum: SETTLEMENT_OUTCOMES },
    method: { type: String, required: true, enum: SETTLEMENT_METHODS },
    /** Integer minor units of the determination's currency, as a string (as the partner sent it). */
    settledAmountMinor: { type: String, required: true },
    settlementCurrency: { type: String, required: true },
    settledAt: { type: Date, required: true },
    reportedAt: { type: Date, required: true },
    supersedesReportId: { type: String, default: null },
    supersededByReportId: { type: String, default: null },
    notes: { type: String, default: null },
    /**
     * False between the insert and the determination's update that makes it current (two
     * documents, no transaction): a report still false is finished by its replay, and is not
     * listed unless the determination names it.
     */
    recorded: { type: Boolean, required: true, default: false },
  },
  { versionKey: false },
);
// The spec's idempotency key, (determinationId, partnerReference): parallel posts make one report.
reportSchema.index({ determinationId: 1, partnerReference: 1 }, { unique: true });
// Serves the report list of a determination, newest first.
reportSchema.index({ organizationId: 1, determinationId: 1, reportedAt: -1 });

export type ReportDoc = InferSchemaType<typeof reportSchema> & { _id: string };
export type ReportModel = Model<ReportDoc>;

export function reportModel(connection: Connection): ReportModel {
  return (
    (connection.models.SettlementReport as ReportModel | undefined) ??
    connection.model<ReportDoc>('SettlementReport', reportSchema, 'settlement_reports')
  );
}
