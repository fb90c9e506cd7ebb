import { PAYOUT_FAILURE_REASONS, PAYOUT_STATUSES } from '@parametric/contracts';
import { type OutboxFields, withOutbox } from '@parametric/events';
import { type JobOutboxFields, withJobOutbox } from '@parametric/queue';
import { type Connection, type InferSchemaType, type Model, Schema } from 'mongoose';

/**
 * Where the current attempt stands (internal; partners see `status`):
 * - `SENDING`: attempt `attempts` is recorded with its OriginatorConversationID and the B2C
 *   request is being (re)sent: a transport failure resends the SAME id (Daraja answers
 *   DUPLICATE if the first one got through).
 * - `AWAITING_RESULT`: Daraja accepted it; the Result (or a QueueTimeOut) moves it on.
 * - `RETRY_WAIT`: it did not pay (a retriable ResultCode) or its outcome is unknown
 *   (QueueTimeOut): from `nextAttemptAt`, Transaction Status is asked about it, and only if it
 *   did not complete is the next attempt sent.
 * - `DONE`: COMPLETED or FAILED.
 */
export const PAYOUT_PHASES = ['SENDING', 'AWAITING_RESULT', 'RETRY_WAIT', 'DONE'] as const;
export type PayoutPhase = (typeof PAYOUT_PHASES)[number];

const statusQuerySchema = new Schema(
  {
    /** The attempt asked about (its OriginatorConversationID). */
    forOcid: { type: String, required: true },
    /** The query's own OriginatorConversationID (Daraja's acknowledgement): its Result carries it. */
    queryOcid: { type: String, required: true },
    askedAt: { type: Date, required: true },
    /** null until the Transaction Status Result arrives. */
    answer: { type: String, enum: ['COMPLETED', 'NOT_COMPLETED', null], default: null },
  },
  { _id: false, id: false },
);

/** A Tier 2 payout: one per determination, paid to the farmer's phone by M-Pesa B2C. */
const payoutSchema = new Schema(
  {
    _id: { type: String, required: true },
    organizationId: { type: String, required: true },
    policyId: { type: String, required: true },
    determinationId: { type: String, required: true },
    /** What is paid, in minor units of `currency` (whole shillings: M-Pesa moves nothing smaller). */
    amountMinor: { type: String, required: true },
    /** What the determination made owed, before truncation to whole shillings. */
    owedMinor: { type: String, required: true },
    currency: { type: String, required: true },
    exponent: { type: Number, required: true },
    /** `amountMinor` in USDC at the quote taken at origination, 6 decimals. */
    amountUSDC: { type: String, required: true },
    quoteId: { type: String, required: true },
    phone: { type: String, required: true },
    status: { type: String, required: true, enum: PAYOUT_STATUSES },
    phase: { type: String, required: true, enum: PAYOUT_PHASES },
    /** Attempts started; attempt n's OriginatorConversationID is the payout id (n = 1) or `<id>-<n>`. */
    attempts: { type: Number, required: true, default: 0 },
    /** Attempts allowed before FAILED (a partner's retry grants a fresh budget). */
    attemptLimit: { type: Number, required: true },
    originatorConversationId: { type: String, default: null },
    /** Every OriginatorConversationID this payout has used (late Results of older attempts). */
    originatorConversationIds: { type: [String], default: [] },
    nextAttemptAt: { type: Date, default: null },
    /** When Daraja accepted the current attempt (its Result is awaited from then). */
    acceptedAt: { type: Date, default: null },
    /** Transport failures (throttled, unavailable) of the current step, for its backoff. */
    sendFailures: { type: Number, default: 0 },
    lastResultCode: { type: String, default: null },
    lastResultDesc: { type: String, default: null },
    statusQuery: { type: statusQuerySchema, default: null },
    mobileMoneyRef: { type: String, default: null },
    reason: { type: String, enum: [...PAYOUT_FAILURE_REASONS, null], default: null },
    completedAt: { type: Date, default: null },
    /** Bumped by every partner-visible change: the policy summary's revision. */
    revision: { type: Number, required: true, default: 1 },
    /** Bumped by every write: the compare-and-set guard of each transition. */
    seq: { type: Number, required: true, default: 0 },
  },
  { timestamps: true, versionKey: false },
);
withOutbox(payoutSchema);
withJobOutbox(payoutSchema);
// One payout per determination, whoever originates it and however often.
payoutSchema.index({ determinationId: 1 }, { unique: true });
// Callbacks find their payout by the attempt's id, and by the status query's.
payoutSchema.index({ originatorConversationIds: 1 });
payoutSchema.index({ 'statusQuery.queryOcid': 1 }, { sparse: true });
// Serves the partner listing: newest first, optionally by status.
payoutSchema.index({ organizationId: 1, createdAt: -1, _id: -1 });
payoutSchema.index({ organizationId: 1, status: 1, createdAt: -1, _id: -1 });

export type PayoutDoc = InferSchemaType<typeof payoutSchema> & {
  _id: string;
  createdAt: Date;
  updatedAt: Date;
} & JobOutboxFields &
  OutboxFields;
export type PayoutModel = Model<PayoutDoc>;

export function payoutModel(connection: Connection): PayoutModel {
  return (
    (connection.models.Payout as PayoutModel | undefined) ??
    connection.model<PayoutDoc>('Payout', payoutSchema, 'payouts')
  );
}
