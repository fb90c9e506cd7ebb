import { isDuplicateKey } from '@parametric/mongo';
import { type Connection, type Model, Schema } from 'mongoose';
import { z } from 'zod';
import type { RateReferenceStore } from './guard';

/** The one pair quoted: the document's id. */
export const RATE_REFERENCE_ID = 'USDC-KES';

/**
 * The last KES→USDC rate accepted by any replica (docs/payments.md, "Quotes"): one document per
 * pair, replaced by each accepted rate, read before each fetch from the source.
 */
const rateReferenceSchema = new Schema(
  {
    _id: { type: String, required: true },
    /** KES per 1 USDC exactly as the source gave it. */
    kesPerUsdc: { type: String, required: true },
    /** When the accepting replica fetched it. */
    acceptedAt: { type: Date, required: true },
    /** The source's name, as shown in quotes (never its URL). */
    source: { type: String, required: true },
  },
  { versionKey: false },
);

export interface RateReferenceDoc {
  _id: string;
  kesPerUsdc: string;
  acceptedAt: Date;
  source: string;
}
export type RateReferenceModel = Model<RateReferenceDoc>;

export function rateReferenceModel(connection: Connection): RateReferenceModel {
  return (
    (connection.models.RateReference as RateReferenceModel | undefined) ??
    connection.model<RateReferenceDoc>('RateReference', rateReferenceSchema, 'rate_references')
  );
}

/** What is read back is checked: a hand-edited document must not become a reference silently. */
const storedReference = z.object({
  kesPerUsdc: z.string().regex(/^\d+(\.\d{1,18})?$/),
  acceptedAt: z.date(),
});

/** The reference in the payments database, shared by every replica and kept across restarts. */
export function mongoRateReferences(connection: Connection): RateReferenceStore {
  const model = rateReferenceModel(connection);
  return {
    async read() {
      const doc = await model.findById(RATE_REFERENCE_ID).lean<RateReferenceDoc>();
      if (!doc) return null;
      const parsed = storedReference.safeParse(doc);
      if (!parsed.success) {
        throw new Error(
          `the reference rate (rate_references ${RATE_REFERENCE_ID}) is unreadable; delete it to start again from the bounds`,
        );
      }
      return parsed.data;
    },
    async record({ kesPerUsdc, acceptedAt, source }) {
      // Only a later acceptance replaces the reference: a replica recording late never puts back
      // a rate fetched before the one recorded.
      try {
        await model.updateOne(
          { _id: RATE_REFERENCE_ID, acceptedAt: { $lt: acceptedAt } },
          { $set: { kesPerUsdc, acceptedAt, source } },
          { upsert: true },
        );
      } catch (err) {
        // The upsert found the document but not older: a later (or as recent) reference stands.
        if (!isDuplicateKey(err)) throw err;
      }
    },
  };
}
