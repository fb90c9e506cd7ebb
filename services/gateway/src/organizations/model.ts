import { randomUUID } from 'node:crypto';
import { withOutbox } from '@parametric/events';
import { type Connection, type InferSchemaType, type Model, Schema } from 'mongoose';

/** The spec names COOPERATIVE; the rest is our decision (docs/decisions.md). */
export const ORGANIZATION_TYPES = [
  'COOPERATIVE',
  'LENDER',
  'AGRITECH',
  'INPUT_SUPPLIER',
  'NGO',
  'INSURER',
  'OTHER',
] as const;
/** Markets we serve, with the currency a policy sold there is priced in. */
export const MARKETS = { KE: 'KES', GH: 'GHS' } as const;
export const KYB_STATUSES = ['NOT_STARTED', 'VERIFIED', 'REJECTED'] as const;
export const SERVICE_TIERS = ['DETERMINATION', 'DETERMINATION_AND_SETTLEMENT'] as const;

const organizationSchema = withOutbox(
  new Schema(
    {
      _id: { type: String, default: () => randomUUID() },
      name: { type: String, required: true },
      type: { type: String, required: true, enum: ORGANIZATION_TYPES },
      countryCode: { type: String, required: true, enum: Object.keys(MARKETS) },
      contactEmail: { type: String, default: null },
      contactPhone: { type: String, default: null },
      kybStatus: { type: String, required: true, enum: KYB_STATUSES, default: 'NOT_STARTED' },
      kybNotes: { type: String, default: null },
      kybUpdatedAt: { type: Date, default: null },
      serviceTier: { type: String, required: true, enum: SERVICE_TIERS, default: 'DETERMINATION' },
      isActive: { type: Boolean, required: true, default: true },
      brandColor: { type: String, default: null },
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
