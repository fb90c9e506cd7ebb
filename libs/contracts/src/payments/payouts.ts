import { defineRoute, uuid } from '@parametric/http';
import { z } from 'zod';
import { approvalRequestedResponse } from '../approvals';
import { idParams, oneOf, pageQuery, timestamp } from '../common';

// Tier 2 payouts by M-Pesa B2C (docs/payments.md, "Payouts").

export const PAYOUT_STATUSES = ['PENDING', 'PROCESSING', 'COMPLETED', 'FAILED'] as const;
/**
 * Stable reasons a payout failed, whatever the provider's own codes. `BELOW_PROVIDER_MINIMUM`
 * and `UNSUPPORTED_CURRENCY` are decided before any payment request: nothing was sent.
 */
export const PAYOUT_FAILURE_REASONS = [
  'INSUFFICIENT_BALANCE',
  'AMOUNT_LIMIT_EXCEEDED',
  'RECIPIENT_NOT_REGISTERED',
  'INVALID_PHONE',
  'PROVIDER_ERROR',
  'BELOW_PROVIDER_MINIMUM',
  'UNSUPPORTED_CURRENCY',
] as const;

/** What the payout ledger records: every payment request, its answer, and every result or status answer. */
export const PAYOUT_ATTEMPT_KINDS = [
  'B2C_REQUEST',
  'B2C_RESPONSE',
  'B2C_RESULT',
  'B2C_QUEUE_TIMEOUT',
  'STATUS_QUERY',
  'STATUS_RESULT',
  'STATUS_TIMEOUT',
] as const;

const decimal = (decimals: number, example: string) =>
  z
    .string()
    .regex(new RegExp(`^\\d+\\.\\d{${decimals}}$`))
    .meta({ example });

export const payoutPartSchema = z
  .object({
    part: z.number().int().min(1),
    amountKES: decimal(2, '250000.00'),
    status: z.enum(PAYOUT_STATUSES),
    attempts: z.number().int().min(0),
    mobileMoneyRef: z.string().nullable().meta({ description: 'This part’s M-Pesa receipt, once paid' }),
    reason: z.enum(PAYOUT_FAILURE_REASONS).nullable(),
    completedAt: timestamp.nullable(),
  })
  .meta({ id: 'PayoutPart' });

export const payoutSchema = z
  .object({
    payoutId: z.uuid(),
    policyId: z.uuid(),
    determinationId: z.uuid(),
    status: z.enum(PAYOUT_STATUSES).meta({
      description:
        '`PENDING` until M-Pesa accepts the first payment request, `PROCESSING` while it (or a retry) is under way, then `COMPLETED` or `FAILED`',
    }),
    amountKES: decimal(2, '5001.00').meta({
      description:
        'What the farmer is paid, in KES: `owedKES` rounded **up** to whole shillings (M-Pesa moves nothing smaller; the farmer never gets less than owed)',
    }),
    owedKES: decimal(2, '5000.40').meta({
      description:
        'What the determination made owed, exactly: its amount owed, capped by the policy’s remaining cover',
    }),
    currency: z.literal('KES'),
    amountUSDC: decimal(6, '38.624951').meta({
      description: 'The KES amount in USDC at the quote taken when the payout was originated',
    }),
    quoteId: z.uuid().meta({ description: 'The quote taken at origination (`GET /payments/quotes/{id}`)' }),
    phoneNumber: z.string().meta({ description: 'The farmer’s number, masked: +2547•••••678' }),
    attempts: z
      .number()
      .int()
      .min(0)
      .meta({ description: 'M-Pesa payment attempts started so far, all parts together' }),
    mobileMoneyRef: z.string().nullable().meta({
      description:
        'The M-Pesa receipt once COMPLETED; a payout paid in parts names every part’s receipt, in part order, separated by commas',
    }),
    reason: z.enum(PAYOUT_FAILURE_REASONS).nullable().meta({ description: 'Why it FAILED' }),
    lastResultCode: z.string().nullable().meta({ description: 'M-Pesa’s last result code, as sent' }),
    nextAttemptAt: timestamp.nullable().meta({ description: 'When the next attempt is due, while retrying' }),
    parts: z.array(payoutPartSchema).meta({
      description:
        'An amount above M-Pesa’s per-transaction maximum is paid in as few, as equal parts as allow it, one after the other, each with its own payment requests; one part otherwise (none when nothing could be sent)',
    }),
    createdAt: timestamp,
    updatedAt: timestamp,
    completedAt: timestamp.nullable(),
  })
  .meta({ id: 'Payout' });

export const payoutAttemptSchema = z
  .object({
    at: timestamp.meta({ description: 'When we sent the request, or received the answer' }),
    part: z.number().int().min(1),
    attempt: z.number().int().min(1).meta({ description: 'The part’s attempt this row belongs to' }),
    kind: z.enum(PAYOUT_ATTEMPT_KINDS).meta({
      description:
        '`B2C_REQUEST` a payment request as sent (before its answer); `B2C_RESPONSE` M-Pesa’s immediate answer (accepted with its ConversationID, or refused, or no answer); `B2C_RESULT` / `B2C_QUEUE_TIMEOUT` the outcome M-Pesa called back; `STATUS_QUERY` / `STATUS_RESULT` / `STATUS_TIMEOUT` a Transaction Status check of an earlier request, made before any retry',
    }),
    originatorConversationId: z.string().meta({ description: 'Our id of the payment request concerned' }),
    amountKES: decimal(2, '5001.00')
      .nullable()
      .meta({ description: 'The amount requested (payment requests)' }),
    conversationId: z.string().nullable().meta({ description: 'M-Pesa’s ConversationID, when it gave one' }),
    resultCode: z
      .string()
      .nullable()
      .meta({ description: 'M-Pesa’s ResponseCode, ResultCode or error code, as sent' }),
    resultDescription: z.string().nullable(),
    receipt: z.string().nullable().meta({ description: 'The M-Pesa receipt, on a successful result' }),
  })
  .meta({ id: 'PayoutAttempt' });

