import { randomUUID } from 'node:crypto';
import { ENVIRONMENTS, KYB_STATUSES, ORGANIZATION_TYPES, SERVICE_TIERS } from '@parametric/contracts';
import { withOutbox } from '@parametric/events';
import { MARKETS } from '@parametric/money';
import { type Connection, type InferSchemaType, type Model, Schema } from 'mongoose';

export { ENVIRONMENTS, KYB_STATUSES, ORGANIZATION_TYPES, SERVICE_TIERS };

const organizationSchema = withOutbox(
  new Schema(
    {
      _id: { type: String, default: () => randomUUID() },
      name: { type: String, required: true },
      type: { type: String, required: true, enum: ORGANIZATION_TYPES },
      countryCode: { type: String, required: true, enum: [...MARKETS] },
      contactEmail: { type: String, default: null },
      contactPhone: { type: String, default: null },
      kybStatus: { type: String, required: true, enum: KYB_STATUSES, default: 'NOT_STARTED' },
      kybNotes: { type: String, default: null },
      kybUpdatedAt: { type: Date, default: null },
      serviceTier: { type: String, required: true, enum: SERVICE_TIERS, default: 'DETERMINATION' },
      isActive: { type: Boolean, required: true, default: true },
      brandColor: { type: String, default: null },
      /** Fixed at registration. Organizations registered before the field are live. */
      environment: { type: String, required: true, enum: ENVIRONMENTS, default: 'live' },
    },
    { timestamps: true, versionKey: false },
  ),
);

export type OrganizationDoc = InferSchemaType<typeof organizationSchema> & { _id: string };
export type OrganizationModel = Model<OrganizationDoc>;

export function organizationModel(connection: Connection): OrganizationModel {
  return (
    (connection.models.Organization as OrganizationModel | undefined) ??
    connection.model<OrganizationDoc>('Organization', organizationSchema, 'organizations')
  );
}
