import { EVENT_NAMES } from '@parametric/events';
import { defineRoute, MAX_PAGE_LIMIT } from '@parametric/http';
import { z } from 'zod';
import { idParams, pageQuery, timestamp } from './common';

export const DELIVERY_STATUSES = ['PENDING', 'DELIVERED', 'FAILED'] as const;

export const webhookConfigSchema = z
  .object({
    url: z.string().nullable().meta({ description: 'null until a URL is configured' }),
    secretSet: z.boolean(),
    secret: z
      .string()
      .nullable()
      .meta({ description: 'The plaintext signing secret (`whsec_…`); null until a URL is configured' }),
  })
  .meta({ id: 'WebhookConfig', description: 'The webhook URL and whether a signing secret is set' });

export const deliverySchema = z
  .object({
    id: z.uuid().meta({ description: 'Equals `body.id` of the event and the `x-service-delivery` header' }),
    event: z.string(),
    url: z.string().nullable(),
    status: z.enum(DELIVERY_STATUSES),
    attempts: z.number().int().min(0),
    responseStatus: z.number().int().nullable(),
    lastError: z.string().nullable(),
    deliveredAt: timestamp.nullable(),
    createdAt: timestamp,
    updatedAt: timestamp,
    test: z.literal(true).optional().meta({
      description:
        'Present, and true, only on a test event sent by `POST /organizations/me/webhook/test`; its data refers to nothing real',
    }),
  })
  .meta({
    id: 'WebhookDelivery',
    description: 'A delivery log row; the event payload is not returned.',
  });

export const deliveryAttemptSchema = z
  .object({
    attempt: z
      .number()
      .int()
      .min(1)
      .meta({ description: 'The attempt number within its cycle, from 1 to 5' }),
    cycle: z.number().int().min(0).meta({
      description:
        '0 for the automatic attempts that followed the event; each manual retry starts the next cycle, numbering its attempts from 1 again',
    }),
    attemptedAt: timestamp.meta({ description: 'When the request was started (signed at that moment)' }),
    url: z.string().nullable().meta({ description: 'Where it was sent; null when no webhook URL was set' }),
    responseStatus: z
      .number()
      .int()
      .nullable()
      .meta({ description: 'The HTTP status your endpoint answered, or null (no answer)' }),
    error: z.string().nullable().meta({
      description:
        'Why the attempt failed (`HTTP 500`, a timeout, a refused connection…), or null when it succeeded',
    }),
    durationMs: z
      .number()
      .int()
      .min(0)
      .meta({ description: 'From the start of the request to the answer or the failure, in milliseconds' }),
  })
  .meta({
    id: 'WebhookDeliveryAttempt',
    description: 'One attempt at a delivery, as it happened; kept after later attempts and manual retries.',
  });

export const deliveryDetailSchema = deliverySchema
  .extend({
    attemptHistory: z.array(deliveryAttemptSchema).meta({
      description:
        'Every attempt made at this delivery, oldest first, those of earlier cycles (before a manual retry) included',
    }),
  })
  .meta({
    id: 'WebhookDeliveryDetail',
    description:
      'A delivery log row (the same fields as in the list) with the history of its attempts; the event payload is not returned.',
  });

export const webhookBody = z
  .strictObject({
    url: z.string({ error: 'must be a string' }).min(1, 'is required').max(2048),
  })
  .meta({ id: 'WebhookRequest', example: { url: 'https://partner.example.com/hooks/insurance' } });

export const deliveriesQuery = pageQuery.extend({
  status: z.enum(DELIVERY_STATUSES, { error: `must be one of ${DELIVERY_STATUSES.join(', ')}` }).optional(),
});

export const setWebhook = defineRoute({
  operationId: 'setWebhook',
  method: 'put',
  path: '/organizations/me/webhook',
  summary: 'Set the webhook URL',
  description:
    'The URL must be https and reach a public address. A signing secret is generated the first time a URL is set; changing the URL keeps it.',
  tags: ['Webhooks'],
  auth: 'partner',
  capability: 'webhook:manage',
  body: webhookBody,
  responses: { 200: { description: 'The configuration, with the secret', data: webhookConfigSchema } },
  errors: [],
});

