import { createRegistryClient, redisSendLock } from '@parametric/chain';
import { OPS_ROUTES, PARTNER_ROUTES } from '@parametric/contracts';
import { startOutboxRelay } from '@parametric/events';
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
  requireOpsContext,
} from '@parametric/http';
import type { Logger } from '@parametric/logger';
import { createMetrics } from '@parametric/metrics';
import { connectMongo, pingMongo } from '@parametric/mongo';
import { createProducer, createQueueStats, type QueueWorker } from '@parametric/queue';
import { connectFailFast } from '@parametric/redis';
import { type Express, Router } from 'express';
import { type Clock, systemClock } from './clock';
import type { PolicyConfig } from './config';
import { type OpsContext, organizationSnapshotOf, type PartnerContext } from './context';
import { farmerOpsRoutes } from './farmers/ops-routes';
import { farmerRoutes } from './farmers/routes';
import { herdRoutes } from './herds/routes';
import { plotRoutes } from './plots/routes';
import { createActivator } from './policies/activation';
import { startActivationWorker } from './policies/activation-worker';
import { policyOpsRoutes } from './policies/ops-routes';
import { policyRoutes } from './policies/routes';
import { startSummaryWorker } from './policies/summaries-worker';
import { startSweeps } from './policies/sweeps';
import { policyRepositories } from './repositories';
import { underwritingOpsRoutes } from './underwriting/ops-routes';

/** Seconds: a local chain confirms in well under a second, a public one in tens of seconds. */
const CHAIN_ACTIVATION_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15, 30, 60, 120];

export interface RunningPolicy {
  url: string;
  /** The express app (tests list the routes it mounts). */
  app: Express;
  /** Moves recorded events (`policy.activated`) to the queue now and waits (tests, shutdown). */
  drainOutbox(): Promise<void>;
  /** Graceful shutdown: HTTP server, then workers, relay and producers, the chain client, MongoDB. */
  stop(): Promise<void>;
}

/**
 * The policy service behind the gateway: farmers, plots, herds, underwriting, purchase and
 * activation on chain; when RUN_WORKERS, the Tier 2 activation worker, the policy summaries
 * worker and the sweeps (expiry, lost activations, capacity after the claims window).
 */
