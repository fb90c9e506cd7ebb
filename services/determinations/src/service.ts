import { OPS_ROUTES, PARTNER_ROUTES } from '@parametric/contracts';
import { startOutboxRelay } from '@parametric/events';
import {
  answerOptions,
  createApp,
  finishApp,
  healthRoutes,
  listen,
  MAX_OPS_BODY_BYTES,
  metricsRoutes,
  mountRoutes,
  organizationOf,
  requireInternalContext,
  requireOpsContext,
} from '@parametric/http';
import type { Logger } from '@parametric/logger';
import { createMetrics } from '@parametric/metrics';
import { connectMongo, pingMongo } from '@parametric/mongo';
import { policyLookup } from '@parametric/policy-client';
import {
  createProducer,
  createQueueStats,
  type QueueName,
  type QueueWorker,
  startJobOutboxRelay,
} from '@parametric/queue';
import { type Express, Router } from 'express';
import { type Clock, systemClock } from './clock';
import type { DeterminationsConfig } from './config';
import type { OpsContext, PartnerContext } from './context';
import { determinationRoutes } from './determinations/routes';
import type { IngestDeps } from './ingestion/domain';
import { ingestionOpsRoutes } from './ingestion/ops-routes';
import { startIngestWorker } from './ingestion/worker';
import { JWKS_MAX_AGE_SECONDS, jwksRoutes } from './jwks/routes';
import { determinationMetrics } from './metrics';
import { startOverdueSweep } from './overdue/sweep';
import { determinationRepositories } from './repositories';
import { loadSigningKeys } from './signing/keys';

export interface RunningDeterminations {
  url: string;
  /** The express app (tests list the routes it mounts). */
  app: Express;
  /** The published key set (tests and the benchmark verify with it). */
  jwks: { keys: object[] };
  /** Moves recorded events and jobs to their queues now and waits (tests, shutdown). */
  drainOutbox(): Promise<void>;
  /** Graceful shutdown: HTTP server, then workers, relays and producers, then MongoDB. */
  stop(): Promise<void>;
}

/**
 * The determinations service behind the gateway: ingestion (ops doors and the
 * `determination-ingest` queue), signed records, partner reads, Tier 1 settlement reports, the
 * overdue sweep, and the jobs it sends other services (policy summaries, Tier 2 payouts).
 */