export const getWebhook = defineRoute({
  operationId: 'getWebhook',
  method: 'get',
  path: '/organizations/me/webhook',
  summary: 'Read the webhook configuration',
  tags: ['Webhooks'],
  auth: 'partner',
  capability: 'webhook:manage',
  responses: { 200: { description: 'The configuration', data: webhookConfigSchema } },
  errors: [],
});

export const rotateWebhookSecret = defineRoute({
  operationId: 'rotateWebhookSecret',
  method: 'post',
  path: '/organizations/me/webhook/rotate-secret',
  summary: 'Rotate the signing secret',
  description: 'Returns the new secret once; deliveries signed with the old one stop verifying at once.',
  tags: ['Webhooks'],
  auth: 'partner',
  capability: 'webhook:manage',
  responses: {
    200: { description: 'The new secret', data: z.object({ secret: z.string() }) },
  },
  errors: [],
});

export const listDeliveries = defineRoute({
  operationId: 'listWebhookDeliveries',
  method: 'get',
  path: '/organizations/me/webhook/deliveries',
  summary: 'The delivery log',
  description: `Newest first. \`limit\` above ${MAX_PAGE_LIMIT} is served as ${MAX_PAGE_LIMIT}. Unlike other lists, \`data\` is an object.`,
  tags: ['Webhooks'],
  auth: 'partner',
  capability: 'webhook:manage',
  query: deliveriesQuery,
  responses: {
    200: {
      description: 'A page of the delivery log',
      data: z.object({
        deliveries: z.array(deliverySchema),
        total: z.number().int().min(0),
        page: z.number().int().min(1),
        limit: z.number().int().min(1).max(MAX_PAGE_LIMIT),
      }),
    },
  },
  errors: [],
});

export const getDelivery = defineRoute({
  operationId: 'getWebhookDelivery',
  method: 'get',
  path: '/organizations/me/webhook/deliveries/{id}',
  summary: 'One delivery, with its attempts',
  description:
    'The row of the delivery log (the same fields as in the list) plus `attemptHistory`: one entry per attempt, oldest first, with where it was sent, what your endpoint answered, why it failed and how long it took. A manual retry starts a new cycle; the attempts of earlier cycles stay in the history. `attempts` on the row counts the current cycle only. 404 for a delivery that is not yours.',
  tags: ['Webhooks'],
  auth: 'partner',
  capability: 'webhook:manage',
  params: idParams,
  responses: { 200: { description: 'The delivery and its attempts', data: deliveryDetailSchema } },
  errors: [],
});

export const retryDelivery = defineRoute({
  operationId: 'retryWebhookDelivery',
  method: 'post',
  path: '/organizations/me/webhook/deliveries/{id}/retry',
  summary: 'Retry a delivery',
  description:
    'Starts a new cycle of attempts with the same `body.id`, to the current URL with the current secret. 400 when no webhook URL is configured.',
  tags: ['Webhooks'],
  auth: 'partner',
  capability: 'webhook:manage',
  params: idParams,
  responses: { 200: { description: 'The row, PENDING again', data: deliverySchema } },
  errors: [],
});

export const testEventBody = z
  .strictObject({
    event: z.enum(EVENT_NAMES, { error: `must be one of ${EVENT_NAMES.join(', ')}` }),
  })
  .meta({ id: 'WebhookTestEventRequest', example: { event: 'determination.delivered' } });

export const sendTestEvent = defineRoute({
  operationId: 'sendWebhookTestEvent',
  method: 'post',
  path: '/organizations/me/webhook/test',
  summary: 'Send a test event',
  description:
    'Sends a signed example of the event to the configured URL, exactly as a real one is sent (headers, signature, retries), with a new `body.id` and data that refers to nothing real (ids that exist nowhere, `TEST-…` numbers and references). Recorded in the delivery log with `test: true`. Answers the delivery, `PENDING`; its outcome is in the log. 400 when no webhook URL is configured.',
  tags: ['Webhooks'],
  auth: 'partner',
  capability: 'webhook:manage',
  body: testEventBody,
  responses: { 202: { description: 'The test delivery, PENDING', data: deliverySchema } },
  errors: [],
});

export const WEBHOOK_ROUTES = [
  setWebhook,
  getWebhook,
  rotateWebhookSecret,
  listDeliveries,
  getDelivery,
  retryDelivery,
  sendTestEvent,
] as const;
