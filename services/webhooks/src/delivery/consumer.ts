import type { EventEnvelope } from '@parametric/events';
import { isDuplicateKey } from '@parametric/mongo';
import type { DeliveryModel } from '../deliveries/model';
import type { EndpointModel } from '../endpoints/model';
import type { Deliverer } from './deliverer';

/**
 * Turns an event from the `events` queue into its delivery row (id = event id) and the
 * first attempt. The same event arriving twice (the relay is at-least-once) finds its row
 * already there: no second delivery. An organization without a webhook URL gets a FAILED
 * row, so the event shows in its log and can be retried once a URL is set.
 */
export function createEventConsumer(deps: {
  deliveries: DeliveryModel;
  endpoints: EndpointModel;
  deliverer: Deliverer;
}) {
  return async (event: EventEnvelope): Promise<void> => {
    const endpoint = await deps.endpoints.findById(event.organizationId).lean();
    const body = JSON.stringify({
      id: event.id,
      event: event.event,
      createdAt: event.createdAt,
      data: event.data,
    });
    let created = true;
    try {
      await deps.deliveries.create({
        _id: event.id,
        organizationId: event.organizationId,
        event: event.event,
        body,
        url: endpoint?.url ?? null,
        status: endpoint ? 'PENDING' : 'FAILED',
        attempts: 0,
        cycle: 0,
        lastError: endpoint ? null : 'No webhook URL configured',
        nextAttemptAt: endpoint ? new Date() : null,
      });
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
      created = false;
    }
    // A duplicate re-schedules too, in case its first copy died before enqueueing: the job
    // id de-duplicates, and the row decides whether there is anything left to do.
    const row = created
      ? { _id: event.id, cycle: 0, status: endpoint ? 'PENDING' : 'FAILED', attempts: 0 }
      : await deps.deliveries.findById(event.id).lean();
    if (row?.status === 'PENDING' && row.attempts === 0) {
      await deps.deliverer.schedule({ deliveryId: row._id, cycle: row.cycle, attempt: 1 }, 0);
    }
  };
}
