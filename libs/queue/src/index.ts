export type { RedisConnection } from './connection';
export {
  type AddOptions,
  createProducer,
  DEFAULT_JOB_OPTIONS,
  type Producer,
  type ProducerOptions,
} from './producer';
export {
  determinationIngestJobId,
  InvalidPayloadError,
  PARTNER_SETTLEMENT_STATUSES,
  type PartnerSettlementStatus,
  type Payload,
  payoutOriginationJobId,
  policyActivationJobId,
  policySummaryJobId,
  QUEUES,
  type QueueName,
} from './registry';
export { createWorker, type JobHandler, type QueueWorker, type WorkerOptions } from './worker';
