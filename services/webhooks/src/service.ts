import { PARTNER_ROUTES } from '@parametric/contracts';
import {
  answerOptions,
  createApp,
  finishApp,
  healthRoutes,
  listen,
  metricsRoutes,
  mountRoutes,
  organizationOf,
  requireInternalContext,
} from '@parametric/http';
import type { Logger } from '@parametric/logger';
import { createMetrics } from '@parametric/metrics';
import { connectMongo, pingMongo } from '@parametric/mongo';
import { createProducer, createQueueStats, createWorker, type QueueWorker } from '@parametric/queue';
import { connectFailFast } from '@parametric/redis';
import { type Express, Router } from 'express';
import type { WebhooksConfig } from './config';
import { createEventConsumer } from './delivery/consumer';
import { createDeliverer } from './delivery/deliverer';
import { createEndpointCache } from './delivery/endpoints';
import { deliveryMetrics } from './delivery/metrics';
import { startReconciler } from './delivery/reconciler';
import { createSender } from './delivery/send';
import { guardedLookup } from './delivery/target-guard';
import { webhookRepositories } from './repositories';
import { webhookRoutes } from './routes';

export interface RunningWebhooks {
  url: string;
  /** The express app (tests list the routes it mounts). */
  app: Express;
  /** One reconciler pass now; resolves to how many deliveries it re-enqueued. */
  reconcile(): Promise<number>;
  stop(): Promise<void>;
}

/** The webhooks service: its partner routes (behind the gateway), the event consumer, the delivery workers, the reconciler. */
export async function startWebhooks(config: WebhooksConfig, logger: Logger): Promise<RunningWebhooks> {
  const connection = await connectMongo({ url: config.MONGO_URL, dbName: config.MONGO_DB, logger });
  const repositories = webhookRepositories(connection);
  await repositories.init();
  // The consumer, deliverer and reconciler work for every organization by design.
  const { endpoints, deliveries, attempts } = repositories.acrossOrganizations();

  const policy = { allowInsecure: config.ALLOW_INSECURE_WEBHOOKS };
  const redis = {
    connection: config.REDIS_URL,
    prefix: config.REDIS_PREFIX,
    onError: (err: Error) => logger.warn({ err: err.message }, 'queue connection error'),
  };
  const producer = createProducer('webhook-deliveries', redis);
  const endpointCache = createEndpointCache({
    endpoints,
    publisher: await connectFailFast(config.REDIS_URL, logger, 'webhooks endpoint changes'),
    subscriber: await connectFailFast(config.REDIS_URL, logger, 'webhooks endpoint cache'),
    channel: `${config.REDIS_PREFIX ?? 'bull'}:webhooks:endpoint-changed`,
    maxAgeMs: config.ENDPOINT_CACHE_MS,
    logger,
  });
  const sender = createSender({
    timeoutMs: config.DELIVERY_TIMEOUT_MS,
    lookup: guardedLookup(policy),
    allowInsecure: policy.allowInsecure,
  });
  // `GET /metrics` on this internal port, unauthenticated like `/readyz` (docs/ops.md, Metrics):
  // the HTTP histogram, the queues this service produces to or consumes from, node's metrics,
  // and the delivery outcomes and latency (registered now, counted where each is recorded).
  const metrics = createMetrics('webhooks');
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

  const workers: Array<QueueWorker<'events'> | QueueWorker<'webhook-deliveries'>> = [];
  let reconciler: ReturnType<typeof startReconciler> | undefined;
  if (config.RUN_WORKERS) {
    const consume = createEventConsumer({
      deliveries,
      endpoints: endpointCache,
      deliverer,
      metrics: delivered,
    });
    workers.push(
      // Many events at once: the consumer takes those in hand as one batch, and each job
      // stays active until its first attempt is recorded (the gate bounds the requests).
      createWorker('events', (event) => consume(event), {
        ...redis,
        concurrency: config.EVENT_CONCURRENCY,
        lockDurationMs: config.WORKER_LOCK_MS,
      }),
      createWorker('webhook-deliveries', (job, bullJob, token) => deliverer.attempt(job, bullJob, token), {
        ...redis,
        concurrency: config.DELIVERY_CONCURRENCY,
        lockDurationMs: config.WORKER_LOCK_MS,
      }),
    );
    reconciler = startReconciler({
      deliveries,
      producer,
      logger,
      intervalMs: config.RECONCILE_INTERVAL_MS,
      graceMs: config.RECONCILE_GRACE_MS,
    });
  }

  const queueStats = createQueueStats(['events', 'webhook-deliveries'], {
    connection: config.REDIS_URL,
    prefix: config.REDIS_PREFIX,
  });
  metrics.observeQueues(queueStats);
  const app = createApp(logger, { deadlineMs: config.REQUEST_DEADLINE_MS, metrics: metrics.http });
  app.use(healthRoutes({ mongo: () => pingMongo(connection) }));
  app.use(metricsRoutes(metrics.handler));
  const keys = { secretKey: config.WEBHOOK_SECRET_KEY, allowInsecure: policy.allowInsecure };
  app.use(
    '/api',
    requireInternalContext(config.INTERNAL_SIGNING_SECRET),
    answerOptions(PARTNER_ROUTES.webhooks),
    mountRoutes(Router(), webhookRoutes, (req) => {
      const organizationId = organizationOf(req);
      return {
        tenant: repositories.forOrganization(organizationId),
        deliverer,
        keys,
        endpointChanged: () => endpointCache.changed(organizationId),
      };
    }),
  );
  finishApp(app, logger);
  const http = await listen(app, config.WEBHOOKS_PORT, config.WEBHOOKS_HOST);

  let stopped: Promise<void> | undefined;
  return {
    url: http.url,
    app,
    reconcile: () => reconciler?.runOnce() ?? Promise.resolve(0),
    stop: () => {
      stopped ??= (async () => {
        await http.close();
        await queueStats.close();
        await reconciler?.stop();
        await Promise.all(workers.map((w) => w.close()));
        await deliverer.close();
        await producer.close();
        await endpointCache.close();
        sender.close();
        await connection.close();
      })();
      return stopped;
    },
  };
}
