export {
  BREAKER_STATE,
  BREAKERS,
  type BreakerName,
  type BreakerState,
  type ObservableBreaker,
  type OutboxModel,
  type OutboxSource,
  observeBreaker,
  outboxGauge,
  outboxSource,
  RELAY_LAG_BUCKETS,
  relayLag,
  relayLagHistogram,
  type TimedProducer,
} from './domain';
export { parseExposition, type Sample, sampleValue } from './exposition';
export { HTTP_BUCKETS, type HttpMetricsOptions, routeTemplates, UNMATCHED } from './http';
export { QUEUE_STATES, type QueueSnapshot, type QueueState, type QueueStatsSource } from './queues';
export { countJobProcessed, createMetrics, type Metrics } from './registry';
