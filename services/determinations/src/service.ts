import { MAX_OPS_BODY_BYTES, mountRoutes } from '@parametric/http';
import type { Logger } from '@parametric/logger';
import { policyLookupMany } from '@parametric/policy-client';
import { type ServiceDeclaration, startService } from '@parametric/runtime';
import { type Express, Router } from 'express';
import { type Clock, systemClock } from './clock';
import { type DeterminationsConfig, sandboxSigningKeys } from './config';
import type { OpsContext, PartnerContext } from './context';
import { determinationRoutes } from './determinations/routes';
import type { IngestDeps } from './ingestion/domain';
import { ingestionOpsRoutes } from './ingestion/ops-routes';
import { issueSandboxDetermination } from './ingestion/sandbox';
import { startIngestWorker } from './ingestion/worker';
import { JWKS_MAX_AGE_SECONDS, jwksRoutes } from './jwks/routes';
import { determinationMetrics } from './metrics';
import { overdueSweeps } from './overdue/sweep';
import {
  type DeterminationRepositories,
  determinationModels,
  determinationRepositories,
} from './repositories';
import { loadSigningKeys, publishedKeySet, type SigningKeys } from './signing/keys';

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
export function determinationsService(
  keys: SigningKeys,
  clock: Clock,
  /** Sandbox organizations' determinations are signed with these (config.ts `sandboxSigningKeys`). */
  sandboxKeys?: SigningKeys,
): ServiceDeclaration<
  DeterminationsConfig,
  DeterminationRepositories,
  'events' | 'policy-summaries' | 'payout-originations' | 'determination-sweeps',
  object,
  PartnerContext,
  OpsContext
> {
  return {
    name: 'determinations',
    repositories: determinationRepositories,
    models: determinationModels,
    produces: ['events', 'policy-summaries', 'payout-originations', 'determination-sweeps'],
    queueStats: [
      'events',
      'policy-summaries',
      'payout-originations',
      'determination-sweeps',
      'determination-ingest',
    ],
    build({ config, logger, repositories, metrics, queue, sweeps }) {
      // Ingestion, the sweep and the relays work across organizations by design.
      const data = repositories.acrossOrganizations();
      const counted = determinationMetrics(metrics, data.determinations);
      const ingest: IngestDeps = {
        data,
        lookupPolicies: policyLookupMany({
          policyUrl: config.POLICY_URL,
          signingSecret: config.INTERNAL_SIGNING_SECRET,
          timeoutMs: config.POLICY_TIMEOUT_MS,
        }),
        keys,
        ...(sandboxKeys ? { sandboxKeys } : {}),
        reportDueSeconds: config.DETERMINATION_REPORT_DUE_SECONDS,
        now: clock,
        metrics: counted,
      };
      return {
        relays: [
          { events: data.determinations },
          { jobs: data.determinations, to: ['policy-summaries', 'payout-originations'] },
        ],
        api: {
          port: config.DETERMINATIONS_PORT,
          host: config.DETERMINATIONS_HOST,
          // Internal only (behind the gateway, which limits partner bodies to 1 MiB); the ops
          // batch door takes up to 1,000 assessments in one body.
          maxBodyBytes: MAX_OPS_BODY_BYTES,
          // Partner reads and the ops batch door share this app; partners meet the gateway's deadline first.
          deadlineMs: config.OPS_REQUEST_DEADLINE_MS,
          // Public: anyone holding a determination verifies it with these keys (no context needed).
          open: (app) => {
            app.use('/api/.well-known', (_req, res, next) => {
              res.setHeader('Cache-Control', `public, max-age=${JWKS_MAX_AGE_SECONDS}`);
              next();
            });
            app.use(
              '/api',
              mountRoutes(Router(), jwksRoutes(keys, sandboxKeys), () => undefined),
            );
          },
          partner: {
            routes: determinationRoutes(counted.reportRecorded),
            context: (caller) => ({
              tenant: repositories.forOrganization(caller.organizationId),
              now: clock,
              issueSandboxDetermination: (input) =>
                issueSandboxDetermination(
                  {
                    organizationId: caller.organizationId,
                    environment: caller.organization?.environment ?? 'live',
                  },
                  input,
                  ingest,
                ),
            }),
          },
          ops: {
            routes: ingestionOpsRoutes,
            context: {
              data,
              ingest,
              onUnexpected: (err, index) => logger.error({ err, index }, 'batch item failed unexpectedly'),
            },
          },
        },
        workers: () => [
          startIngestWorker({
            ingest,
            ...queue,
            concurrency: config.INGEST_CONCURRENCY,
            retryDelayMs: 30_000,
            logger,
          }),
        ],
        sweeps: sweeps(
          'determination-sweeps',
          overdueSweeps({
            data,
            intervalMs: config.DETERMINATION_OVERDUE_SWEEP_SECONDS * 1000,
            logger,
            clock,
          }),
        ),
      };
    },
  };
}

export async function startDeterminations(
  config: DeterminationsConfig,
  logger: Logger,
  clock: Clock = systemClock,
): Promise<RunningDeterminations> {
  // Before anything connects: a bad key is a configuration error, not a half-started service.
  const keys = loadSigningKeys(config.DETERMINATION_SIGNING_KEYS);
  const sandboxKeys = sandboxSigningKeys(config);
  const service = await startService(determinationsService(keys, clock, sandboxKeys), config, logger);
  const api = service.listener('api');
  return {
    url: api.url,
    app: api.app,
    jwks: publishedKeySet(keys, sandboxKeys),
    drainOutbox: service.drainOutbox,
    stop: service.stop,
  };
}
