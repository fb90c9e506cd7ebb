export { EVENT_CATALOG, EVENT_NAMES, type EventData, type EventName, isEventName } from './catalog';
export { createEvent, type EventEnvelope, eventEnvelopeSchema } from './envelope';
export { exampleData } from './examples';
export {
  type KeptOutboxEntry,
  type OutboxFields,
  type OutboxUpdate,
  outboxEventSchema,
  outboxInsert,
  outboxUpdate,
  withOutbox,
  withOutboxEvents,
} from './outbox';
export {
  type DocumentRelayOptions,
  type DocumentRelaySpec,
  type EventProducer,
  OUTBOX_RETENTION_MS,
  type OutboxRelay,
  type OutboxRelayOptions,
  type RelayedEntry,
  type RelayLogger,
  type SwapRelayMarker,
  startDocumentRelay,
  startOutboxRelay,
} from './relay';
export { onOutboxWritten, outboxWritten, type SignalledCollection, signalOutboxWrites } from './signal';