export const payoutDetailSchema = payoutSchema
  .extend({
    attemptHistory: z.array(payoutAttemptSchema).meta({
      description:
        'Every payment request, answer, result and status check of this payout, oldest first: why it took the tries it took. Kept for good; never rewritten.',
    }),
  })
  .meta({ id: 'PayoutDetail' });

export const opsPayoutSchema = payoutSchema.extend({ organizationId: z.uuid() }).meta({ id: 'OpsPayout' });

export const payoutsQuery = pageQuery.extend({
  status: z.enum(PAYOUT_STATUSES, oneOf(PAYOUT_STATUSES)).optional(),
});

export const listPayouts = defineRoute({
  operationId: 'listPayouts',
  method: 'get',
  path: '/payouts',
  summary: 'List payouts',
  description:
    'The organization’s Tier 2 payouts, newest first, optionally by `status`. A Tier 1 (`DETERMINATION`) organization has none: the partner settles its own claims.',
  tags: ['Payouts'],
  auth: 'partner',
  capability: 'payout:read',
  query: payoutsQuery,
  responses: { 200: { description: 'A page of payouts', item: payoutSchema } },
  errors: [],
});

export const getPayout = defineRoute({
  operationId: 'getPayout',
  method: 'get',
  path: '/payouts/{id}',
  summary: 'Read a payout',
  description: 'Another organization’s payout is `404`, like an unknown id.',
  tags: ['Payouts'],
  auth: 'partner',
  capability: 'payout:read',
  params: idParams,
  responses: { 200: { description: 'The payout and every attempt made for it', data: payoutDetailSchema } },
  errors: [],
});

export const retryPayout = defineRoute({
  operationId: 'retryPayout',
  method: 'post',
  path: '/payouts/{id}/retry',
  summary: 'Retry a failed payout',
  description:
    'Only a `FAILED` payout (`409` otherwise): it goes back to `PENDING` and its unpaid part is attempted again, after M-Pesa’s Transaction Status confirms the last attempt paid nothing (parts already paid are never sent again). A payout that failed before anything could be sent (`BELOW_PROVIDER_MINIMUM`, `UNSUPPORTED_CURRENCY`) cannot be retried (`409`). A `DETERMINATION` (Tier 1) policy is `403 TIER_NOT_ENTITLED`.',
  tags: ['Payouts'],
  auth: 'partner',
  capability: 'payout:write',
  params: idParams,
  responses: { 200: { description: 'The payout, PENDING again', data: payoutSchema } },
  errors: ['TIER_NOT_ENTITLED', 'CONFLICT'],
});

export const originatePayoutBody = z
  .strictObject({
    determinationId: uuid.meta({
      description: 'A triggered Tier 2 determination; everything else comes from it',
    }),
  })
  .meta({
    id: 'PayoutOrigination',
    description:
      'Only the determination: its policy, organization, currency and amount (its amount owed, capped by the cover) are read from the determinations service, never taken from the request.',
    example: { determinationId: '3f2b8c1e-7d4a-4e6b-9a1c-2b3d4e5f6a7b' },
  });

export const opsOriginatePayout = defineRoute({
  operationId: 'opsOriginatePayout',
  method: 'post',
  path: '/payouts',
  summary: 'Originate a Tier 2 payout (admin)',
  description:
    'What the `payout-originations` queue and the origination sweep do, by hand, for one determination: one payout per determination (`200` with the existing one when it is already there). The amount, policy and organization come from the determination: an unknown determination is `404 NOT_FOUND`; one that is unattributed, untriggered or owes nothing is `400 INVALID_INPUT`, as is a sandbox organization’s whose farmer’s number is not an M-Pesa simulator test number (naming `phoneNumber`; docs/payments.md, "Sandbox organizations"); a Tier 1 one is `403 TIER_NOT_ENTITLED`; no current (or no plausible) exchange rate is `502 PAYMENT_ERROR` with nothing written; the determinations or policy service unreachable is `503`. Less than M-Pesa’s minimum owed gives a `FAILED` payout (`BELOW_PROVIDER_MINIMUM`) and `payout.failed`. Asked by an operator, it is `202` with a pending approval (four eyes) and nothing is checked or written until a second operator approves it.',
  tags: ['Payouts'],
  auth: 'opsBearer',
  capability: 'ops.payout:write',
  body: originatePayoutBody,
  responses: {
    201: { description: 'The payout, originated', data: opsPayoutSchema },
    200: { description: 'The determination’s payout, already originated', data: opsPayoutSchema },
    202: approvalRequestedResponse,
  },
  errors: ['INVALID_INPUT', 'NOT_FOUND', 'TIER_NOT_ENTITLED', 'PAYMENT_ERROR', 'SERVICE_UNAVAILABLE'],
});

export const PAYOUT_ROUTES = [listPayouts, getPayout, retryPayout] as const;
export const PAYOUT_OPS_ROUTES = [opsOriginatePayout] as const;
