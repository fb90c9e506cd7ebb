import { PAYMENT_FAILURE_REASONS, PAYMENT_STATUSES } from '@parametric/contracts';
import { type JobOutboxFields, withJobOutbox } from '@parametric/queue';
import { type Connection, type InferSchemaType, type Model, Schema } from 'mongoose';

/** One premium collection attempt: an STK push prompt and what became of it. */
const transactionSchema = new Schema(
  {
    _id: { type: String, required: true },
    organizationId: { type: String, required: true },
    policyId: { type: String, required: true },
    policyNumber: { type: String, required: true },
    /** The AccountReference on the customer's prompt (≤ 12 characters). */
    orderId: { type: String, required: true },
    provider: { type: String, required: true, enum: ['MPESA'] },
    currency: { type: String, required: true },
    /** Integer minor units, as a string; whole shillings (M-Pesa moves nothing smaller). */
    amountMinor: { type: String, required: true },
    phoneNumber: { type: String, required: true },
    /**
     * `sandbox` for a sandbox organization's premium: its prompt and its confirmation go through
     * the sandbox Daraja (docs/api.md, "Sandbox"). Absent on earlier ones: live.
     */
    environment: { type: String, enum: ['live', 'sandbox'] },
    status: { type: String, required: true, enum: PAYMENT_STATUSES },
    merchantRequestId: { type: String, default: null },
    checkoutRequestId: { type: String, default: null },
    promptSentAt: { type: Date, default: null },
    callbackReceivedAt: { type: Date, default: null },
    mpesaReceiptNumber: { type: String, default: null },
    providerResultCode: { type: Number, default: null },
    failureReason: { type: String, enum: [...PAYMENT_FAILURE_REASONS, null], default: null },
    confirmedAt: { type: Date, default: null },
    /** How the outcome was learned: the callback (confirmed by query) or the reconciliation sweep. */
    resolvedBy: { type: String, enum: ['CALLBACK', 'RECONCILIATION', null], default: null },
  },
  { timestamps: true, versionKey: false },
);
withJobOutbox(transactionSchema);
// One pending prompt per policy: a second initiate answers the first (race-safe by this index).
transactionSchema.index(
  { policyId: 1 },
  { unique: true, partialFilterExpression: { status: 'PENDING' }, name: 'one_pending_prompt_per_policy' },
);
// Serves the callback's look-up of its transaction.
transactionSchema.index({ checkoutRequestId: 1 }, { sparse: true });
// Serve `GET /payments` (domain.ts, `listPayments`): newest first, and by each filter, the
// sort order after it so a page is read in order (see `listPage`, libs/mongo/src/tenant.ts).
transactionSchema.index({ organizationId: 1, createdAt: -1, _id: -1 });
transactionSchema.index({ organizationId: 1, status: 1, createdAt: -1, _id: -1 });
transactionSchema.index({ organizationId: 1, policyId: 1, createdAt: -1, _id: -1 });
// Serves the reconciliation sweep: `{ status: 'PENDING', updatedAt: { $lte: … } }`.
transactionSchema.index({ status: 1, updatedAt: 1 });

export type TransactionDoc = InferSchemaType<typeof transactionSchema> & { _id: string } & JobOutboxFields;
export type TransactionModel = Model<TransactionDoc>;

export function transactionModel(connection: Connection): TransactionModel {
  return (
    (connection.models.PaymentTransaction as TransactionModel | undefined) ??
    connection.model<TransactionDoc>('PaymentTransaction', transactionSchema, 'payment_transactions')
  );
}
