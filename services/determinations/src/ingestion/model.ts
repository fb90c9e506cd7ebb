import { type Connection, type InferSchemaType, type Model, Schema } from 'mongoose';

/**
 * The claim on an ingestion idempotency key (`_id`): the first ingestion of a key writes it,
 * fixing the determination id and the content fingerprint for every later or parallel one.
 */
const ingestionKeySchema = new Schema(
  {
    _id: { type: String, required: true },
    fingerprint: { type: String, required: true },
    determinationId: { type: String, required: true },
    createdAt: { type: Date, required: true },
  },
  { versionKey: false },
);

export type IngestionKeyDoc = InferSchemaType<typeof ingestionKeySchema> & { _id: string };
export type IngestionKeyModel = Model<IngestionKeyDoc>;

export function ingestionKeyModel(connection: Connection): IngestionKeyModel {
  return (
    (connection.models.IngestionKey as IngestionKeyModel | undefined) ??
    connection.model<IngestionKeyDoc>('IngestionKey', ingestionKeySchema, 'ingestion_keys')
  );
}
