import { randomUUID } from 'node:crypto';
import { CROP_TYPES } from '@parametric/contracts';
import { type Connection, type InferSchemaType, type Model, Schema } from 'mongoose';

const plotSchema = new Schema(
  {
    _id: { type: String, default: () => randomUUID() },
    organizationId: { type: String, required: true },
    farmerId: { type: String, required: true },
    name: { type: String, required: true },
    latitude: { type: Number, required: true },
    longitude: { type: Number, required: true },
    areaHectares: { type: Number, required: true },
    cropType: { type: String, required: true, enum: CROP_TYPES },
  },
  { timestamps: true, versionKey: false },
);
// Serves "a farmer's plots" (`GET /farmers/{id}/plots`), a page in order from the index.
plotSchema.index({ organizationId: 1, farmerId: 1, createdAt: 1, _id: 1 });

export type PlotDoc = InferSchemaType<typeof plotSchema> & { _id: string };
export type PlotModel = Model<PlotDoc>;

export function plotModel(connection: Connection): PlotModel {
  return (
    (connection.models.Plot as PlotModel | undefined) ??
    connection.model<PlotDoc>('Plot', plotSchema, 'plots')
  );
}

export function plotView(p: PlotDoc) {
  return {
    id: p._id,
    farmerId: p.farmerId,
    name: p.name,
    latitude: p.latitude,
    longitude: p.longitude,
    areaHectares: p.areaHectares,
    cropType: p.cropType,
    createdAt: p.createdAt.toISOString(),
    updatedAt: p.updatedAt.toISOString(),
  };
}
