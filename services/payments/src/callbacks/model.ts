import { type Connection, type InferSchemaType, type Model, Schema } from 'mongoose';

/**
 * Every provider callback as received, whatever became of it: Daraja signs nothing, so this is
 * the record ops reconcile from (a forged token, an unknown CheckoutRequestID, a wrong amount).
 */
const callbackSchema = new Schema(
  {
    kind: {
      type: String,
      required: true,
      enum: ['STK', 'B2C_RESULT', 'B2C_TIMEOUT', 'STATUS_RESULT', 'STATUS_TIMEOUT'],
    },
    receivedAt: { type: Date, required: true },
    body: { type: Schema.Types.Mixed, required: true },
    outcome: { type: String, required: true },
    transactionId: { type: String, default: null },
    /** STK callbacks: the provider's id of the prompt, to match one that came before our record of it. */
    checkoutRequestId: { type: String, default: null },
  },
  { versionKey: false, minimize: false },
);
// Serves ops looking at what arrived for a transaction.
callbackSchema.index({ transactionId: 1, receivedAt: -1 });
// Serves matching a callback that arrived before the prompt's id was stored (`matchEarlyCallbacks`).
callbackSchema.index(
  { checkoutRequestId: 1 },
  { partialFilterExpression: { outcome: 'UNKNOWN_CHECKOUT' }, name: 'early_stk_callbacks' },
);

export type CallbackDoc = InferSchemaType<typeof callbackSchema>;
export type CallbackModel = Model<CallbackDoc>;

export function callbackModel(connection: Connection): CallbackModel {
  return (
    (connection.models.ProviderCallback as CallbackModel | undefined) ??
    connection.model<CallbackDoc>('ProviderCallback', callbackSchema, 'provider_callbacks')
  );
}
