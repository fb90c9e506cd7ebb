import { AppError, organizationOf, route, sendData, uuidParam } from '@parametric/http';
import { scopedTo } from '@parametric/mongo';
import { Router } from 'express';
import { z } from 'zod';
import { DELIVERY_STATUSES, type DeliveryDoc, type DeliveryModel, deliveryView } from './deliveries/model';
import type { Deliverer } from './delivery/deliverer';
import { checkWebhookTarget } from './delivery/target-guard';
import type { EndpointDoc, EndpointModel } from './endpoints/model';
import { decryptSecret, encryptSecret, generateSigningSecret } from './endpoints/secret-box';

export interface RouteDeps {
  endpoints: EndpointModel;
  deliveries: DeliveryModel;
  deliverer: Deliverer;
  secretKey: string;
  allowInsecure: boolean;
}

const webhookBody = z.strictObject({
  url: z.string({ error: 'must be a string' }).min(1, 'is required').max(2048),
});

const deliveriesQuery = z.object({
  status: z.enum(DELIVERY_STATUSES, { error: `must be one of ${DELIVERY_STATUSES.join(', ')}` }).optional(),
  page: z.coerce.number().int().min(1).default(1),
  // The spec caps `limit` at 100: larger values are served as 100, not refused.
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .default(20)
    .transform((n) => Math.min(n, 100)),
});

const deliveryParams = z.object({ id: uuidParam });

/** `{ url, secretSet, secret }` (spec 2.9); the secret is shown to its organization only. */
function configView(endpoint: EndpointDoc | null, secretKey: string) {
  if (!endpoint) return { url: null, secretSet: false, secret: null };
  return { url: endpoint.url, secretSet: true, secret: decryptSecret(endpoint.secretSealed, secretKey) };
}

/** Partner routes (behind the gateway's signed context), spec section 4 "Webhooks". */
export function webhookRoutes(deps: RouteDeps): Router {
  const router = Router();

  router.put(
    '/organizations/me/webhook',
    route({ body: webhookBody }, async ({ body }, req, res) => {
      const organizationId = organizationOf(req);
      const check = await checkWebhookTarget(body.url, { allowInsecure: deps.allowInsecure });
      if (!check.ok) throw AppError.invalid('Invalid webhook URL', [{ field: 'url', message: check.reason }]);
      const url = check.url.toString();
      // The secret is generated once, with the first URL; changing the URL keeps it.
      const upsert = () =>
        deps.endpoints
          .findOneAndUpdate(
            { _id: organizationId },
            {
              $set: { url },
              $setOnInsert: { secretSealed: encryptSecret(generateSigningSecret(), deps.secretKey) },
            },
            { upsert: true, returnDocument: 'after' },
          )
          .lean<EndpointDoc>();
      // Two first-time PUTs racing: one insert wins, the other retries as an update.
      const endpoint = await upsert().catch((err) =>
        (err as { code?: number }).code === 11000 ? upsert() : Promise.reject(err),
      );
      sendData(res, configView(endpoint, deps.secretKey));
    }),
  );

  router.get('/organizations/me/webhook', async (req, res) => {
    const endpoint = await deps.endpoints.findById(organizationOf(req)).lean<EndpointDoc>();
    sendData(res, configView(endpoint, deps.secretKey));
  });

  router.post('/organizations/me/webhook/rotate-secret', async (req, res) => {
    const secret = generateSigningSecret();
    const rotated = await deps.endpoints.findOneAndUpdate(
      { _id: organizationOf(req) },
      { $set: { secretSealed: encryptSecret(secret, deps.secretKey), secretRotatedAt: new Date() } },
    );
    if (!rotated) throw AppError.invalid('No webhook URL is configured');
    sendData(res, { secret });
  });

  router.get(
    '/organizations/me/webhook/deliveries',
    route({ query: deliveriesQuery }, async ({ query }, req, res) => {
      const own = scopedTo(deps.deliveries, organizationOf(req));
      const filter = query.status ? { status: query.status } : {};
      const [rows, total] = await Promise.all([
        own
          .find(filter)
          .sort({ createdAt: -1, _id: -1 })
          .skip((query.page - 1) * query.limit)
          .limit(query.limit)
          .lean<DeliveryDoc[]>(),
        own.countDocuments(filter),
      ]);
      // The delivery log's own shape (spec 2.1): data is an object, not the paginated list envelope.
      sendData(res, { deliveries: rows.map(deliveryView), total, page: query.page, limit: query.limit });
    }),
  );

  router.post(
    '/organizations/me/webhook/deliveries/:id/retry',
    route({ params: deliveryParams }, async ({ params }, req, res) => {
      const organizationId = organizationOf(req);
      const own = scopedTo(deps.deliveries, organizationId);
      // Another organization's delivery is indistinguishable from a missing one.
      if (!(await own.exists({ _id: params.id }))) throw AppError.notFound('Delivery');
      const endpoint = await deps.endpoints.findById(organizationId).lean<EndpointDoc>();
      if (!endpoint) throw AppError.invalid('No webhook URL is configured');
      // A new cycle: five fresh attempts, same body.id, current URL and secret (read at send time).
      const row = await own.findOneAndUpdate(
        { _id: params.id },
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
      await deps.deliverer.schedule({ deliveryId: row._id, cycle: row.cycle, attempt: 1 }, 0);
      sendData(res, deliveryView(row));
    }),
  );
  return router;
}
