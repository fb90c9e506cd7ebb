import { defineRoute, uuid } from '@parametric/http';
import { z } from 'zod';
import { idParams, oneOf, pageQuery, timestamp } from '../common';

// Tier 2 premium collection by M-Pesa STK push (docs/payments.md, "Premium collection").

export const PAYMENT_STATUSES = ['PENDING', 'SUCCEEDED', 'FAILED'] as const;
/** Stable reasons a premium payment failed, whatever the provider's own codes. */
export const PAYMENT_FAILURE_REASONS = [
  'CANCELLED_BY_USER',
  'PHONE_UNREACHABLE',
  'WRONG_PIN',
  'INSUFFICIENT_BALANCE',
  'TIMEOUT',
  'DUPLICATE_WITHIN_2_MIN',
  'AMOUNT_LIMIT_EXCEEDED',
  'ACCOUNT_LOCKED',
  'RECIPIENT_NOT_REGISTERED',
  'INVALID_PHONE',
  'PROMPT_NOT_SENT',
  'PROVIDER_ERROR',
] as const;

/** `+254` and nine digits, a Kenyan mobile number in E.164 (docs/payments.md, "Premium collection"). */
export const KENYAN_MOBILE = /^\+254\d{9}$/;

export const initiatePaymentBody = z
  .strictObject({
    reference: uuid.optional().meta({ description: 'The policy id' }),
    policyId: uuid
      .optional()
      .meta({ description: 'Legacy alias of `reference`; when both are sent they must match' }),
    amount: z
      .number({ error: 'must be a number' })
      .positive('must be positive')
      .max(1e12, 'must be at most 1,000,000,000,000')
      .meta({ description: 'The premium, in KES; must equal the policy premium exactly' }),
    phoneNumber: z
      .string({ error: 'must be a string' })
      .regex(KENYAN_MOBILE, 'must be +254 followed by nine digits, e.g. +254712345678'),
  })
  .superRefine((b, ctx) => {
    if (b.reference === undefined && b.policyId === undefined) {
      ctx.addIssue({ code: 'custom', path: ['reference'], message: 'is required (the policy id)' });
    }
    if (b.reference !== undefined && b.policyId !== undefined && b.reference !== b.policyId) {
      ctx.addIssue({
        code: 'custom',
        path: ['policyId'],
        message: 'must match reference when both are sent',
      });
    }
  })
  .meta({
    id: 'PaymentInitiation',
    example: {
      reference: '3f2b8c1e-7d4a-4e6b-9a1c-2b3d4e5f6a7b',
      amount: 1479,
      phoneNumber: '+254712345678',
    },
  });

export const paymentInitiationSchema = z
  .object({
    transactionId: z.uuid(),
    reference: z.uuid().meta({ description: 'The policy id' }),
    orderId: z.string().meta({ description: 'The account reference shown on the customer’s M-Pesa prompt' }),
    provider: z.literal('MPESA'),
    status: z.enum(PAYMENT_STATUSES),
    instructions: z.string(),
  })
  .meta({
    id: 'PaymentInitiationResult',
    description: 'The payment prompt sent: the transaction and what the customer is asked',
  });

export const paymentSchema = z
  .object({
    transactionId: z.uuid(),
    reference: z.uuid(),
    policyId: z.uuid(),
    orderId: z.string(),
    provider: z.literal('MPESA'),
    status: z.enum(PAYMENT_STATUSES),
    amount: z.string().meta({ description: 'Decimal string in `currency`', example: '1479.00' }),
    currency: z.string(),
    phoneNumber: z.string().meta({ description: 'Masked: +2547•••••678' }),
    mpesaReceiptNumber: z.string().nullable(),
    failureReason: z.enum(PAYMENT_FAILURE_REASONS).nullable(),
    providerResultCode: z.number().int().nullable(),
    createdAt: timestamp,
    updatedAt: timestamp,
    confirmedAt: timestamp.nullable(),
  })
  .meta({ id: 'PremiumPayment' });

export const initiatePayment = defineRoute({
  operationId: 'initiatePayment',
  method: 'post',
  path: '/payments/initiate',
  summary: 'Collect a Tier 2 premium by M-Pesa push prompt',
  description:
    'Sends an STK push prompt to the phone for the policy’s premium. Tier 2 only: a `DETERMINATION` policy is `403 TIER_NOT_ENTITLED` with nothing written and no prompt sent. The policy must be PENDING and unpaid (`409` otherwise), `amount` must equal its premium, and collection is available in `KE` only. While a prompt for the policy is pending, calling again sends no second prompt: it answers the pending transaction (`200`). Limited to 10 requests per hour.',
  tags: ['Payments'],
  auth: 'partner',
  capability: 'payment:write',
  body: initiatePaymentBody,
  responses: {
    201: { description: 'The prompt is on its way', data: paymentInitiationSchema },
    200: {
      description: 'A prompt for this policy is already pending: that transaction',
      data: paymentInitiationSchema,
    },
  },
  errors: ['NOT_FOUND', 'TIER_NOT_ENTITLED', 'CONFLICT', 'PAYMENT_ERROR'],
});

export const paymentsQuery = pageQuery.extend({
  status: z.enum(PAYMENT_STATUSES, oneOf(PAYMENT_STATUSES)).optional(),
  policyId: uuid.optional(),
});

export const listPayments = defineRoute({
  operationId: 'listPayments',
  method: 'get',
  path: '/payments',
  summary: 'List premium payments',
  description:
    'The organization’s Tier 2 premium payments (each M-Pesa prompt sent), newest first (`createdAt`, then `transactionId`, descending), optionally by `status` and `policyId`; the filters combine. Each item is what `GET /payments/{id}` answers. Another organization’s payments never appear; a Tier 1 (`DETERMINATION`) organization has none.',
  tags: ['Payments'],
  auth: 'partner',
  capability: 'payment:read',
  query: paymentsQuery,
  responses: { 200: { description: 'A page of premium payments', item: paymentSchema } },
  errors: [],
});

export const getPayment = defineRoute({
  operationId: 'getPayment',
  method: 'get',
  path: '/payments/{id}',
  summary: 'Read a premium payment',
  description: 'Its status, and why it failed (a stable reason, with the provider’s result code).',
  tags: ['Payments'],
  auth: 'partner',
  capability: 'payment:read',
  params: idParams,
  responses: { 200: { description: 'The payment', data: paymentSchema } },
  errors: [],
});

export const PREMIUM_ROUTES = [initiatePayment, listPayments, getPayment] as const;
