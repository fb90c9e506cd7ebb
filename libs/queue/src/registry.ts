import { createHash } from 'node:crypto';
import { determinationIngestInput, PARTNER_SETTLEMENT_STATUSES } from '@parametric/contracts';
import { eventEnvelopeSchema } from '@parametric/events';
import { z } from 'zod';

const uuid = z.uuid();
const timestamp = z.iso.datetime({ offset: true });

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
    task: z.enum(['expire-policies', 'requeue-activations', 'release-capacity']),
  }),
  /**
   * One assessment from an index pipeline, validated exactly as the ops door validates it.
   * Add with `jobId: determinationIngestJobId(idempotencyKey)`.
   */
  'determination-ingest': determinationIngestInput,
  /**
   * Tier 2: pay the farmer what a triggered determination makes owed. Produced once per
   * determination (`jobId: payoutOriginationJobId(determinationId)`); the payments service
   * consumes it and reads the amount, policy and organization from the determination itself
   * (the ids here name it in logs and the queue dashboard, nothing is taken from them).
   */
  'payout-originations': z.strictObject({
    determinationId: uuid,
    policyId: uuid,
    organizationId: uuid,
  }),
  /**
   * One step of one part of a Tier 2 payout by M-Pesa B2C (the payments service's own queue):
   * the payout document holds the state; the job only says which payout and part to move on.
   * Add with `jobId: payoutAttemptJobId(payoutId, part, n)` (or `payoutRetryJobId` for a
   * partner's retry).
   */
  'payout-attempts': z.strictObject({ payoutId: uuid, part: z.number().int().min(1).max(1_000) }),
  /**
   * What the policy read shows of other services' records (`damageAssessments` and
   * `payouts`: docs/api.md, "Policies: damage assessments"). Each summary carries a `revision`;
   * the consumer keeps the highest, so jobs may arrive late, twice or out of order.
   */
  'policy-summaries': z.discriminatedUnion('kind', [
    z.strictObject({
      kind: z.literal('DAMAGE_ASSESSMENT'),
      policyId: uuid,
      organizationId: uuid,
      determinationId: uuid,
      revision: z.number().int().min(1),
      triggered: z.boolean(),
      damagePercentBp: z.number().int().min(0).max(10_000),
      assessedAt: timestamp,
      issuedAt: timestamp,
      partnerSettlementStatus: z.enum(PARTNER_SETTLEMENT_STATUSES),
      /** Tier 1 reporting due date; null when no report is expected. */
      dueAt: timestamp.nullable(),
    }),
    z.strictObject({
      kind: z.literal('PAYOUT'),
      policyId: uuid,
      organizationId: uuid,
      /** The determination the payout pays (the job id is keyed on the payout id: `policySummaryJobId({ kind, determinationId: payoutId, revision })`). */
      determinationId: uuid,
      payoutId: uuid,
      revision: z.number().int().min(1),
      status: z.enum(['PENDING', 'PROCESSING', 'COMPLETED', 'FAILED']),
      /** Decimal string in `currency` (KES, 2 decimals). */
      amount: z.string().regex(/^\d+\.\d{2}$/),
      currency: z.string().regex(/^[A-Z]{3}$/),
      mobileMoneyRef: z.string().nullable(),
      reason: z.string().nullable(),
      updatedAt: timestamp,
    }),
  ]),
  /** The payments service's periodic sweeps (repeatable jobs). */
  'payment-sweeps': z.strictObject({
    task: z.enum(['reconcile-premiums', 'originate-payouts']),
  }),
  /** The determinations service's periodic sweeps (repeatable jobs). */
  'determination-sweeps': z.strictObject({
    task: z.enum(['mark-overdue']),
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

/** BullMQ job ids may not contain ':'; the key is hashed so any partner-chosen key is safe. */
export const determinationIngestJobId = (idempotencyKey: string) =>
  `ingest-${createHash('sha256').update(idempotencyKey).digest('hex')}`;

/** One payout per determination (docs/payments.md, "Origination"), whoever enqueues it, however often. */
export const payoutOriginationJobId = (determinationId: string) => `payout-${determinationId}`;

/** The job that makes attempt `n` of a payout's part (the Transaction Status check before it included). */
export const payoutAttemptJobId = (payoutId: string, part: number, attempt: number) =>
  part === 1 ? `${payoutId}-attempt-${attempt}` : `${payoutId}-p${part}-attempt-${attempt}`;

/** A partner's (or ops') retry of a FAILED payout: one job per revision of the payout. */
export const payoutRetryJobId = (payoutId: string, revision: number) => `${payoutId}-retry-${revision}`;

/** One job per summary revision: a relay that re-sends collapses into the first. */
export const policySummaryJobId = (summary: { kind: string; determinationId: string; revision: number }) =>
  `${summary.kind.toLowerCase()}-${summary.determinationId}-${summary.revision}`;
