import { randomUUID } from 'node:crypto';
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
  };
}[N];

function envelopeSchemaFor<N extends EventName>(event: N) {
  return z.strictObject({
    id: z.uuid(),
    event: z.literal(event),
    createdAt: z.iso.datetime({ offset: true }),
    organizationId: z.uuid(),
    data: EVENT_CATALOG[event],
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
  const envelope = eventEnvelopeSchema.parse({
    id: randomUUID(),
    event,
    createdAt: new Date().toISOString(),
    organizationId,
    data,
  });
  return envelope as EventEnvelope<N>;
}
