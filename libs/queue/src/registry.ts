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
  /**
   * Activate a paid Tier 2 policy on chain. Produced by the payment flow once the premium is
   * received; the policy service retries chain failures itself, so the job never fails for them.
   * Add with `jobId: policyActivationJobId(policyId)` so a repeated request collapses into one.
   */
  'policy-activations': z.strictObject({
    policyId: z.uuid(),
    organizationId: z.uuid(),
    /** The payment that settled the premium, kept on the policy as its premium reference. */
    paymentId: z.string().min(1).max(100),
  }),
  /** The policy service's periodic sweeps (repeatable jobs from a BullMQ job scheduler). */
  'policy-sweeps': z.strictObject({
    task: z.enum(['expire-policies', 'requeue-activations']),
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

/** The one job id per policy on `policy-activations`, for every producer alike. */
export const policyActivationJobId = (policyId: string) => `activate-${policyId}`;
