import { type Connection, type InferSchemaType, type Model, Schema } from 'mongoose';

/**
 * One ops action, as the audit trail keeps it. Append-only: the module exposes inserting and
 * reading (audit/trail.ts), and no route updates or deletes an entry.
 */
const auditEntrySchema = new Schema(
  {
    _id: { type: String, required: true },
    at: { type: Date, required: true },
    actor: { type: String, required: true },
    /** `operator`, `client` or `break-glass` (issue 25); absent on entries written before. */
    actorKind: { type: String, default: null },
    actorEmail: { type: String, default: null },
    /** A machine client's name (its id is in `actor`); null for anyone else. */
    actorName: { type: String, default: null },
    /** The role (or, for a client, the scopes) the action was taken with. */
    actorRole: { type: String, default: null },
    action: { type: String, required: true },
    method: { type: String, required: true },
    path: { type: String, required: true },
    organizationId: { type: String, default: null },
    targetId: { type: String, default: null },
    status: { type: Number, required: true },
    requestId: { type: String, required: true },
    request: { type: Schema.Types.Mixed, default: null },
    before: { type: Schema.Types.Mixed, default: null },
    after: { type: Schema.Types.Mixed, default: null },
    /**
     * For an action carried out on approval (four eyes): the approval and both operators, the
     * requester and the approver (who is the entry's actor).
     */
    approval: { type: Schema.Types.Mixed, default: null },
  },
  { versionKey: false, minimize: false },
);
// Serves GET /ops/audit: newest first, whole trail or between dates.
auditEntrySchema.index({ at: -1, _id: -1 });
// Serves GET /ops/audit?organizationId=: one organization's trail, newest first.
auditEntrySchema.index({ organizationId: 1, at: -1 });
// Serves GET /ops/audit?actor=: one operator's (or client's) trail, newest first.
auditEntrySchema.index({ actor: 1, at: -1 });
auditEntrySchema.index({ actorEmail: 1, at: -1 });
// The requester of an action carried out on approval is found by actor too.
auditEntrySchema.index({ 'approval.requestedBy.id': 1, at: -1 });
auditEntrySchema.index({ 'approval.requestedBy.email': 1, at: -1 });
// Serves GET /ops/audit?action=: every time one kind of action was taken.
auditEntrySchema.index({ action: 1, at: -1 });

export type AuditEntryDoc = InferSchemaType<typeof auditEntrySchema> & { _id: string };
export type AuditModel = Model<AuditEntryDoc>;

export function auditModel(connection: Connection): AuditModel {
  return (
    (connection.models.AuditEntry as AuditModel | undefined) ??
    connection.model<AuditEntryDoc>('AuditEntry', auditEntrySchema, 'ops_audit')
  );
}
