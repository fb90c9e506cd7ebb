import { createRegistryClient, redisSendLock } from '@parametric/chain';
import type { Logger } from '@parametric/logger';
import { type ServiceDeclaration, startService } from '@parametric/runtime';
import type { Express } from 'express';
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
import { policySweeps } from './policies/sweeps';
import { type PolicyRepositories, policyModels, policyRepositories } from './repositories';
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
 * activation on chain; where workers run, the Tier 2 activation worker, the policy summaries
 * worker and the sweeps (expiry, lost activations, capacity after the claims window).
 */
export function policyService(
  clock: Clock,
): ServiceDeclaration<
  PolicyConfig,
  PolicyRepositories,
  'events' | 'policy-activations' | 'policy-sweeps',
  object,
  PartnerContext,
  OpsContext
> {
  return {
    name: 'policy',
    repositories: policyRepositories,
    models: policyModels,
    produces: ['events', 'policy-activations', 'policy-sweeps'],
    queueStats: ['events', 'policy-activations', 'policy-sweeps', 'policy-summaries'],
    async build({ config, logger, repositories, producers, metrics, queue, connectRedis, sweeps }) {
      // The relay, the activation worker and the sweeps work for every organization by design
      // (the summaries worker binds each job to the organization it names).
      const { policies } = repositories.acrossOrganizations();
      const activationDuration = metrics.histogram(
        'chain_activation_duration_seconds',
        'Seconds from the start of a policy activation to its commit, its chain registration confirmed',
        [],
        CHAIN_ACTIVATION_BUCKETS,
      );

      // Every replica sends from the registry owner's account: their sends take turns through a
      // lock in Redis, or two of them would pick the same nonce. Fails fast while Redis is away.
      const sendLock = redisSendLock({
        redis: await connectRedis('chain-sender-lock'),
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
        onActivated: (seconds) => activationDuration.observe(seconds),
      });

      return {
        relays: [{ events: policies }],
        api: {
          port: config.POLICY_PORT,
          host: config.POLICY_HOST,
          partner: {
            routes: [...farmerRoutes, ...plotRoutes, ...herdRoutes, ...policyRoutes],
            context: (caller) => ({
              tenant: repositories.forOrganization(caller.organizationId),
              organization: organizationSnapshotOf(caller),
              activator,
              now: clock,
            }),
          },
          ops: {
            routes: [...farmerOpsRoutes, ...underwritingOpsRoutes, ...policyOpsRoutes],
            context: { repositories, now: clock },
          },
        },
        workers: () => [
          startActivationWorker({
            policies,
            activator,
            ...queue,
            concurrency: config.ACTIVATION_CONCURRENCY,
            retryBaseMs: config.ACTIVATION_RETRY_BASE_MS,
            retryMaxMs: config.ACTIVATION_RETRY_MAX_MS,
            lockDurationMs: config.WORKER_LOCK_MS,
            logger,
            clock,
          }),
          startSummaryWorker({ repositories, ...queue, concurrency: config.SUMMARY_CONCURRENCY, logger }),
        ],
        sweeps: sweeps(
          'policy-sweeps',
          policySweeps({
            policies,
            activations: producers['policy-activations'],
            capacityOf: (organizationId) => repositories.forOrganization(organizationId),
            claimsWindowMs: config.CLAIMS_WINDOW_SECONDS * 1000,
            intervalMs: config.SWEEP_INTERVAL_MS,
            logger,
            clock,
          }),
        ),
        close: [
          {
            close: async () => {
              await registryChecked;
              await registry.close();
            },
          },
        ],
      };
    },
  };
}

export async function startPolicy(
  config: PolicyConfig,
  logger: Logger,
  clock: Clock = systemClock,
): Promise<RunningPolicy> {
  const service = await startService(policyService(clock), config, logger);
  const api = service.listener('api');
  return { url: api.url, app: api.app, drainOutbox: service.drainOutbox, stop: service.stop };
}
