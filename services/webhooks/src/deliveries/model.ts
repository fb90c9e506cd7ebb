import { DELIVERY_STATUSES, isoOrNull } from '@parametric/contracts';
import { type Connection, type InferSchemaType, type Model, Schema } from 'mongoose';

export { DELIVERY_STATUSES };
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/**
 * One row per event (`_id` is the event id, which is also `body.id` and the
 * `x-service-delivery` header): a duplicate event can never become a second delivery.
 * `body` keeps the exact JSON sent, so every retry signs and sends the same bytes.
 */
const deliverySchema = new Schema(
  {
    _id: { type: String, required: true },
    organizationId: { type: String, required: true },
    event: { type: String, required: true },
    body: { type: String, required: true },
    url: { type: String, default: null },
    status: { type: String, required: true, enum: DELIVERY_STATUSES },
    attempts: { type: Number, required: true, default: 0 },
    /** Bumped by each manual retry; jobs carry it, so a stale job does nothing. */
    cycle: { type: Number, required: true, default: 0 },
    responseStatus: { type: Number, default: null },
    lastError: { type: String, default: null },
    deliveredAt: { type: Date, default: null },
    /** When the next attempt is due (PENDING only); the reconciler's clock. */
    nextAttemptAt: { type: Date, default: null },
    /**
     * The trace of the request that caused the event (`{ traceparent, requestId }`): each
     * attempt continues it and sends a `traceparent` header. Internal, never shown to partners.
     */
    trace: { type: Schema.Types.Mixed, default: undefined },
    /**
     * The last counted attempt, as the attempt ledger records it (`AttemptRecord`), written by
     * the same conditional update that counts it: the ledger's copy of it may lag (see the
     * deliverer), this one cannot. Internal; the delivery view shows the ledger's history.
     */
    lastAttempt: { type: Schema.Types.Mixed, default: undefined },
    /** A test event (`POST /organizations/me/webhook/test`): shown as such in the log. */
    test: { type: Boolean, default: undefined },
  },
  { timestamps: true, versionKey: false },
);
// Serves the delivery log: an organization's rows, optionally by status, newest first.
deliverySchema.index({ organizationId: 1, status: 1, createdAt: -1 });
deliverySchema.index({ organizationId: 1, createdAt: -1 });
// Serves the reconciler's two reads: PENDING rows whose next attempt is overdue (the first two
// keys), and rows still waiting for a URL (PENDING, no attempt due) recorded before its grace
// (all three: delivery/reconciler.ts `forgottenFilter`), so a pass reads the waiting rows
// rather than the whole log. It replaces `{ status: 1, nextAttemptAt: 1 }`, its prefix.
deliverySchema.index({ status: 1, nextAttemptAt: 1, createdAt: 1 });

export type DeliveryDoc = InferSchemaType<typeof deliverySchema> & { _id: string };
export type DeliveryModel = Model<DeliveryDoc>;

export function deliveryModel(connection: Connection): DeliveryModel {
  return (
    (connection.models.WebhookDelivery as DeliveryModel | undefined) ??
    connection.model<DeliveryDoc>('WebhookDelivery', deliverySchema, 'webhook_deliveries')
  );
}

/**
 * A delivery log row as partners read it (docs/webhooks.md, "Retries and the delivery log"); the
 * stored payload is never returned.
 */
export function deliveryView(row: DeliveryDoc) {
  return {
    id: row._id,
    event: row.event,
    url: row.url ?? null,
    status: row.status,
    attempts: row.attempts,
    responseStatus: row.responseStatus ?? null,
    lastError: row.lastError ?? null,
    deliveredAt: isoOrNull(row.deliveredAt),
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
    ...(row.test === true ? { test: true as const } : {}),
  };
}
