export { type Batched, batchesOf } from './batches';
export {
  QUEUE_COMMAND_TIMEOUT_MS,
  QUEUE_CONNECT_TIMEOUT_MS,
  QUEUE_OPERATION_TIMEOUT_MS,
  QueueTimeoutError,
  type RedisConnection,
} from './connection';
export { type InspectedQueues, openQueues } from './inspect';
export {
  type JobOutboxEntry,
  type JobOutboxFields,
  type JobOutboxRelayOptions,
  jobOutboxInsert,
  outboxJob,
  startJobOutboxRelay,
  withJobOutbox,
  withOutboxJobs,
} from './job-outbox';
export { createPacer, type Pacer, type PacerOptions, type Slot } from './pacer';
export {
  type AddOptions,
  type BulkJob,
  createProducer,
  DEFAULT_JOB_OPTIONS,
  type Producer,
  type ProducerOptions,
} from './producer';
export {
  determinationIngestJobId,
  InvalidPayloadError,
  type Payload,
  payoutAttemptJobId,
  payoutOriginationJobId,
  payoutRetryJobId,
  policyActivationJobId,
  policySummaryJobId,
  QUEUES,
  type QueueName,
} from './registry';
export { createQueueStats, QUEUE_STATS_TIMEOUT_MS, type QueueStats, type QueueStatsOptions } from './stats';
export { type Sweep, type SweepQueue, type SweepsOptions, startSweeps, type TaskOf } from './sweeps';
export { createWorker, type JobHandler, type QueueWorker, type WorkerOptions } from './worker';
