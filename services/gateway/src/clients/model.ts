import { randomUUID } from 'node:crypto';
import { OPS_CLIENT_SCOPES, OPS_CLIENT_STATUSES } from '@parametric/contracts';
import { type Connection, type InferSchemaType, type Model, Schema } from 'mongoose';

/**
 * Machine clients of the ops API (issue 25): a name, scopes, and the peppered HMAC of the
 * secret (credentials/secrets.ts), never the secret. `secretGeneration` is stamped into every
 * token issued, so rotating the secret ends the tokens of the old one.
 */
const opsClientSchema = new Schema(
  {
    _id: { type: String, default: () => randomUUID() },
    name: { type: String, required: true },
    scopes: { type: [{ type: String, enum: OPS_CLIENT_SCOPES }], default: [] },
    status: { type: String, required: true, enum: OPS_CLIENT_STATUSES, default: 'ACTIVE' },
    secretHash: { type: String, required: true },
    secretGeneration: { type: Number, required: true, default: 1 },
    secretRotatedAt: { type: Date, default: null },
    lastTokenAt: { type: Date, default: null },
    revokedAt: { type: Date, default: null },
  },
  { timestamps: true, versionKey: false },
);
// Serves the client list, newest first.
opsClientSchema.index({ createdAt: -1 });

export type OpsClientDoc = InferSchemaType<typeof opsClientSchema> & { _id: string };
export type OpsClientModel = Model<OpsClientDoc>;

export function opsClientModel(connection: Connection): OpsClientModel {
  return (
    (connection.models.OpsClient as OpsClientModel | undefined) ??
    connection.model<OpsClientDoc>('OpsClient', opsClientSchema, 'ops_clients')
  );
}
