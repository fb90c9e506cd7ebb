import { randomUUID } from 'node:crypto';
import { currentCarrier, type TraceCarrier } from '@parametric/tracing';
import { z } from 'zod';
import { EVENT_CATALOG, EVENT_NAMES, type EventData, type EventName } from './catalog';

/**
 * What travels from the outbox through the `events` queue to the webhooks service. The
 * partner receives `{ id, event, createdAt, data }`; `organizationId` tells the webhooks
 * service whose endpoint to call. `id` is the delivery id partners de-duplicate on, so it is
 * fixed when the event is created and never regenerated on a retry.
 */
export type EventEnvelope<N extends EventName = EventName> = {
  [K in N]: {
    id: string;
    event: K;
    /** ISO 8601; a string because the envelope is stored and sent exactly as created. */
    createdAt: string;
    organizationId: string;
    data: EventData<K>;
    /**
     * The trace of the request (or job) that created the event: stored with the outbox entry
     * and carried on the `events` job, so the delivery continues that trace. Internal only:
     * never part of what the partner receives (the webhooks service builds the body from
     * `id`, `event`, `createdAt` and `data`).
     */
    trace?: TraceCarrier;
  };
}[N];

/** A stored carrier: a `traceparent`-sized string and a request id, nothing else. */
const traceCarrierSchema = z.strictObject({
  traceparent: z.string().max(64),
  requestId: z.string().max(64).optional(),
});

function envelopeSchemaFor<N extends EventName>(event: N) {
  return z.strictObject({
    id: z.uuid(),
    event: z.literal(event),
    createdAt: z.iso.datetime({ offset: true }),
    organizationId: z.uuid(),
    data: EVENT_CATALOG[event],
    trace: traceCarrierSchema.optional(),
  });
}

type VariantSchema = ReturnType<typeof envelopeSchemaFor<EventName>>;

// One variant per catalog entry, so `data` is checked against the schema of the named event
// (not just "an object") and a name outside the catalog matches no variant at all.
const variants = EVENT_NAMES.map((event) => envelopeSchemaFor(event)) as [VariantSchema, ...VariantSchema[]];

export const eventEnvelopeSchema: z.ZodType<EventEnvelope> = z.discriminatedUnion(
  'event',
  variants,
) as unknown as z.ZodType<EventEnvelope>;

/**
 * A new, validated event. Throws a ZodError when `data` does not match the event's schema
 * (the type already rejects it at compile time; this catches `any` and casts).
 */
export function createEvent<N extends EventName>(
  event: N,
  organizationId: string,
  data: EventData<N>,
): EventEnvelope<N> {
  const trace = currentCarrier();
  const envelope = eventEnvelopeSchema.parse({
    id: randomUUID(),
    event,
    createdAt: new Date().toISOString(),
    organizationId,
    data,
    ...(trace ? { trace } : {}),
  });
  return envelope as EventEnvelope<N>;
}
