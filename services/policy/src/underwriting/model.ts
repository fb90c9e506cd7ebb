import { type Connection, type InferSchemaType, type Model, Schema } from 'mongoose';

export const MARKETS = ['KE', 'GH'] as const;
/** Currencies of the markets we serve, with their ISO 4217 minor-unit exponent. */
export const MARKET_CURRENCY = { KE: 'KES', GH: 'GHS' } as const;
export const CURRENCY_EXPONENT = { KES: 2, GHS: 2 } as const;

/** One licence per organization and market; recording a new one replaces it. */
const licenceSchema = new Schema(
  {
    organizationId: { type: String, required: true },
    market: { type: String, required: true, enum: MARKETS },
    licenceNumber: { type: String, required: true },
    /** null = no recorded expiry, which the spec treats as expired. */
    expiresAt: { type: Date, default: null },
  },
  { timestamps: true, versionKey: false },
);
// Serves the purchase gate's lookup of the organization's licence for its market (one per pair).
licenceSchema.index({ organizationId: 1, market: 1 }, { unique: true });

/**
 * Underwriting capacity per organization (`_id` is the organization id), in minor units so
 * that reservations are exact integer arithmetic.
 */
const capacitySchema = new Schema(
  {
    _id: { type: String, required: true },
    currency: { type: String, required: true },
    amountMinor: { type: Number, required: true },
    reservedMinor: { type: Number, required: true, default: 0 },
    solvencyAttestedUntil: { type: Date, required: true },
  },
  { timestamps: true, versionKey: false },
);

export type LicenceDoc = InferSchemaType<typeof licenceSchema>;
export type CapacityDoc = InferSchemaType<typeof capacitySchema> & { _id: string };
export type LicenceModel = Model<LicenceDoc>;
export type CapacityModel = Model<CapacityDoc>;

export function licenceModel(connection: Connection): LicenceModel {
  return (
    (connection.models.Licence as LicenceModel | undefined) ??
    connection.model<LicenceDoc>('Licence', licenceSchema, 'licences')
  );
}

export function capacityModel(connection: Connection): CapacityModel {
  return (
    (connection.models.Capacity as CapacityModel | undefined) ??
    connection.model<CapacityDoc>('Capacity', capacitySchema, 'underwriting_capacity')
  );
}

/** Major units (at most `exponent` decimals) to exact integer minor units, via the decimal string. */
export function toMinor(amount: number, exponent: number): number {
  const [whole, fraction = ''] = amount.toFixed(exponent).split('.');
  return Number(`${whole}${fraction.padEnd(exponent, '0')}`);
}

export function fromMinor(minor: number, exponent: number): string {
  const sign = minor < 0 ? '-' : '';
  const digits = String(Math.abs(minor)).padStart(exponent + 1, '0');
  return exponent === 0
    ? `${sign}${digits}`
    : `${sign}${digits.slice(0, -exponent)}.${digits.slice(-exponent)}`;
}

export function licenceView(l: LicenceDoc) {
  return {
    market: l.market,
    licenceNumber: l.licenceNumber,
    expiresAt: l.expiresAt ?? null,
    updatedAt: l.updatedAt,
  };
}

export function capacityView(c: CapacityDoc) {
  const exponent = CURRENCY_EXPONENT[c.currency as keyof typeof CURRENCY_EXPONENT] ?? 2;
  return {
    currency: c.currency,
    amount: fromMinor(c.amountMinor, exponent),
    reserved: fromMinor(c.reservedMinor, exponent),
    remaining: fromMinor(c.amountMinor - c.reservedMinor, exponent),
    solvencyAttestedUntil: c.solvencyAttestedUntil,
    updatedAt: c.updatedAt,
  };
}
