import { randomUUID } from 'node:crypto';
import { type EventEnvelope, type EventName, exampleData } from '@parametric/events';
import { AppError } from '@parametric/http';
import type { Deliverer } from '../delivery/deliverer';
import type { TenantWebhooks } from '../repositories';
import { type AttemptRecord, attemptView } from './attempts';
import { type DeliveryDoc, type DeliveryStatus, deliveryView } from './model';

/**
 * A delivery recorded while its organization had no webhook URL (docs/webhooks.md, "Events
 * before a URL is set"): `PENDING`, never attempted, no attempt due. It waits for the first URL,
 * which starts it (`releaseWaiting`), instead of being `FAILED` and lost unless retried by hand.
 */
export const WAITING_FOR_URL = { status: 'PENDING', attempts: 0, nextAttemptAt: null } as const;
export const WAITING_FOR_URL_ERROR = 'No webhook URL configured yet: delivered once one is set';

/**
 * The delivery row of an event, as first recorded: the one builder of new rows, for the event
 * consumer and for test events alike, so a field added to rows reaches both. `url` is the
 * organization's URL when the row is recorded; without one the row waits for it
 * (`WAITING_FOR_URL`). `recordedAt` is the row's `createdAt` and, with a URL, when its first
 * attempt is due.
 */
export function deliveryRowOf(
  event: EventEnvelope,
  url: string | null,
  recordedAt: Date,
  options: { test?: boolean } = {},
) {
  return {
    _id: event.id,
    organizationId: event.organizationId,
    event: event.event,
    // Serialised once: every attempt sends (and signs) exactly these bytes. Only these four
    // fields: the envelope's internal `trace` never reaches the partner.
    body: JSON.stringify({
      id: event.id,
      event: event.event,
      createdAt: event.createdAt,
      data: event.data,
    }),
    // The trace of the request that caused the event: every attempt continues it.
    ...(event.trace ? { trace: event.trace } : {}),
    url,
    status: 'PENDING' as const,
    attempts: 0,
    cycle: 0,
    responseStatus: null,
    lastError: url === null ? WAITING_FOR_URL_ERROR : null,
    deliveredAt: null,
    nextAttemptAt: url === null ? WAITING_FOR_URL.nextAttemptAt : recordedAt,
    ...(options.test ? { test: true } : {}),
    createdAt: recordedAt,
    updatedAt: recordedAt,
  };
}

export type NewDeliveryRow = ReturnType<typeof deliveryRowOf>;

/** How many waiting deliveries one read and one update release; a backlog goes page by page. */
export const RELEASE_PAGE = 500;

/**
 * Starts the organization's deliveries that waited for a URL, now that it has one: a page of
 * them is made due now by one conditional update (a row another release started meanwhile no
 * longer matches, so two releases racing count each row once) and their first attempts queued.
 * Answers how many it started. A crash or a Redis failure after the update leaves rows due and
 * unqueued, which the reconciler queues (delivery/reconciler.ts); a crash before it leaves them
 * waiting, which its next pass releases (`releaseForgotten`).
 */
export async function releaseWaiting(
  tenant: TenantWebhooks,
  deliverer: Pick<Deliverer, 'schedule'>,
  now: () => Date = () => new Date(),
): Promise<number> {
  let released = 0;
  for (;;) {
    const page = await tenant.deliveries
      .find(WAITING_FOR_URL)
      .select({ _id: 1, cycle: 1 })
      .limit(RELEASE_PAGE)
      .lean<Array<Pick<DeliveryDoc, '_id' | 'cycle'>>>();
    if (page.length === 0) return released;
    const ids = page.map((row) => row._id);
    const started = await tenant.deliveries.updateMany(
      { _id: { $in: ids }, ...WAITING_FOR_URL },
      { $set: { nextAttemptAt: now(), lastError: null } },
    );
    released += started.modifiedCount;
    let queued = page;
    if (started.modifiedCount < page.length) {
      // Another release took some of the page: the update does not say which, so every row of
      // the page now due and not yet attempted is queued. A row both queue is one job (its id
      // is the attempt's), and the attempt counts once however many jobs run it (deliverer.ts).
      queued = await tenant.deliveries
        .find({ _id: { $in: ids }, status: 'PENDING', attempts: 0, nextAttemptAt: { $ne: null } })
        .select({ _id: 1, cycle: 1 })
        .lean<Array<Pick<DeliveryDoc, '_id' | 'cycle'>>>();
    }
    await Promise.all(
      queued.map((row) => deliverer.schedule({ deliveryId: row._id, cycle: row.cycle, attempt: 1 }, 0)),
    );
  }
}

