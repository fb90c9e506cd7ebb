import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

// The domain metrics ops are paged on (docs/ops.md, Metrics): the shared helpers behind them.
// Label values come from the small fixed sets below, never from ids.

/** The breakers `circuit_breaker_*` reports (a fixed set: one label value each). */
export const BREAKERS = ['chain', 'mpesa', 'rate_source'] as const;
export type BreakerName = (typeof BREAKERS)[number];

/** `circuit_breaker_state`: 0 closed, 1 half-open, 2 open. */
export const BREAKER_STATE = { closed: 0, half_open: 1, open: 2 } as const;
export type BreakerState = keyof typeof BREAKER_STATE;

/** What `observeBreaker` needs of an opossum `CircuitBreaker` (its events and flags). */
export interface ObservableBreaker {
  on(event: 'open' | 'halfOpen' | 'close', listener: () => void): unknown;
  readonly opened: boolean;
  readonly halfOpen: boolean;
}

const breakerMetrics = new WeakMap<
  Registry,
  { state: Gauge<'breaker'>; transitions: Counter<'breaker' | 'to'> }
>();

function breakerMetricsOf(registry: Registry) {
  let found = breakerMetrics.get(registry);
  if (!found) {
    found = {
      state: new Gauge({
        name: 'circuit_breaker_state',
        help: 'State of each circuit breaker of this service: 0 closed, 1 half-open, 2 open',
        labelNames: ['breaker'] as const,
        registers: [registry],
      }),
      transitions: new Counter({
        name: 'circuit_breaker_transitions_total',
        help: 'Circuit breaker state changes, by breaker and the state it went to (open, half_open, closed)',
        labelNames: ['breaker', 'to'] as const,
        registers: [registry],
      }),
    };
    breakerMetrics.set(registry, found);
  }
  return found;
}

/**
 * `circuit_breaker_state{breaker}` and `circuit_breaker_transitions_total{breaker,to}` for one
 * opossum breaker, from its `open`, `halfOpen` and `close` events. Call it where the breaker is
 * created (at service start), so both metrics and the breaker's state series exist from the
 * first scrape; the transition series start at 0 for each `to`.
 */
export function observeBreaker(registry: Registry, name: BreakerName, breaker: ObservableBreaker): void {
  const { state, transitions } = breakerMetricsOf(registry);
  const current: BreakerState = breaker.opened ? 'open' : breaker.halfOpen ? 'half_open' : 'closed';
  state.set({ breaker: name }, BREAKER_STATE[current]);
  for (const to of Object.keys(BREAKER_STATE) as BreakerState[]) transitions.inc({ breaker: name, to }, 0);
  const moved = (to: BreakerState) => () => {
    state.set({ breaker: name }, BREAKER_STATE[to]);
    transitions.inc({ breaker: name, to });
  };
  breaker.on('open', moved('open'));
  breaker.on('halfOpen', moved('half_open'));
  breaker.on('close', moved('closed'));
}

/** Counts documents with entries still to relay; must settle on its own (a bounded wait). */
export interface OutboxSource {
  /** The MongoDB collection, the `collection` label (`policies`, `payouts`…). */
  collection: string;
  count(): Promise<number>;
}

/** What `outboxSource` needs of a mongoose model that went through `withOutbox`/`withJobOutbox`. */
export interface OutboxModel {
  readonly collection: {
    readonly collectionName: string;
    countDocuments(filter: object, options?: { maxTimeMS?: number }): Promise<number>;
  };
  readonly schema: { path(name: string): unknown };
}

/**
 * The `OutboxSource` of a model: documents with `outboxPending: true` or `jobOutboxPending:
 * true` (whichever outboxes its schema has; each is served by its own partial index), counted
 * once each, within `timeoutMs`.
 */
export function outboxSource(model: OutboxModel, timeoutMs = 1000): OutboxSource {
  const clauses = ['outboxPending', 'jobOutboxPending']
    .filter((field) => model.schema.path(field) !== undefined)
    .map((field) => ({ [field]: true }));
  const filter = clauses.length === 1 ? (clauses[0] as object) : { $or: clauses };
  return {
    collection: model.collection.collectionName,
    count: () =>
      withDeadline(model.collection.countDocuments(filter, { maxTimeMS: timeoutMs }), timeoutMs + 100),
  };
}

/**
 * `outbox_pending_documents{collection}`, counted at scrape time. A collection that could not
 * be counted in time has no series in that scrape, rather than a stale number.
 */
export function outboxGauge(registry: Registry, sources: readonly OutboxSource[]): void {
  new Gauge({
    name: 'outbox_pending_documents',
    help: 'Documents with outbox entries (events or jobs) not yet relayed, by collection, counted at scrape time',
    labelNames: ['collection'] as const,
    registers: [registry],
    async collect() {
      const counts = await Promise.all(sources.map((s) => s.count().catch(() => undefined)));
      this.reset();
      sources.forEach((s, i) => {
        const count = counts[i];
        if (count !== undefined) this.set({ collection: s.collection }, count);
      });
    },
  });
}

/** Seconds: an entry relayed at once takes milliseconds; one held by a Redis outage, minutes. */
export const RELAY_LAG_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900];

/** What `relayLag` wraps: the relay's `producer` (`createProducer('events', …)`). */
export interface TimedProducer<E extends { createdAt: string }, O> {
  addBulk(jobs: readonly { payload: E; opts: O }[]): Promise<unknown>;
  /** How the relay notices that Redis lost data: passed through untouched, or it never would. */
  swapRelayMarker?(key: string, value: string, ttlMs: number): Promise<string | null>;
}

const relayLagHistograms = new WeakMap<Registry, Histogram<'collection'>>();

/** `outbox_relay_lag_seconds{collection}` on this registry (one per registry, whoever asks first). */
export function relayLagHistogram(registry: Registry): Histogram<'collection'> {
  let found = relayLagHistograms.get(registry);
  if (!found) {
    found = new Histogram({
      name: 'outbox_relay_lag_seconds',
      help: "Seconds from an outbox event's creation (its createdAt) to its enqueue by the relay, by collection",
      labelNames: ['collection'] as const,
      buckets: RELAY_LAG_BUCKETS,
      registers: [registry],
    });
    relayLagHistograms.set(registry, found);
  }
  return found;
}

/**
 * The relay's producer, observing `outbox_relay_lag_seconds{collection}` once each enqueue
 * succeeded: from the event's `createdAt` (when the change that recorded it was made) to now.
 * Observed from the caller's side, so the relay itself is unchanged.
 */
export function relayLag<E extends { createdAt: string }, O>(
  registry: Registry,
  collection: string,
  producer: TimedProducer<E, O>,
  now: () => number = Date.now,
): TimedProducer<E, O> {
  const observe = relayLagHistogram(registry).labels({ collection }).observe;
  return {
    async addBulk(jobs) {
      const added = await producer.addBulk(jobs);
      const at = now();
      for (const { payload } of jobs) {
        const created = Date.parse(payload.createdAt);
        if (Number.isFinite(created)) observe(Math.max(0, (at - created) / 1000));
      }
      return added;
    },
    ...(producer.swapRelayMarker ? { swapRelayMarker: producer.swapRelayMarker.bind(producer) } : {}),
  };
}

function withDeadline<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`did not settle within ${ms} ms`)), ms);
  });
  promise.catch(() => undefined);
  return Promise.race([promise, expired]).finally(() => clearTimeout(timer));
}
