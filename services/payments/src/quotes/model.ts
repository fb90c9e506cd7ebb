import { QUOTE_FROM_CURRENCIES, QUOTE_TO_CURRENCIES } from '@parametric/contracts';
import { type Connection, type InferSchemaType, type Model, Schema, type Types } from 'mongoose';

/**
 * One quote as given: the amount, the rate and what it converts to, where the rate came from,
 * and until when the quote holds. Written once, never updated.
 */
const quoteSchema = new Schema(
  {
    /** The quote id (uuid). */
    _id: { type: String, required: true },
    organizationId: { type: String, required: true },
    fromCurrency: { type: String, required: true, enum: QUOTE_FROM_CURRENCIES },
    toCurrency: { type: String, required: true, enum: QUOTE_TO_CURRENCIES },
    /** KES minor units (cents), int64. */
    amountMinor: { type: BigInt, required: true },
    /** USDC per 1 KES with 18 decimals (Decimal128: a rate is not money, and 34 digits hold it exactly). */
    rate: { type: Schema.Types.Decimal128, required: true },
    /** USDC minor units (micro-USDC), int64. */
    convertedMinor: { type: BigInt, required: true },
    /** KES per 1 USDC exactly as the source gave it (the evidence behind `rate`). */
    sourceRate: { type: String, required: true },
    source: { type: String, required: true },
    rateFetchedAt: { type: Date, required: true },
    rateAsOf: { type: Date, required: true },
    createdAt: { type: Date, required: true },
    expiresAt: { type: Date, required: true },
  },
  { versionKey: false },
);
// The one query, a quote by id within its organization (`{ _id, organizationId }` through
// scopedTo), is served by the `_id` index; no other index until another query needs one.
// Expired quotes are kept (a payout may cite its quote), so there is no TTL index on expiresAt.

export type QuoteDoc = Omit<InferSchemaType<typeof quoteSchema>, 'rate'> & {
  _id: string;
  rate: Types.Decimal128;
};
export type QuoteModel = Model<QuoteDoc>;

export function quoteModel(connection: Connection): QuoteModel {
  return (
    (connection.models.Quote as QuoteModel | undefined) ??
    connection.model<QuoteDoc>('Quote', quoteSchema, 'quotes')
  );
}