/**
 * A test event (docs/webhooks.md, "Test events"): a signed example of the event `name` sent to the
 * organization's URL exactly as a real one is (the deliverer's attempts, headers, signature and
 * retries), recorded in its log with `test: true`. The data is the catalog's example
 * (libs/events/src/examples.ts): the organization's own id where the event carries it, otherwise
 * ids that exist nowhere. No URL is `400`, as for a manual retry.
 */
export async function sendTestEvent(
  tenant: TenantWebhooks,
  name: EventName,
  deliverer: Pick<Deliverer, 'schedule'>,
  now: () => Date = () => new Date(),
) {
  const endpoint = await tenant.endpoint.get();
  if (!endpoint) throw AppError.invalid('No webhook URL is configured');
  const createdAt = now();
  const event = {
    id: randomUUID(),
    event: name,
    createdAt: createdAt.toISOString(),
    organizationId: tenant.organizationId,
    data: exampleData(tenant.organizationId)[name],
  } as EventEnvelope;
  const row = await tenant.deliveries.create(deliveryRowOf(event, endpoint.url, createdAt, { test: true }));
  // Queued like any attempt, so the per-organization gates and the reconciler apply to it too.
  await deliverer.schedule({ deliveryId: event.id, cycle: 0, attempt: 1 }, 0);
  return deliveryView(row.toObject() as DeliveryDoc);
}

/**
 * The delivery log (the envelope's one exception, docs/api.md "Envelopes": `data` is
 * `{ deliveries, total, page, limit }`).
 */
export async function listDeliveries(
  tenant: TenantWebhooks,
  query: { status?: DeliveryStatus; page: number; limit: number },
) {
  const filter = query.status ? { status: query.status } : {};
  const [rows, total] = await Promise.all([
    tenant.deliveries
      .find(filter)
      .sort({ createdAt: -1, _id: -1 })
      .skip((query.page - 1) * query.limit)
      .limit(query.limit)
      .lean<DeliveryDoc[]>(),
    tenant.deliveries.countDocuments(filter),
  ]);
  return { deliveries: rows.map(deliveryView), total, page: query.page, limit: query.limit };
}

/**
 * One delivery: its log row, plus every attempt made at it (`attemptHistory`, oldest first),
 * the cycles of earlier manual retries included. Another organization's delivery, or an
 * unknown id, is 404 NOT_FOUND.
 */
export async function getDelivery(tenant: TenantWebhooks, deliveryId: string) {
  // The ledger before the row: each ledger row was counted on the delivery row first, so the
  // row read second is at least as new, and its `lastAttempt` fills in the newest attempt if
  // its ledger write is late (or was lost to a crash, until the next attempt copies it).
  const recorded = await tenant.attempts
    .find({ deliveryId })
    .sort({ attemptedAt: 1, cycle: 1, attempt: 1 })
    .lean<AttemptRecord[]>();
  const row = await tenant.deliveries.findById(deliveryId).lean<DeliveryDoc>();
  if (!row) throw AppError.notFound('Delivery');
  const last = row.lastAttempt as AttemptRecord | null | undefined;
  const history = last && !recorded.some((a) => a._id === last._id) ? [...recorded, last] : recorded;
  return { ...deliveryView(row), attemptHistory: history.map(attemptView) };
}

/**
 * A new cycle of attempts for one of the organization's deliveries: five fresh attempts, the
 * same body.id, the current URL and secret (read at send time).
 */
export async function retryDelivery(tenant: TenantWebhooks, deliveryId: string, deliverer: Deliverer) {
  // Another organization's delivery is indistinguishable from a missing one.
  if (!(await tenant.deliveries.exists({ _id: deliveryId }))) throw AppError.notFound('Delivery');
  const endpoint = await tenant.endpoint.get();
  if (!endpoint) throw AppError.invalid('No webhook URL is configured');
  const row = await tenant.deliveries.findOneAndUpdate(
    { _id: deliveryId },
    {
      $set: {
        status: 'PENDING',
        attempts: 0,
        url: endpoint.url,
        lastError: null,
        responseStatus: null,
        deliveredAt: null,
        nextAttemptAt: new Date(),
      },
      $inc: { cycle: 1 },
    },
  );
  if (!row) throw AppError.notFound('Delivery');
  await deliverer.schedule({ deliveryId: row._id, cycle: row.cycle, attempt: 1 }, 0);
  return deliveryView(row);
}
