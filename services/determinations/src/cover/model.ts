import { type Connection, type Model, Schema } from 'mongoose';
import type { CoverClaim, CoverDoc } from './claim';

const claimSchema = new Schema<CoverClaim>(
  {
    determinationId: { type: String, required: true },
    /** What this determination took from the cover (minor units, integer string). */
    amountMinor: { type: String, required: true },
    /** sumInsured × bp / 10000 before the cap. */
    uncappedMinor: { type: String, required: true },
    /** The cover left when it claimed. */
    remainingBeforeMinor: { type: String, required: true },
    claimedAt: { type: Date, required: true },
  },
  { _id: false },
);

/**
 * A policy's cover (`_id` = policy id): the sum insured and what its determinations owe
 * together, in the order they claimed it. Every write is conditional on `seq`, so two
 * ingestions cannot both take the same remaining cover (docs/determinations.md).
 */
const coverSchema = new Schema<CoverDoc>(
  {
    _id: { type: String, required: true },
    organizationId: { type: String, required: true },
    currency: { type: String, required: true },
    exponent: { type: Number, required: true },
    sumInsuredMinor: { type: String, required: true },
    /** The sum of the claims' amounts (integer string: BigInt arithmetic in code, never Number). */
    owedMinor: { type: String, required: true },
    /** Bumped by every write; the compare-and-set token. */
    seq: { type: Number, required: true },
    claims: { type: [claimSchema], default: [] },
  },
  { versionKey: false, minimize: false },
);

export type CoverModel = Model<CoverDoc>;

export function coverModel(connection: Connection): CoverModel {
  return (
    (connection.models.PolicyCover as CoverModel | undefined) ??
    connection.model<CoverDoc>('PolicyCover', coverSchema, 'policy_covers')
  );
}
