import { randomUUID } from 'node:crypto';
import { OPS_ROLES } from '@parametric/contracts';
import { type Connection, type InferSchemaType, type Model, Schema } from 'mongoose';
import { personFields } from '../users/model';

/**
 * Operators: the platform's own people (issue 25), kept apart from dashboard users (no
 * organization; another token audience), with the same password and invitation fields.
 */
const operatorSchema = new Schema(
  {
    _id: { type: String, default: () => randomUUID() },
    email: { type: String, required: true },
    role: { type: String, required: true, enum: OPS_ROLES },
    // The same statuses (OPERATOR_STATUSES is USER_STATUSES), password and invitation fields.
    ...personFields,
  },
  { timestamps: true, versionKey: false },
);
// Serves sign-in by email and keeps an email to one operator.
operatorSchema.index({ email: 1 }, { unique: true });
// Serves accepting an invitation: the token's hash finds its operator.
operatorSchema.index(
  { invitationHash: 1 },
  { unique: true, partialFilterExpression: { invitationHash: { $type: 'string' } } },
);
// Serves the operator list, newest first.
operatorSchema.index({ createdAt: -1 });

export type OperatorDoc = InferSchemaType<typeof operatorSchema> & { _id: string };
export type OperatorModel = Model<OperatorDoc>;

export function operatorModel(connection: Connection): OperatorModel {
  return (
    (connection.models.Operator as OperatorModel | undefined) ??
    connection.model<OperatorDoc>('Operator', operatorSchema, 'operators')
  );
}
