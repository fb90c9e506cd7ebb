import { type Connection, type InferSchemaType, type Model, Schema } from 'mongoose';

/** One webhook endpoint per organization (`_id` is the organization id). */
const endpointSchema = new Schema(
  {
    _id: { type: String, required: true },
    url: { type: String, required: true },
    secretSealed: { type: String, required: true },
    secretRotatedAt: { type: Date, default: null },
  },
  { timestamps: true, versionKey: false },
);

export type EndpointDoc = InferSchemaType<typeof endpointSchema> & { _id: string };
export type EndpointModel = Model<EndpointDoc>;

export function endpointModel(connection: Connection): EndpointModel {
  return (
    (connection.models.WebhookEndpoint as EndpointModel | undefined) ??
    connection.model<EndpointDoc>('WebhookEndpoint', endpointSchema, 'webhook_endpoints')
  );
}