export async function startPolicy(
  config: PolicyConfig,
  logger: Logger,
  clock: Clock = systemClock,
): Promise<RunningPolicy> {
  const connection = await connectMongo({ url: config.MONGO_URL, dbName: config.MONGO_DB, logger });
  const repositories = policyRepositories(connection);
  await repositories.init();
  // The relay, the activation worker and the sweeps work for every organization by design
  // (the summaries worker binds each job to the organization it names).
  const { policies } = repositories.acrossOrganizations();

  const queueOptions = {
    connection: config.REDIS_URL,
    prefix: config.REDIS_PREFIX,
    onError: (err: Error) => logger.warn({ err: err.message }, 'queue producer: Redis error'),
  };
  // `GET /metrics` on this internal port, unauthenticated like `/readyz` (docs/ops.md, Metrics):
  // the HTTP histogram, the queues this service produces to or consumes from, node's metrics,
  // and the domain metrics (outbox, chain breaker, activation duration), all registered now.
  const metrics = createMetrics('policy');
  metrics.observeOutboxes([policies]);
  const activationDuration = metrics.histogram(
    'chain_activation_duration_seconds',
    'Seconds from the start of a policy activation to its commit, its chain registration confirmed',
    [],
    CHAIN_ACTIVATION_BUCKETS,
  );
  const events = createProducer('events', queueOptions);
  const relay = startOutboxRelay({
    model: policies,
    producer: metrics.relayLag(policies.collection.collectionName, events),
    intervalMs: config.OUTBOX_POLL_MS,
    logger,
  });
  // Events left by a previous run (a crash between write and relay) go out now, not in a second.
  relay.kick();

  // Every replica sends from the registry owner's account: their sends take turns through a
  // lock in Redis, or two of them would pick the same nonce. Fails fast while Redis is away.
  const lockRedis = await connectFailFast(config.REDIS_URL, logger, 'chain-sender-lock');
  const sendLock = redisSendLock({
    redis: lockRedis,
    key: `${config.REDIS_PREFIX}:chain-sender:${config.CHAIN_REGISTRY_ADDRESS.toLowerCase()}`,
    // A send is two chain calls at most; a holder that died frees it after this.
    ttlMs: 3 * config.CHAIN_TIMEOUT_MS,
    waitMs: config.CHAIN_TIMEOUT_MS,
    onUnavailable: (err) =>
      logger.warn(
        { err: err.message },
        'chain sender lock unavailable (Redis): sending with the process lock only',
      ),
  });

  const registry = createRegistryClient({
    rpcUrl: config.CHAIN_RPC_URL,
    registryAddress: config.CHAIN_REGISTRY_ADDRESS,
    privateKey: config.CHAIN_PRIVATE_KEY,
    timeoutMs: config.CHAIN_TIMEOUT_MS,
    fromBlock: BigInt(config.CHAIN_REGISTRY_FROM_BLOCK),
    breaker: { resetTimeoutMs: config.CHAIN_BREAKER_RESET_MS },
    sendLock,
    onBreaker: (breaker) => metrics.observeBreaker('chain', breaker),
  });
  // Not awaited: a chain that is down at start-up is the breaker's business, not a crash.
  const registryChecked = registry
    .checkRegistry()
    .then((found) => {
      if (found !== 'ok') {
        logger.error(
          { registryAddress: config.CHAIN_REGISTRY_ADDRESS, found },
          'CHAIN_REGISTRY_ADDRESS holds no PolicyRegistry owned by CHAIN_PRIVATE_KEY: every activation will fail',
        );
      }
    })
    .catch((err) =>
      logger.warn({ err: err.message }, 'chain not reachable at start-up; activations wait for it'),
    );
  const activator = createActivator({
    registry,
    clock,
    onEventRecorded: () => relay.kick(),
    onActivated: (seconds) => activationDuration.observe(seconds),
  });

  const workers: QueueWorker<'policy-activations' | 'policy-sweeps' | 'policy-summaries'>[] = [];
  const activations = createProducer('policy-activations', queueOptions);
  const sweeps = createProducer('policy-sweeps', queueOptions);
  if (config.RUN_WORKERS) {
    workers.push(
      startActivationWorker({
        policies,
        activator,
        connection: config.REDIS_URL,
        prefix: config.REDIS_PREFIX,
        concurrency: config.ACTIVATION_CONCURRENCY,
        retryBaseMs: config.ACTIVATION_RETRY_BASE_MS,
        retryMaxMs: config.ACTIVATION_RETRY_MAX_MS,
        lockDurationMs: config.WORKER_LOCK_MS,
        logger,
        clock,
      }),
      startSummaryWorker({
        repositories,
        connection: config.REDIS_URL,
        prefix: config.REDIS_PREFIX,
        concurrency: config.SUMMARY_CONCURRENCY,
        logger,
      }),
      await startSweeps({
        policies,
        activations,
        sweeps,
        capacityOf: (organizationId) => repositories.forOrganization(organizationId),
        claimsWindowMs: config.CLAIMS_WINDOW_SECONDS * 1000,
        connection: config.REDIS_URL,
        prefix: config.REDIS_PREFIX,
        intervalMs: config.SWEEP_INTERVAL_MS,
        logger,
        clock,
      }),
    );
  }

  const queueStats = createQueueStats(['events', 'policy-activations', 'policy-sweeps', 'policy-summaries'], {
    connection: config.REDIS_URL,
    prefix: config.REDIS_PREFIX,
  });
  metrics.observeQueues(queueStats);
  const app = createApp(logger, { deadlineMs: config.REQUEST_DEADLINE_MS, metrics: metrics.http });
  app.use(healthRoutes({ mongo: () => pingMongo(connection) }));
  app.use(metricsRoutes(metrics.handler));
  app.use(
    '/api',
    requireInternalContext(config.INTERNAL_SIGNING_SECRET),
    answerOptions(PARTNER_ROUTES.policy),
    mountRoutes<PartnerContext>(
      Router(),
      [...farmerRoutes, ...plotRoutes, ...herdRoutes, ...policyRoutes],
      (req) => ({
        tenant: repositories.forOrganization(organizationOf(req)),
        organization: organizationSnapshotOf(req),
        activator,
        now: clock,
      }),
    ),
  );
  const opsContext: OpsContext = { repositories, now: clock };
  app.use(
    '/ops',
    requireOpsContext(config.INTERNAL_SIGNING_SECRET),
    answerOptions(OPS_ROUTES.policy),
    mountRoutes(
      Router(),
      [...farmerOpsRoutes, ...underwritingOpsRoutes, ...policyOpsRoutes],
      () => opsContext,
    ),
  );
  finishApp(app, logger);
  const http = await listen(app, config.POLICY_PORT, config.POLICY_HOST);

  let stopped: Promise<void> | undefined;
  return {
    url: http.url,
    app,
    drainOutbox: () => relay.drain(),
    stop: () => {
      stopped ??= (async () => {
        await http.close();
        await queueStats.close();
        await Promise.all(workers.map((w) => w.close()));
        await relay.stop();
        await Promise.all([events.close(), activations.close(), sweeps.close()]);
        await registryChecked;
        await registry.close();
        await lockRedis.quit().catch(() => lockRedis.disconnect());
        await connection.close();
      })();
      return stopped;
    },
  };
}
