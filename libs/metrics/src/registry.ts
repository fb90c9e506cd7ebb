import type { RequestHandler } from 'express';
import { Counter, collectDefaultMetrics, type Metric, Registry } from 'prom-client';
import { type HttpMetricsOptions, httpMetrics } from './http';
import { type QueueStatsSource, queueGauges } from './queues';

/**
 * What the process as a whole measures, created once per process: node's default metrics
 * (CPU, memory, event loop lag, GC, handles) and the jobs processed by every worker of the
 * process (`@parametric/queue` counts them where workers are created). Each service's registry
 * includes these same metric objects, so a scrape of any service shows them with its own
 * `service` label; in production one process runs one service.
 */
let shared: { registry: Registry; jobsProcessed: Counter<'queue' | 'outcome'> } | undefined;

function processMetrics() {
  if (!shared) {
    const registry = new Registry();
    collectDefaultMetrics({ register: registry });
    const jobsProcessed = new Counter({
      name: 'queue_jobs_processed_total',
      help: 'Jobs the workers of this process finished, by queue and outcome (failed counts each failed attempt)',
      labelNames: ['queue', 'outcome'] as const,
      registers: [registry],
    });
    shared = { registry, jobsProcessed };
  }
  return shared;
}

/** Counts one job a worker of this process finished (called by `@parametric/queue`'s workers). */
export function countJobProcessed(queue: string, outcome: 'completed' | 'failed'): void {
  processMetrics().jobsProcessed.inc({ queue, outcome });
}

export interface Metrics {
  readonly service: string;
  /** This service's registry (not prom-client's global one), `service` as a default label. */
  readonly registry: Registry;
  /**
   * The middleware recording `http_request_duration_seconds{method,route,status}`; pass it to
   * `createApp({ metrics })` so it runs before anything can refuse the request.
   */
  readonly http: RequestHandler;
  /** A counter on this registry. Label values must come from a small fixed set (docs/ops.md). */
  counter<L extends string>(name: string, help: string, labelNames: readonly L[]): Counter<L>;
  /** `queue_jobs{queue,state}` and `queue_oldest_waiting_age_seconds{queue}`, read at scrape time. */
  observeQueues(source: QueueStatsSource): void;
  /** Serves the text exposition of the registry (mount at `GET /metrics`). */
  readonly handler: RequestHandler;
}

/**
 * The metrics of one service: one registry per service instance, so services started in one
 * jest process do not collide, with the process-wide metrics (default node metrics, jobs
 * processed) registered on it too.
 */
export function createMetrics(service: string, options: HttpMetricsOptions = {}): Metrics {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  for (const metric of processMetrics().registry.getMetricsAsArray())
    registry.registerMetric(metric as unknown as Metric);
  const http = httpMetrics(registry, options);
  let queuesObserved = false;
  return {
    service,
    registry,
    http,
    counter: <L extends string>(name: string, help: string, labelNames: readonly L[]) =>
      new Counter<L>({ name, help, labelNames, registers: [registry] }),
    observeQueues(source) {
      if (queuesObserved) throw new Error('observeQueues: one source per service (list every queue in it)');
      queuesObserved = true;
      queueGauges(registry, source);
    },
    handler: async (_req, res, next) => {
      try {
        const text = await registry.metrics();
        res.status(200).type(registry.contentType).send(text);
      } catch (err) {
        next(err);
      }
    },
  };
}
