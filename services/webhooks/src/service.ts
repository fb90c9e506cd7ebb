import type { Logger } from '@parametric/logger';
import { createWorker } from '@parametric/queue';
import { type ServiceDeclaration, startService } from '@parametric/runtime';
import type { Express } from 'express';
import type { WebhooksConfig } from './config';
import { releaseWaiting } from './deliveries/domain';
import { createEventConsumer } from './delivery/consumer';
import { createDeliverer } from './delivery/deliverer';
import { createEndpointCache, endpointReader } from './delivery/endpoints';
import { deliveryMetrics } from './delivery/metrics';
import { startReconciler } from './delivery/reconciler';
import { createSender } from './delivery/send';
import { guardedLookup } from './delivery/target-guard';
import { type WebhookRepositories, webhookModels, webhookRepositories } from './repositories';
import { type PartnerContext, webhookRoutes } from './routes';

export interface RunningWebhooks {
  url: string;
  /** The express app (tests list the routes it mounts). */
  app: Express;
  /** One reconciler pass now; resolves to how many deliveries it re-enqueued. */
  reconcile(): Promise<number>;
  stop(): Promise<void>;
}

/** The webhooks service: its partner routes (behind the gateway), the event consumer, the delivery workers, the reconciler. */
export const webhooksService: ServiceDeclaration<
  WebhooksConfig,
  WebhookRepositories,
  'webhook-deliveries',
  { reconcile(): Promise<number> },
  PartnerContext
> = {
  name: 'webhooks',
  repositories: webhookRepositories,
  models: webhookModels,
  produces: ['webhook-deliveries'],
  queueStats: ['events', 'webhook-deliveries'],
  async build({ config, logger, repositories, producers, metrics, queue, connectRedis }) {
    // The consumer, deliverer and reconciler work for every organization by design.
    const { endpoints, deliveries, attempts } = repositories.acrossOrganizations();
    const policy = { allowInsecure: config.ALLOW_INSECURE_WEBHOOKS };
    const producer = producers['webhook-deliveries'];
    const endpointCache = createEndpointCache({
      endpoints,
      publisher: await connectRedis('webhooks endpoint changes'),
      subscriber: await connectRedis('webhooks endpoint cache'),
      channel: `${config.REDIS_PREFIX ?? 'bull'}:webhooks:endpoint-changed`,
      maxAgeMs: config.ENDPOINT_CACHE_MS,
      logger,
    });
    const sender = createSender({
      timeoutMs: config.DELIVERY_TIMEOUT_MS,
      lookup: guardedLookup(policy),
      allowInsecure: policy.allowInsecure,
    });
    // The delivery outcomes and latency, registered now, counted where each is recorded.
    const delivered = deliveryMetrics(metrics);
    const deliverer = createDeliverer({
      deliveries,
      attempts,
      endpoints,
      sender,
      producer,
      logger,
      secretKey: config.WEBHOOK_SECRET_KEY,
      backoffMs: config.DELIVERY_BACKOFF_MS,
      maxAttempts: config.DELIVERY_MAX_ATTEMPTS,
      perOrganizationConcurrency: config.DELIVERY_CONCURRENCY_PER_ORG,
      concurrency: config.DELIVERY_CONCURRENCY,
      timeoutMs: config.DELIVERY_TIMEOUT_MS,
      endpointSource: endpointCache,
      metrics: delivered,
    });
    const keys = { secretKey: config.WEBHOOK_SECRET_KEY, allowInsecure: policy.allowInsecure };
    const redis = {
      ...queue,
      onError: (err: Error) => logger.warn({ err: err.message }, 'queue connection error'),
    };
    let reconciler: ReturnType<typeof startReconciler> | undefined;

    return {
      api: {
        port: config.WEBHOOKS_PORT,
        host: config.WEBHOOKS_HOST,
        partner: {
          routes: webhookRoutes,
          context: ({ organizationId }) => ({
            tenant: repositories.forOrganization(organizationId),
            deliverer,
            keys,
            endpointChanged: () => endpointCache.changed(organizationId),
          }),
        },
      },
      workers: () => {
        const waitingForUrl = {
          storedEndpoints: endpointReader(endpoints).readMany,
          releaseWaiting: (organizationId: string) =>
            releaseWaiting(repositories.forOrganization(organizationId), deliverer),
        };
        const consume = createEventConsumer({
          deliveries,
          endpoints: endpointCache,
          deliverer,
          metrics: delivered,
          ...waitingForUrl,
        });
        reconciler = startReconciler({
          deliveries,
          producer,
          logger,
          intervalMs: config.RECONCILE_INTERVAL_MS,
          graceMs: config.RECONCILE_GRACE_MS,
          ...waitingForUrl,
        });
        const started = reconciler;
        return [
          { close: () => started.stop() },
          // Many events at once: the consumer takes those in hand as one batch, and each job
          // stays active until its first attempt is recorded (the gate bounds the requests).
          createWorker('events', (event) => consume(event), {
            ...redis,
            concurrency: config.EVENT_CONCURRENCY,
            lockDurationMs: config.WORKER_LOCK_MS,
          }),
          createWorker(
            'webhook-deliveries',
            (job, bullJob, token) => deliverer.attempt(job, bullJob, token),
            {
              ...redis,
              concurrency: config.DELIVERY_CONCURRENCY,
              lockDurationMs: config.WORKER_LOCK_MS,
            },
          ),
        ];
      },
      // The deliverer waits for its attempts in flight; the cache drops its Redis subscriptions.
      close: [deliverer, endpointCache, sender],
      expose: { reconcile: () => reconciler?.runOnce() ?? Promise.resolve(0) },
    };
  },
};

export async function startWebhooks(config: WebhooksConfig, logger: Logger): Promise<RunningWebhooks> {
  const service = await startService(webhooksService, config, logger);
  const api = service.listener('api');
  return { url: api.url, app: api.app, reconcile: service.reconcile, stop: service.stop };
}
