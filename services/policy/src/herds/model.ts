import { randomUUID } from 'node:crypto';
import { type Connection, type InferSchemaType, type Model, Schema } from 'mongoose';

const herdSchema = new Schema(
  {
    _id: { type: String, default: () => randomUUID() },
    organizationId: { type: String, required: true },
    farmerId: { type: String, required: true },
    name: { type: String, required: true },
    headCount: { type: Number, required: true },
    /** Major units of the organization's currency, as the partner sent it (at most 2 decimals). */
    estimatedValue: { type: Number, required: true },
    latitude: { type: Number, required: true },
    longitude: { type: Number, required: true },
  },
  { timestamps: true, versionKey: false },
);
// Serves "a farmer's herds" (`GET /farmers/{id}/herds`), a page in order from the index.
herdSchema.index({ organizationId: 1, farmerId: 1, createdAt: 1, _id: 1 });

export type HerdDoc = InferSchemaType<typeof herdSchema> & { _id: string };
export type HerdModel = Model<HerdDoc>;

export function herdModel(connection: Connection): HerdModel {
  return (
    (connection.models.Herd as HerdModel | undefined) ??
    connection.model<HerdDoc>('Herd', herdSchema, 'herds')
  );
}

export function herdView(h: HerdDoc) {
  return {
    id: h._id,
    farmerId: h.farmerId,
    name: h.name,
    headCount: h.headCount,
    estimatedValue: h.estimatedValue,
    latitude: h.latitude,
    longitude: h.longitude,
    createdAt: h.createdAt.toISOString(),
    updatedAt: h.updatedAt.toISOString(),
  };
}
