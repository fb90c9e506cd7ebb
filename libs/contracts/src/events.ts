import { EVENT_CATALOG, EVENT_NAMES, type EventName } from '@parametric/events';
import { z } from 'zod';
import type { ZodOpenApiPathsObject } from 'zod-openapi';

const WHEN: Record<EventName, string> = {
  'policy.activated': 'A policy is paid and activated on chain.',
  'determination.delivered':
    'A signed determination is issued for one of your policies; once per determination. Not emitted when it cannot be attributed to a policy of yours.',
  'determination.settlement_report_recorded':
    'A new Tier 1 settlement report is recorded, corrections included (a replay emits nothing).',
  'determination.settlement_report_overdue':
    'A Tier 1 determination reaches its reporting due date with no report; at most once.',
  'payout.completed': 'A payout is delivered (Tier 2 only).',
  'payout.failed': 'A payout failed permanently after retries (Tier 2 only).',
  'kyb.verified': 'Your organization is verified.',
  'kyb.rejected': 'Your KYB submission is rejected.',
};

/** The five headers of every delivery (docs/webhooks.md, "What a delivery looks like"). */
const signatureHeaders = z.object({
  'x-service-event': z.string().meta({ description: 'The event type' }),
  'x-service-delivery': z
    .uuid()
    .meta({ description: 'The delivery id; equals `body.id`. De-duplicate on it.' }),
  'x-service-timestamp': z
    .string()
    .regex(/^\d+$/)
    .meta({ description: 'Unix seconds at signing; reject one more than 5 minutes from now' }),
  'x-service-signature': z
    .string()
    .regex(/^[0-9a-f]{64}$/)
    .meta({
      description:
        'HMAC-SHA256(secret, `{timestamp}.{rawBody}`) over the exact bytes received, lowercase hex; compare in constant time',
    }),
  'user-agent': z.literal('Service-Webhooks/1.0'),
});

function eventBody(event: EventName) {
  return z
    .object({
      id: z.uuid().meta({ description: 'The delivery id; the same on every retry' }),
      event: z.literal(event),
      createdAt: z.iso.datetime({ offset: true }),
      data: EVENT_CATALOG[event],
    })
    .meta({ id: `Event_${event.replace(/\./g, '_')}` });
}

/**
 * The `webhooks` section (OpenAPI 3.1): one entry per event of the catalog (libs/events), each a
 * signed POST of `{ id, event, createdAt, data }` to the organization's webhook URL.
 */
export function webhookEvents(): ZodOpenApiPathsObject {
  return Object.fromEntries(
    EVENT_NAMES.map((event) => [
      event,
      {
        post: {
          operationId: `event_${event.replace(/\./g, '_')}`,
          summary: event,
          description: `${WHEN[event]} Delivered at least once, in no guaranteed order; answer 2xx within 10 s. Failed deliveries are retried after about 30 s, 1, 2 and 4 min (5 attempts), then marked FAILED.`,
          tags: ['Events'],
          security: [{ webhookSignature: [] }],
          requestParams: { header: signatureHeaders },
          requestBody: { required: true, content: { 'application/json': { schema: eventBody(event) } } },
          responses: { '200': { description: 'Any 2xx marks the delivery DELIVERED' } },
        },
      },
    ]),
  );
}
