export { EVENT_CATALOG, EVENT_NAMES, type EventData, type EventName, isEventName } from './catalog';
export { createEvent, type EventEnvelope, eventEnvelopeSchema } from './envelope';
export {
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
  type OutboxRelay,
  type OutboxRelayOptions,
  type RelayedEntry,
  type RelayLogger,
  startDocumentRelay,
  startOutboxRelay,
} from './relay';
