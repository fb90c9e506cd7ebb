import { eventEnvelopeSchema } from '@parametric/events';
import { z } from 'zod';

/**
 * Every queue and the schema of its job payload, declared once: producers validate before
 * enqueueing and workers validate before handling. Adding a queue is one line here.
 */
export const QUEUES = {
  /** Every platform event, from the services' outbox relays to the webhooks service. */
  events: eventEnvelopeSchema,
  /** One delivery attempt; the delivery row in MongoDB holds the state. */
  'webhook-deliveries': z.strictObject({
    deliveryId: z.uuid(),
    /** Bumped by each manual retry, so jobs of an earlier cycle are recognised as stale. */
    cycle: z.number().int().min(0),
    attempt: z.number().int().min(1),
  }),
} as const satisfies Record<string, z.ZodType>;

export type QueueName = keyof typeof QUEUES;
export type Payload<N extends QueueName> = z.infer<(typeof QUEUES)[N]>;

/** A payload that does not match its queue's schema (never enqueued, never handled). */
export class InvalidPayloadError extends Error {
  override readonly name = 'InvalidPayloadError';
  constructor(
    readonly queue: QueueName,
    readonly issues: z.ZodError['issues'],
    detail: string,
  ) {
    super(`invalid payload for queue "${queue}":\n${detail}`);
  }
}
