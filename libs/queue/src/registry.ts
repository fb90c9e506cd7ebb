import { eventEnvelopeSchema } from '@parametric/events';
import type { z } from 'zod';

/**
 * Every queue and the schema of its job payload, declared once: producers validate before
 * enqueueing and workers validate before handling. Adding a queue is one line here.
 */
export const QUEUES = {
  events: eventEnvelopeSchema,
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
