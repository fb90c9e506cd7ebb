import type { EventEnvelope } from '@parametric/events';
import { writeErrorsOf } from '@parametric/mongo';
import { type Batched, batchesOf } from '@parametric/queue';
import { deliveryRowOf } from '../deliveries/domain';
import type { DeliveryModel } from '../deliveries/model';
import type { AttemptRow, Deliverer } from './deliverer';
import type { EndpointSource } from './endpoints';
import type { DeliveryMetrics } from './metrics';

/** Events taken together into one batch at most (one insert, one read of uncached endpoints). */
export const MAX_EVENT_BATCH = 100;
/** How long the first event of a batch waits for others (jobs arrive one fetch at a time). */
const BATCH_WINDOW_MS = 2;

type Pending = Batched<EventEnvelope, void>;

/**
 * Turns events from the `events` queue into their delivery rows (id = event id) and first
 * attempts. Events handled at the same time (the worker runs many jobs at once) are taken
 * as one batch: their organizations' endpoints (cached, the rest read with one query), one
 * unordered `insertMany`.
 * Each event's job finishes when its first attempt is recorded (or handed to the delayed
 * queue), so a worker that dies mid-attempt leaves the job to be taken again.
 *
 * The same event arriving twice (the relay is at-least-once) finds its row already there
 * (duplicate key): no second row; if the row is still waiting for its first attempt (the
 * first copy's worker died) the attempt is made. An organization without a webhook URL gets a
 * row waiting for one (`WAITING_FOR_URL`): it shows in its log, and its first URL starts it.
 */
export function createEventConsumer(deps: {
  deliveries: DeliveryModel;
  endpoints: EndpointSource;
  deliverer: Pick<Deliverer, 'first'>;
  maxBatch?: number;
  /** Counts `skipped` for each row recorded without an endpoint (duplicates are not recorded again). */
  metrics?: DeliveryMetrics;
  /**
   * The endpoints as MongoDB holds them now, uncached: read again after rows were recorded as
   * waiting, since a URL set meanwhile released what waited before those rows existed.
   */
  storedEndpoints: (organizationIds: string[]) => Promise<Map<string, unknown>>;
  /** Starts an organization's waiting deliveries (`releaseWaiting`, deliveries/domain.ts). */
  releaseWaiting: (organizationId: string) => Promise<number>;
}) {
  /**
   * A URL set between the endpoints' read above and the insert released the rows that waited
   * then, not these: the stored endpoints, read after the insert, say whether to start them now.
   * Failing here fails nothing: the rows are recorded, and the reconciler releases them.
   */
  async function releaseIfSetMeanwhile(organizationIds: string[]): Promise<void> {
    try {
      const stored = await deps.storedEndpoints(organizationIds);
      await Promise.all(organizationIds.filter((id) => stored.has(id)).map((id) => deps.releaseWaiting(id)));
    } catch {
      // Left to the reconciler's next pass (delivery/reconciler.ts, `releaseWaiting`).
    }
  }

  async function handle(batch: Pending[]): Promise<void> {
    // Two copies of one event in one batch share its outcome.
    const byId = new Map<string, Pending[]>();
    for (const item of batch) {
      const copies = byId.get(item.item.id);
      if (copies) copies.push(item);
      else byId.set(item.item.id, [item]);
    }
    const settle = (id: string, outcome: Promise<void>) =>
      outcome.then(
        () => {
          for (const c of byId.get(id) ?? []) c.resolve();
        },
        (err: unknown) => {
          for (const c of byId.get(id) ?? []) c.reject(err);
        },
      );

    try {
      const events = [...byId.values()].map((copies) => (copies[0] as Pending).item);
      const endpoints = await deps.endpoints.getMany([...new Set(events.map((e) => e.organizationId))]);
      const createdAt = new Date();
      const rows = events.map((event) =>
        deliveryRowOf(event, endpoints.get(event.organizationId)?.url ?? null, createdAt),
      );

      const failed = new Map<string, unknown>();
      const duplicates: string[] = [];
      try {
        await deps.deliveries.collection.insertMany(rows as never[], { ordered: false });
      } catch (err) {
        const writeErrors = writeErrorsOf(err);
        if (!writeErrors) throw err;
        for (const w of writeErrors.values()) {
          const id = (rows[w.index] as (typeof rows)[number])._id;
          if (w.code === 11000) duplicates.push(id);
          else failed.set(id, err);
        }
      }
      const duplicate = new Set(duplicates);

      const waiting: Array<(typeof rows)[number]> = [];
      for (const row of rows) {
        if (failed.has(row._id)) settle(row._id, Promise.reject(failed.get(row._id)));
        else if (duplicate.has(row._id)) continue;
        else if (row.nextAttemptAt === null) {
          // Inserted just now waiting for a URL: no request (the first attempt skipped).
          deps.metrics?.outcome('skipped', 1);
          waiting.push(row);
        } else settle(row._id, deps.deliverer.first(row as AttemptRow));
      }
      if (waiting.length > 0) {
        // Their jobs end once the check is made, so a worker that dies before it leaves them to BullMQ.
        await releaseIfSetMeanwhile([...new Set(waiting.map((row) => row.organizationId))]);
        for (const row of waiting) settle(row._id, Promise.resolve());
      }

      if (duplicates.length > 0) {
        // Already recorded by an earlier copy: the stored row decides whether anything is left.
        const stored = (await deps.deliveries.collection
          .find({ _id: { $in: duplicates } } as never, { projection: { url: 0, lastError: 0 } })
          .toArray()) as unknown as Array<AttemptRow & { nextAttemptAt: Date | null }>;
        const found = new Map(stored.map((r) => [r._id, r]));
        for (const id of duplicates) {
          const row = found.get(id);
          // Still waiting for a URL: nothing to attempt (its URL will start it).
          if (row?.status === 'PENDING' && row.attempts === 0 && row.nextAttemptAt != null) {
            settle(id, deps.deliverer.first(row));
          } else {
            settle(id, Promise.resolve());
          }
        }
      }
    } catch (err) {
      // Nothing settled yet for these: their jobs fail and BullMQ retries them.
      for (const item of batch) item.reject(err);
    }
  }

  return batchesOf<EventEnvelope, void>(
    { maxBatch: deps.maxBatch ?? MAX_EVENT_BATCH, windowMs: BATCH_WINDOW_MS },
    (batch) => void handle(batch),
  );
}
