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
  .meta({ id: 'WebhookConfig', description: 'Spec 2.9' });

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
  })
  .meta({
    id: 'WebhookDelivery',
    description: 'A delivery log row (spec 2.9); the event payload is not returned.',
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
  description: `Newest first. \`limit\` above ${MAX_PAGE_LIMIT} is served as ${MAX_PAGE_LIMIT}. Unlike other lists, \`data\` is an object (spec 2.1).`,
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

export const WEBHOOK_ROUTES = [
  setWebhook,
  getWebhook,
  rotateWebhookSecret,
  listDeliveries,
  retryDelivery,
] as const;
