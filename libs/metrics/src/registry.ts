import type { RequestHandler } from 'express';
import { Counter, collectDefaultMetrics, Gauge, Histogram, type Metric, Registry } from 'prom-client';
import {
  type BreakerName,
  type ObservableBreaker,
  type OutboxModel,
  observeBreaker,
  outboxGauge,
  outboxSource,
  relayLag,
  type TimedProducer,
} from './domain';
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
  /** A histogram on this registry (seconds, `buckets` as the quantity needs). */
  histogram<L extends string = never>(
    name: string,
    help: string,
    labelNames: readonly L[],
    buckets: number[],
  ): Histogram<L>;
  /** A gauge on this registry; `collect` (if any) fills it at scrape time and must settle on its own. */
  gauge<L extends string = never>(
    name: string,
    help: string,
    labelNames: readonly L[],
    collect?: (gauge: Gauge<L>) => Promise<void>,
  ): Gauge<L>;
  /**
   * `outbox_pending_documents{collection}` for every model this service relays from, counted at
   * scrape time (1 s bound each). Call once, at start, with all of them.
   */
  observeOutboxes(models: readonly OutboxModel[]): void;
  /**
   * The relay's events producer, observing `outbox_relay_lag_seconds{collection}` after each
   * successful enqueue (pass it as `startOutboxRelay`'s `producer`).
   */
  relayLag<E extends { createdAt: string }, O>(
    collection: string,
    producer: TimedProducer<E, O>,
  ): TimedProducer<E, O>;
  /** `circuit_breaker_state{breaker}` and `circuit_breaker_transitions_total{breaker,to}` for one breaker. */
  observeBreaker(name: BreakerName, breaker: ObservableBreaker): void;
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
  let outboxesObserved = false;
  return {
    service,
    registry,
    http,
    counter: <L extends string>(name: string, help: string, labelNames: readonly L[]) =>
      new Counter<L>({ name, help, labelNames, registers: [registry] }),
    histogram: <L extends string = never>(
      name: string,
      help: string,
      labelNames: readonly L[],
      buckets: number[],
    ) => new Histogram<L>({ name, help, labelNames, buckets, registers: [registry] }),
    gauge: <L extends string = never>(
      name: string,
      help: string,
      labelNames: readonly L[],
      collect?: (gauge: Gauge<L>) => Promise<void>,
    ) =>
      new Gauge<L>({
        name,
        help,
        labelNames,
        registers: [registry],
        ...(collect
          ? {
              async collect(this: Gauge<L>) {
                await collect(this);
              },
            }
          : {}),
      }),
    observeOutboxes(models) {
      if (outboxesObserved) throw new Error('observeOutboxes: one call per service (list every model in it)');
      outboxesObserved = true;
      outboxGauge(
        registry,
        models.map((model) => outboxSource(model)),
      );
    },
    relayLag: (collection, producer) => relayLag(registry, collection, producer),
    observeBreaker: (name, breaker) => observeBreaker(registry, name, breaker),
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
