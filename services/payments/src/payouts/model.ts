import { PAYOUT_ATTEMPT_KINDS, PAYOUT_FAILURE_REASONS, PAYOUT_STATUSES } from '@parametric/contracts';
import { type OutboxFields, withOutbox } from '@parametric/events';
import { type JobOutboxFields, withJobOutbox } from '@parametric/queue';
import { type Connection, type InferSchemaType, type Model, Schema } from 'mongoose';

/**
 * Where a part's current attempt stands (internal; partners see `status`):
 * - `WAITING`: not started: a later part waits for the one before it to be paid.
 * - `SENDING`: attempt `attempts` is recorded with its OriginatorConversationID and the B2C
 *   request is being (re)sent: a transport failure resends the SAME id (Daraja answers
 *   DUPLICATE if the first one got through).
 * - `AWAITING_RESULT`: Daraja accepted it; the Result (or a QueueTimeOut) moves it on.
 * - `RETRY_WAIT`: it did not pay (a retriable ResultCode) or its outcome is unknown
 *   (QueueTimeOut): from `nextAttemptAt`, Transaction Status is asked about it, and only if it
 *   did not complete is the next attempt sent.
 * - `DONE`: COMPLETED or FAILED.
 */
export const PAYOUT_PHASES = ['WAITING', 'SENDING', 'AWAITING_RESULT', 'RETRY_WAIT', 'DONE'] as const;
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

/**
 * One B2C payment of a payout. M-Pesa moves at most `MPESA_B2C_MAX_AMOUNT` per transaction, so
 * a larger payout is paid in parts, one after the other; each part has its own attempts, each
 * attempt its own OriginatorConversationID.
 */
const partSchema = new Schema(
  {
    /** 1-based; parts are paid in this order. */
    index: { type: Number, required: true },
    /** Whole shillings, in minor units. */
    amountMinor: { type: String, required: true },
    status: { type: String, required: true, enum: PAYOUT_STATUSES },
    phase: { type: String, required: true, enum: PAYOUT_PHASES },
    /** Attempts started; attempt n's OriginatorConversationID is `originatorConversationIdOf(payout, part, n)`. */
    attempts: { type: Number, required: true, default: 0 },
    /** Attempts allowed before the part (and so the payout) is FAILED; a retry grants a fresh budget. */
    attemptLimit: { type: Number, required: true },
    originatorConversationId: { type: String, default: null },
    /** Every OriginatorConversationID this part has used (late Results of older attempts). */
    originatorConversationIds: { type: [String], default: [] },
    nextAttemptAt: { type: Date, default: null },
    /** When Daraja accepted the current attempt (its Result is awaited from then). */
    acceptedAt: { type: Date, default: null },
    /** Transport failures (throttled, unavailable) of the current step, for its backoff. */
    sendFailures: { type: Number, default: 0 },
    lastResultCode: { type: String, default: null },
    lastResultDesc: { type: String, default: null },
    statusQuery: { type: statusQuerySchema, default: null },
    /** The M-Pesa receipt once paid. */
    receipt: { type: String, default: null },
    reason: { type: String, enum: [...PAYOUT_FAILURE_REASONS, null], default: null },
    completedAt: { type: Date, default: null },
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
    /** What is paid, in minor units of `currency`: `owedMinor` rounded up to whole shillings. */
    amountMinor: { type: String, required: true },
    /** What the determination made owed (its amount owed, capped by the cover), exactly. */
    owedMinor: { type: String, required: true },
    currency: { type: String, required: true },
    exponent: { type: Number, required: true },
    /** `amountMinor` in USDC at the quote taken at origination, 6 decimals. */
    amountUSDC: { type: String, required: true },
    quoteId: { type: String, required: true },
    phone: { type: String, required: true },
    /** `sandbox`: a sandbox organization's payout, sent through the sandbox Daraja. Absent: live. */
    environment: { type: String, enum: ['live', 'sandbox'] },
    /** Derived from the parts on every write (`payoutStatusOf`); stored for the partner's filter. */
    status: { type: String, required: true, enum: PAYOUT_STATUSES },
    parts: { type: [partSchema], default: [] },
    /** Every part's receipt, in part order, once all are paid. */
    mobileMoneyRef: { type: String, default: null },
    /** Why it FAILED: the failed part's reason, or one decided before anything was sent. */
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
payoutSchema.index({ 'parts.originatorConversationIds': 1 });
payoutSchema.index({ 'parts.statusQuery.queryOcid': 1 }, { sparse: true });
// Serves the partner listing: newest first, optionally by status.
payoutSchema.index({ organizationId: 1, createdAt: -1, _id: -1 });
payoutSchema.index({ organizationId: 1, status: 1, createdAt: -1, _id: -1 });

export type PartDoc = InferSchemaType<typeof partSchema>;
export type PayoutDoc = Omit<InferSchemaType<typeof payoutSchema>, 'parts'> & {
  _id: string;
  parts: PartDoc[];
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

/**
 * The payout ledger: one row per B2C request, per answer to it, per Result or QueueTimeOut, per
 * Transaction Status query and per answer to that. Append-only: rows are inserted, never updated
 * nor deleted, so `GET /payouts/{id}` shows every try even after a retry reset the payout.
 */
const attemptSchema = new Schema(
  {
    /** Deterministic for what arrives from outside (a repeated callback is one row), random for our own requests. */
    _id: { type: String, required: true },
    payoutId: { type: String, required: true },
    organizationId: { type: String, required: true },
    part: { type: Number, required: true },
    attempt: { type: Number, required: true },
    kind: { type: String, required: true, enum: PAYOUT_ATTEMPT_KINDS },
    /** Where `kind` comes in an attempt's life: orders rows written in the same millisecond. */
    rank: { type: Number, required: true },
    originatorConversationId: { type: String, required: true },
    amountMinor: { type: String, default: null },
    /** When we sent it or received it. */
    at: { type: Date, required: true },
    conversationId: { type: String, default: null },
    resultCode: { type: String, default: null },
    resultDesc: { type: String, default: null },
    receipt: { type: String, default: null },
  },
  { versionKey: false },
);
// Serves `GET /payouts/{id}`'s history, oldest first (`LEDGER_ORDER`).
attemptSchema.index({ organizationId: 1, payoutId: 1, at: 1, part: 1, attempt: 1, rank: 1 });

export type PayoutAttemptDoc = InferSchemaType<typeof attemptSchema> & { _id: string };
export type PayoutAttemptModel = Model<PayoutAttemptDoc>;

export function payoutAttemptModel(connection: Connection): PayoutAttemptModel {
  return (
    (connection.models.PayoutAttempt as PayoutAttemptModel | undefined) ??
    connection.model<PayoutAttemptDoc>('PayoutAttempt', attemptSchema, 'payout_attempts')
  );
}

/** Where the origination sweep has got to (one document; see `sweep.ts`). */
const sweepStateSchema = new Schema(
  {
    _id: { type: String, required: true },
    /** Every payable determination issued up to this one (by issuedAt, then id) has a payout. */
    checkedIssuedAt: { type: Date, default: null },
    checkedId: { type: String, default: null },
  },
  { versionKey: false, timestamps: true },
);

export type SweepStateDoc = InferSchemaType<typeof sweepStateSchema> & { _id: string };
export type SweepStateModel = Model<SweepStateDoc>;

export function sweepStateModel(connection: Connection): SweepStateModel {
  return (
    (connection.models.PayoutSweepState as SweepStateModel | undefined) ??
    connection.model<SweepStateDoc>('PayoutSweepState', sweepStateSchema, 'payout_sweep_state')
  );
}
