import { defineRoute, uuid } from '@parametric/http';
import { z } from 'zod';
import { idParams, pageQuery, timestamp } from '../common';

// Tier 2 payouts by M-Pesa B2C (spec 2.7, 4; docs/payments.md "Payouts").

export const PAYOUT_STATUSES = ['PENDING', 'PROCESSING', 'COMPLETED', 'FAILED'] as const;
/** Stable reasons a payout failed, whatever the provider's own codes. */
export const PAYOUT_FAILURE_REASONS = [
  'INSUFFICIENT_BALANCE',
  'AMOUNT_LIMIT_EXCEEDED',
  'RECIPIENT_NOT_REGISTERED',
  'INVALID_PHONE',
  'PROVIDER_ERROR',
] as const;

const decimal = (decimals: number, example: string) =>
  z
    .string()
    .regex(new RegExp(`^\\d+\\.\\d{${decimals}}$`))
    .meta({ example });

export const payoutSchema = z
  .object({
    payoutId: z.uuid(),
    policyId: z.uuid(),
    determinationId: z.uuid(),
    status: z.enum(PAYOUT_STATUSES).meta({
      description:
        '`PENDING` until M-Pesa accepts the first payment request, `PROCESSING` while it (or a retry) is under way, then `COMPLETED` or `FAILED`',
    }),
    amountKES: decimal(2, '5000.00').meta({
      description: 'What the farmer is paid, in KES (whole shillings)',
    }),
    owedKES: decimal(2, '5000.40').meta({
      description:
        'What the determination made owed, exactly; M-Pesa pays whole shillings, so `amountKES` is this without its cents',
    }),
    currency: z.literal('KES'),
    amountUSDC: decimal(6, '38.624951').meta({
      description: 'The KES amount in USDC at the quote taken when the payout was originated',
    }),
    quoteId: z.uuid().meta({ description: 'The quote taken at origination (`GET /payments/quotes/{id}`)' }),
    phoneNumber: z.string().meta({ description: 'The farmer’s number, masked: +2547•••••678' }),
    attempts: z.number().int().min(0).meta({ description: 'M-Pesa payment requests made so far' }),
    mobileMoneyRef: z.string().nullable().meta({ description: 'The M-Pesa receipt, once COMPLETED' }),
    reason: z.enum(PAYOUT_FAILURE_REASONS).nullable().meta({ description: 'Why it FAILED' }),
    lastResultCode: z.string().nullable().meta({ description: 'M-Pesa’s last result code, as sent' }),
    nextAttemptAt: timestamp.nullable().meta({ description: 'When the next attempt is due, while retrying' }),
    createdAt: timestamp,
    updatedAt: timestamp,
    completedAt: timestamp.nullable(),
  })
  .meta({ id: 'Payout' });

export const opsPayoutSchema = payoutSchema.extend({ organizationId: z.uuid() }).meta({ id: 'OpsPayout' });

const oneOf = (values: readonly string[]) => ({ error: `must be one of ${values.join(', ')}` });

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
  responses: { 200: { description: 'The payout', data: payoutSchema } },
  errors: [],
});

export const retryPayout = defineRoute({
  operationId: 'retryPayout',
  method: 'post',
  path: '/payouts/{id}/retry',
  summary: 'Retry a failed payout',
  description:
    'Only a `FAILED` payout (`409` otherwise): it goes back to `PENDING` and is attempted again, after M-Pesa’s Transaction Status confirms the last attempt paid nothing. A `DETERMINATION` (Tier 1) policy is `403 TIER_NOT_ENTITLED`.',
  tags: ['Payouts'],
  auth: 'partner',
  capability: 'payout:write',
  params: idParams,
  responses: { 200: { description: 'The payout, PENDING again', data: payoutSchema } },
  errors: ['TIER_NOT_ENTITLED', 'CONFLICT'],
});

export const originatePayoutBody = z
  .strictObject({
    determinationId: uuid,
    policyId: uuid,
    organizationId: uuid,
    amountMinor: z.string().regex(/^[1-9]\d*$/, 'must be a positive integer in minor units, as a string'),
    currency: z.string().regex(/^[A-Z]{3}$/, 'must be an ISO 4217 code'),
    exponent: z.number().int().min(0).max(18),
  })
  .meta({
    id: 'PayoutOrigination',
    example: {
      determinationId: '3f2b8c1e-7d4a-4e6b-9a1c-2b3d4e5f6a7b',
      policyId: '4a2b8c1e-7d4a-4e6b-9a1c-2b3d4e5f6a7b',
      organizationId: '5b2b8c1e-7d4a-4e6b-9a1c-2b3d4e5f6a7b',
      amountMinor: '500000',
      currency: 'KES',
      exponent: 2,
    },
  });

export const opsOriginatePayout = defineRoute({
  operationId: 'opsOriginatePayout',
  method: 'post',
  path: '/payouts',
  summary: 'Originate a Tier 2 payout (admin)',
  description:
    'What the `payout-originations` queue does, by hand: one payout per determination (`200` with the existing one when it is already there). A policy (or its farmer) that is not the organization’s is `404 NOT_FOUND`; a Tier 1 policy is `403 TIER_NOT_ENTITLED`; no current exchange rate is `502 PAYMENT_ERROR` with nothing written.',
  tags: ['Payouts'],
  auth: 'opsBearer',
  body: originatePayoutBody,
  responses: {
    201: { description: 'The payout, originated', data: opsPayoutSchema },
    200: { description: 'The determination’s payout, already originated', data: opsPayoutSchema },
  },
  errors: ['NOT_FOUND', 'TIER_NOT_ENTITLED', 'PAYMENT_ERROR'],
});

export const PAYOUT_ROUTES = [listPayouts, getPayout, retryPayout] as const;
export const PAYOUT_OPS_ROUTES = [opsOriginatePayout] as const;
