import { writeErrorsOf } from '@parametric/mongo';
import { type Connection, type InferSchemaType, type Model, Schema } from 'mongoose';

/** How one attempt ended: a `2xx` answer, a failure (any other status, no answer, refused), or no URL to send to. */
export const ATTEMPT_OUTCOMES = ['DELIVERED', 'FAILED', 'SKIPPED'] as const;

/**
 * The attempt ledger (docs/webhooks.md, "Retries and the delivery log"): one row per attempt
 * at a delivery, kept after a manual retry starts a new cycle. Append-only: a row is inserted
 * once and never updated, so what a partner's endpoint answered at 10:02 still reads the same
 * after the delivery succeeded at 10:30. `_id` is `{deliveryId}_{cycle}_{attempt}`
 * (`attemptIdOf`): recording the same attempt again (a job re-run after a crash) is a
 * duplicate key, not a second row.
 */
const attemptSchema = new Schema(
  {
    _id: { type: String, required: true },
    deliveryId: { type: String, required: true },
    organizationId: { type: String, required: true },
    /** The manual-retry cycle: 0 for the automatic attempts after the event, +1 per manual retry. */
    cycle: { type: Number, required: true },
    /** 1 to the maximum (5), within its cycle. */
    attempt: { type: Number, required: true },
    attemptedAt: { type: Date, required: true },
    /** Where it was sent; null when no URL was configured (nothing sent). */
    url: { type: String, default: null },
    responseStatus: { type: Number, default: null },
    /** Why it failed, as the delivery row's `lastError` says it (never a secret or a header). */
    error: { type: String, default: null },
    durationMs: { type: Number, required: true },
    outcome: { type: String, required: true, enum: ATTEMPT_OUTCOMES },
  },
  { versionKey: false },
);
// Serves a delivery's history, oldest first (GET /organizations/me/webhook/deliveries/{id}).
attemptSchema.index({ deliveryId: 1, attemptedAt: 1 });

export type AttemptDoc = InferSchemaType<typeof attemptSchema> & { _id: string };
export type AttemptModel = Model<AttemptDoc>;
/** An attempt as recorded (the ledger row, and the delivery row's `lastAttempt`). */
export type AttemptRecord = Omit<AttemptDoc, 'outcome'> & { outcome: (typeof ATTEMPT_OUTCOMES)[number] };

export function attemptModel(connection: Connection): AttemptModel {
  return (
    (connection.models.WebhookDeliveryAttempt as AttemptModel | undefined) ??
    connection.model<AttemptDoc>('WebhookDeliveryAttempt', attemptSchema, 'webhook_delivery_attempts')
  );
}

export function attemptIdOf(a: { deliveryId: string; cycle: number; attempt: number }): string {
  return `${a.deliveryId}_${a.cycle}_${a.attempt}`;
}

/** One attempt as partners read it in `attemptHistory`. */
export function attemptView(a: AttemptRecord) {
  return {
    attempt: a.attempt,
    cycle: a.cycle,
    attemptedAt: a.attemptedAt.toISOString(),
    url: a.url ?? null,
    responseStatus: a.responseStatus ?? null,
    error: a.error ?? null,
    durationMs: a.durationMs,
  };
}

/** MongoDB's duplicate-key code: the attempt is already in the ledger. */
const DUPLICATE_KEY = 11000;

/** How long an attempt waits for others to share its insert (successful deliveries come in bursts). */
const LEDGER_WINDOW_MS = 2;

/**
 * Writes attempts to the ledger, idempotently: inserts with the deterministic `_id`, a
 * duplicate key counting as done. Attempts recorded within a couple of milliseconds share one
 * unordered insert (successful deliveries come in bursts).
 */
export function createAttemptLedger(model: AttemptModel) {
  let queued: Array<{ record: AttemptRecord; resolve: () => void; reject: (err: unknown) => void }> = [];

  function flush(): void {
    const batch = queued;
    queued = [];
    // Two copies of one attempt in a batch (a backfill racing the write): one insert.
    const unique = [...new Map(batch.map((b) => [b.record._id, b.record])).values()];
    model.collection.insertMany(unique as never[], { ordered: false }).then(
      () => {
        for (const b of batch) b.resolve();
      },
      (err: unknown) => {
        // Duplicate keys are attempts already recorded; any other failure fails the records
        // it concerns (all of them when the error does not say which).
        const writeErrors = writeErrorsOf(err);
        const failed = new Set<string>();
        if (writeErrors === undefined) for (const r of unique) failed.add(r._id);
        else
          for (const w of writeErrors.values())
            if (w.code !== DUPLICATE_KEY) failed.add((unique[w.index] as AttemptRecord)._id);
        for (const b of batch) failed.has(b.record._id) ? b.reject(err) : b.resolve();
      },
    );
  }

  return {
    /** Resolves once the attempt is in the ledger (written now or before); rejects if it could not be written. */
    record(record: AttemptRecord): Promise<void> {
      return new Promise<void>((resolve, reject) => {
        queued.push({ record, resolve, reject });
        if (queued.length === 1) setTimeout(flush, LEDGER_WINDOW_MS);
      });
    },
  };
}

export type AttemptLedger = ReturnType<typeof createAttemptLedger>;
