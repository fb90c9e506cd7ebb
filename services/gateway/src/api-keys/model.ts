import { type Connection, type InferSchemaType, type Model, Schema } from 'mongoose';

/**
 * One credential per organization (`_id` is the organization id): rotation replaces it in a
 * single document write, so there is never a moment with two valid keys, and the old key
 * is rejected on the very next request. Only HMACs of the key and secret are stored.
 */
const apiKeySchema = new Schema(
  {
    _id: { type: String, required: true },
    keyHash: { type: String, required: true },
    secretHash: { type: String, required: true },
    keyPrefix: { type: String, required: true },
    last4: { type: String, required: true },
    active: { type: Boolean, required: true, default: true },
    rotatedAt: { type: Date, default: null },
    revokedAt: { type: Date, default: null },
  },
  { timestamps: true, versionKey: false },
);
// Serves authentication: every partner request looks its key up by hash.
apiKeySchema.index({ keyHash: 1 }, { unique: true });

export type ApiKeyDoc = InferSchemaType<typeof apiKeySchema> & { _id: string };
export type ApiKeyModel = Model<ApiKeyDoc>;

export function apiKeyModel(connection: Connection): ApiKeyModel {
  return (
    (connection.models.ApiKey as ApiKeyModel | undefined) ??
    connection.model<ApiKeyDoc>('ApiKey', apiKeySchema, 'api_keys')
  );
}
