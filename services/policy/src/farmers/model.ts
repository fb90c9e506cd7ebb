import { randomUUID } from 'node:crypto';
import { KYC_STATUSES } from '@parametric/contracts';
import { type Connection, type InferSchemaType, type Model, Schema } from 'mongoose';

const farmerSchema = new Schema(
  {
    _id: { type: String, default: () => randomUUID() },
    organizationId: { type: String, required: true },
    firstName: { type: String, required: true },
    lastName: { type: String, required: true },
    phoneNumber: { type: String, required: true },
    nationalId: { type: String, required: true },
    region: { type: String, required: true },
    location: { type: new Schema({ latitude: Number, longitude: Number }, { _id: false }), default: null },
    kycStatus: { type: String, required: true, enum: KYC_STATUSES, default: 'PENDING' },
  },
  { timestamps: true, versionKey: false },
);
// Enforce "unique within the organization" (docs/api.md, "Retries and idempotency") and serve the
// duplicate lookups of bulk import.
farmerSchema.index({ organizationId: 1, phoneNumber: 1 }, { unique: true });
farmerSchema.index({ organizationId: 1, nationalId: 1 }, { unique: true });
// Serves the farmer list filtered by KYC status.
farmerSchema.index({ organizationId: 1, kycStatus: 1, createdAt: -1 });

export type FarmerDoc = InferSchemaType<typeof farmerSchema> & { _id: string };
export type FarmerModel = Model<FarmerDoc>;

export function farmerModel(connection: Connection): FarmerModel {
  return (
    (connection.models.Farmer as FarmerModel | undefined) ??
    connection.model<FarmerDoc>('Farmer', farmerSchema, 'farmers')
  );
}

export function farmerView(f: FarmerDoc) {
  return {
    id: f._id,
    firstName: f.firstName,
    lastName: f.lastName,
    phoneNumber: f.phoneNumber,
    nationalId: f.nationalId,
    region: f.region,
    location:
      f.location?.latitude != null && f.location.longitude != null
        ? { latitude: f.location.latitude, longitude: f.location.longitude }
        : null,
    kycStatus: f.kycStatus,
    createdAt: f.createdAt.toISOString(),
    updatedAt: f.updatedAt.toISOString(),
  };
}

/** What ops see of a farmer: the partner's view and whose farmer it is. */
export const opsFarmerView = (f: FarmerDoc) => ({ ...farmerView(f), organizationId: f.organizationId });
