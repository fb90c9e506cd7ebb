import { isoOrNull } from '@parametric/contracts';
import { exponentOf, formatMinor, MARKETS, MoneyError } from '@parametric/money';
import { type Connection, type InferSchemaType, type Model, Schema } from 'mongoose';
import { readAsBigint } from '../int64';

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
 * A reservation made for a purchase with an `Idempotency-Key`, written in the same update as
 * the `$inc` of `reservedMinor`: the key is claimed and the capacity reserved at once, so a
 * crash can never leave one without the other. It stays until a policy with the key exists
 * (then it is removed), so a retry with the same key finds it and creates the policy on it
 * instead of reserving again (policies/idempotency.ts).
 */
const keyedReservationSchema = new Schema(
  {
    claimId: { type: String, required: true },
    key: { type: String, required: true },
    fingerprint: { type: String, required: true },
    /** The amount reserved, int64 minor units as a decimal string. */
    amountMinor: { type: String, required: true },
    reservedAt: { type: Date, required: true },
  },
  { _id: false },
);

/**
 * Underwriting capacity per organization (`_id` is the organization id), in int64 minor units
 * so that a reservation is one exact, conditional `$inc`.
 */
const capacitySchema = new Schema(
  {
    _id: { type: String, required: true },
    currency: { type: String, required: true },
    amountMinor: { type: BigInt, required: true },
    reservedMinor: { type: BigInt, required: true, default: 0n },
    solvencyAttestedUntil: { type: Date, required: true },
    /** A sandbox organization's made-up capacity (underwriting/sandbox.ts), labelled so in every read. */
    sandbox: { type: Boolean, required: true, default: false },
    /** Keyed reservations whose policy is not written yet (normally none; see above). */
    keyedReservations: { type: [keyedReservationSchema], default: [] },
  },
  { timestamps: true, versionKey: false },
);
readAsBigint(capacitySchema, ['amountMinor', 'reservedMinor']);

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

/** The minor-unit exponent of a currency we sell in; anything else is a bug upstream, not a guess of 2. */
export function exponentOfCurrency(currency: string): number {
  const exponent = exponentOf(currency);
  if (exponent === undefined) {
    throw new MoneyError(
      'CURRENCY_EXPONENT_UNREGISTERED',
      `no minor-unit exponent registered for ${currency}`,
    );
  }
  return exponent;
}

export function licenceView(l: LicenceDoc) {
  return {
    market: l.market,
    licenceNumber: l.licenceNumber,
    expiresAt: isoOrNull(l.expiresAt),
    updatedAt: l.updatedAt.toISOString(),
  };
}

export function capacityView(c: CapacityDoc) {
  const exponent = exponentOfCurrency(c.currency);
  return {
    currency: c.currency,
    amount: formatMinor(c.amountMinor, exponent),
    reserved: formatMinor(c.reservedMinor, exponent),
    remaining: formatMinor(c.amountMinor - c.reservedMinor, exponent),
    solvencyAttestedUntil: c.solvencyAttestedUntil.toISOString(),
    sandbox: c.sandbox ?? false,
    updatedAt: c.updatedAt.toISOString(),
  };
}