export async function startDeterminations(
  config: DeterminationsConfig,
  logger: Logger,
  clock: Clock = systemClock,
): Promise<RunningDeterminations> {
  // Before anything connects: a bad key is a configuration error, not a half-started service.
  const keys = loadSigningKeys(config.DETERMINATION_SIGNING_KEYS);
  const connection = await connectMongo({ url: config.MONGO_URL, dbName: config.MONGO_DB, logger });
  const repositories = determinationRepositories(connection);
  await repositories.init();
  // Ingestion, the sweep and the relays work across organizations by design.
  const data = repositories.acrossOrganizations();

  // `GET /metrics` on this internal port, unauthenticated like `/readyz` (docs/ops.md, Metrics):
  // the HTTP histogram, the queues this service produces to or consumes from, node's metrics,
  // and the domain metrics (outbox, determinations, settlement reports), all registered now.
  const metrics = createMetrics('determinations');
  metrics.observeOutboxes([data.determinations]);
  const counted = determinationMetrics(metrics, data.determinations);

  const queueOptions = {
    connection: config.REDIS_URL,
    prefix: config.REDIS_PREFIX,
    onError: (err: Error) => logger.warn({ err: err.message }, 'queue producer: Redis error'),
  };
  const events = createProducer('events', queueOptions);
  const summaries = createProducer('policy-summaries', queueOptions);
  const payouts = createProducer('payout-originations', queueOptions);
  const sweeps = createProducer('determination-sweeps', queueOptions);
  const relayOptions = { model: data.determinations, intervalMs: config.OUTBOX_POLL_MS, logger };
  const eventRelay = startOutboxRelay({
    ...relayOptions,
    producer: metrics.relayLag(data.determinations.collection.collectionName, events),
  });
  const jobRelay = startJobOutboxRelay({
    ...relayOptions,
    producers: { 'policy-summaries': summaries, 'payout-originations': payouts },
  });
  const onRecorded = () => {
    eventRelay.kick();
    jobRelay.kick();
  };
  // Whatever a previous run recorded but did not send goes out now.
  onRecorded();

  const ingest: IngestDeps = {
    data,
    lookupPolicy: policyLookup({
      policyUrl: config.POLICY_URL,
      signingSecret: config.INTERNAL_SIGNING_SECRET,
      timeoutMs: config.POLICY_TIMEOUT_MS,
    }),
    keys,
    reportDueSeconds: config.DETERMINATION_REPORT_DUE_SECONDS,
    now: clock,
    metrics: counted,
  };

  const workers: QueueWorker<QueueName>[] = [];
  if (config.RUN_WORKERS) {
    workers.push(
      startIngestWorker({
        ingest,
        connection: config.REDIS_URL,
        prefix: config.REDIS_PREFIX,
        concurrency: config.INGEST_CONCURRENCY,
        retryDelayMs: 30_000,
        logger,
        onRecorded,
      }) as unknown as QueueWorker<QueueName>,
      (await startOverdueSweep({
        data,
        sweeps,
        connection: config.REDIS_URL,
        prefix: config.REDIS_PREFIX,
        intervalMs: config.DETERMINATION_OVERDUE_SWEEP_SECONDS * 1000,
        logger,
        clock,
        onMarked: onRecorded,
      })) as unknown as QueueWorker<QueueName>,
    );
  }

  // Internal only (behind the gateway, which limits partner bodies to 1 MiB); the ops batch
  // door takes up to 1,000 assessments in one body.
  const queueStats = createQueueStats(
    ['events', 'policy-summaries', 'payout-originations', 'determination-sweeps', 'determination-ingest'],
    {
      connection: config.REDIS_URL,
      prefix: config.REDIS_PREFIX,
    },
  );
  metrics.observeQueues(queueStats);
  const app = createApp(logger, {
    maxBodyBytes: MAX_OPS_BODY_BYTES,
    // Partner reads and the ops batch door share this app; partners meet the gateway's deadline first.
    deadlineMs: config.OPS_REQUEST_DEADLINE_MS,
    metrics: metrics.http,
  });
  app.use(healthRoutes({ mongo: () => pingMongo(connection) }));
  app.use(metricsRoutes(metrics.handler));
  // Public: anyone holding a determination verifies it with these keys (no context needed).
  app.use('/api/.well-known', (_req, res, next) => {
    res.setHeader('Cache-Control', `public, max-age=${JWKS_MAX_AGE_SECONDS}`);
    next();
  });
  app.use(
    '/api',
    mountRoutes(Router(), jwksRoutes(keys), () => undefined),
  );
  app.use(
    '/api',
    requireInternalContext(config.INTERNAL_SIGNING_SECRET),
    answerOptions(PARTNER_ROUTES.determinations),
    mountRoutes<PartnerContext>(Router(), determinationRoutes(onRecorded, counted.reportRecorded), (req) => ({
      tenant: repositories.forOrganization(organizationOf(req)),
      role: req.context?.role ?? '',
      now: clock,
    })),
  );
  const opsContext: OpsContext = {
    data,
    ingest,
    batchConcurrency: config.INGEST_CONCURRENCY,
    onUnexpected: (err, index) => logger.error({ err, index }, 'batch item failed unexpectedly'),
    onRecorded,
  };
  app.use(
    '/ops',
    requireOpsContext(config.INTERNAL_SIGNING_SECRET),
    answerOptions(OPS_ROUTES.determinations),
    mountRoutes(Router(), ingestionOpsRoutes, () => opsContext),
  );
  finishApp(app, logger);
  const http = await listen(app, config.DETERMINATIONS_PORT, config.DETERMINATIONS_HOST);

  let stopped: Promise<void> | undefined;
  return {
    url: http.url,
    app,
    jwks: keys.jwks,
    drainOutbox: async () => {
      await Promise.all([eventRelay.drain(), jobRelay.drain()]);
    },
    stop: () => {
      stopped ??= (async () => {
        await http.close();
        await queueStats.close();
        await Promise.all(workers.map((w) => w.close()));
        await Promise.all([eventRelay.stop(), jobRelay.stop()]);
        await Promise.all([events.close(), summaries.close(), payouts.close(), sweeps.close()]);
        await connection.close();
      })();
      return stopped;
    },
  };
}
