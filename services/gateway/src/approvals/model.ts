import { APPROVAL_ACTIONS } from '@parametric/contracts';
import { type Connection, type InferSchemaType, type Model, Schema } from 'mongoose';

const personSchema = new Schema(
  {
    id: { type: String, required: true },
    email: { type: String, default: null },
    role: { type: String, required: true },
  },
  { _id: false },
);

/**
 * A money-moving ops action waiting for a second operator (approvals/domain.ts). Stored statuses
 * are PENDING, EXECUTING, EXECUTED, FAILED and REJECTED; EXPIRED is a PENDING one read after
 * `expiresAt`, so nothing has to sweep it.
 */
const approvalSchema = new Schema(
  {
    _id: { type: String, required: true },
    action: { type: String, required: true, enum: APPROVAL_ACTIONS },
    status: { type: String, required: true },
    method: { type: String, required: true },
    path: { type: String, required: true },
    organizationId: { type: String, default: null },
    params: { type: Schema.Types.Mixed, default: {} },
    request: { type: Schema.Types.Mixed, default: null },
    requestedBy: { type: personSchema, required: true },
    requestedAt: { type: Date, required: true },
    expiresAt: { type: Date, required: true },
    decidedBy: { type: personSchema, default: null },
    decidedAt: { type: Date, default: null },
    /** The approver's claim while EXECUTING: who may finish it, and until when it holds. */
    claim: { type: String, default: null },
    leaseUntil: { type: Date, default: null },
    reason: { type: String, default: null },
    result: { type: Schema.Types.Mixed, default: null },
    error: { type: Schema.Types.Mixed, default: null },
  },
  { versionKey: false, minimize: false },
);
// Serves GET /ops/approvals: newest first, whole list or by status (EXPIRED and PENDING split on expiresAt).
approvalSchema.index({ requestedAt: -1, _id: -1 });
approvalSchema.index({ status: 1, requestedAt: -1 });
// Serves GET /ops/approvals?action=.
approvalSchema.index({ action: 1, requestedAt: -1 });

export type ApprovalDoc = InferSchemaType<typeof approvalSchema> & { _id: string };
export type ApprovalModel = Model<ApprovalDoc>;

export function approvalModel(connection: Connection): ApprovalModel {
  return (
    (connection.models.OpsApproval as ApprovalModel | undefined) ??
    connection.model<ApprovalDoc>('OpsApproval', approvalSchema, 'ops_approvals')
  );
}
