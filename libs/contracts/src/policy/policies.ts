import { defineRoute, uuid } from '@parametric/http';
import { z } from 'zod';
import {
  idempotencyHeaders,
  idempotentReplayHeaders,
  idParams,
  oneOf,
  pageQuery,
  timestamp,
} from '../common';
import { PARTNER_SETTLEMENT_STATUSES } from '../determinations/ingest';

export const POLICY_STATUSES = ['PENDING', 'ACTIVE', 'EXPIRED', 'CANCELLED'] as const;
export const SETTLEMENT_MODES = ['DETERMINATION', 'DETERMINATION_AND_SETTLEMENT'] as const;
export const PRODUCT_TYPES = ['CROP', 'LIVESTOCK'] as const;
export const CROP_COVERAGES = ['DROUGHT', 'FLOOD', 'BOTH', 'COMPREHENSIVE'] as const;
export const LIVESTOCK_COVERAGES = [
  'LIVESTOCK_DROUGHT',
  'LIVESTOCK_DISEASE',
  'LIVESTOCK_COMPREHENSIVE',
] as const;
export const SEASONS = ['LRLD', 'SRSD'] as const;
export const ACTIVATION_CHANNELS = ['PARTNER', 'PAYMENT'] as const;

/** Policy numbers as `newPolicyNumber` makes them: market, year-month, six characters. */
export const POLICY_NUMBER_PATTERN = /^[A-Z]{2}-\d{6}-[A-Z0-9]{6}$/;

/**
 * A field that belongs to the other product, or that the server works out itself: sending
 * it is an error that says why, rather than a bare "Unknown field" (or silently ignoring it).
 */
const notFor = (reason: string) => z.never({ error: reason }).optional().meta({ description: reason });

/** At most two decimals, checked on the decimal digits (no float arithmetic on money). */
const twoDecimals = (n: number) => /^-?\d+(\.\d{1,2})?$/.test(String(n));

const cropPurchase = z
  .strictObject({
    farmerId: uuid,
    productType: z.literal('CROP'),
    plotId: uuid,
    sumInsured: z
      .number({ error: 'is required for CROP and must be a number' })
      .min(1000, 'must be at least 1000')
      .max(1e10, 'must be at most 10,000,000,000')
      .refine(twoDecimals, 'must have at most 2 decimal places')
      .meta({ description: 'Major units of the organization’s currency (KES in KE, GHS in GH)' }),
    coverageType: z.enum(CROP_COVERAGES, { error: `must be one of ${CROP_COVERAGES.join(', ')} for CROP` }),
    durationDays: z
      .number({ error: 'is required for CROP and must be a number' })
      .int('must be a whole number')
      .min(30, 'must be 30 to 365')
      .max(365, 'must be 30 to 365'),
    herdId: notFor('is for LIVESTOCK policies; a CROP policy insures the plot in plotId'),
    season: notFor('is for LIVESTOCK policies; a CROP policy runs for durationDays'),
  })
  .meta({
    id: 'CropPurchaseRequest',
    example: {
      farmerId: '3f2b8c1e-7d4a-4e6b-9a1c-2b3d4e5f6a7b',
      productType: 'CROP',
      plotId: '9b1d2c3e-4f5a-4b6c-8d7e-1f2a3b4c5d6e',
      sumInsured: 50000,
      coverageType: 'DROUGHT',
      durationDays: 180,
    },
  });

const livestockPurchase = z
  .strictObject({
    farmerId: uuid,
    productType: z.literal('LIVESTOCK'),
    herdId: uuid,
    season: z.enum(SEASONS, { error: 'is required for LIVESTOCK: LRLD or SRSD' }),
    // Optional for livestock (the spec requires it only for CROP); LIVESTOCK_DROUGHT by default.
    coverageType: z
      .enum(LIVESTOCK_COVERAGES, { error: `must be one of ${LIVESTOCK_COVERAGES.join(', ')} for LIVESTOCK` })
      .default('LIVESTOCK_DROUGHT'),
    sumInsured: notFor(
      'is calculated for LIVESTOCK policies (80% of the herd’s estimated value); do not send it',
    ),
    durationDays: notFor(
      'is set by the season for LIVESTOCK policies (LRLD 183 days, SRSD 182 days); do not send it',
    ),
    plotId: notFor('is for CROP policies; a LIVESTOCK policy insures the herd in herdId'),
  })
  .meta({
    id: 'LivestockPurchaseRequest',
    example: {
      farmerId: '3f2b8c1e-7d4a-4e6b-9a1c-2b3d4e5f6a7b',
      productType: 'LIVESTOCK',
      herdId: '7c6b5a49-3827-4165-9a8b-7c6d5e4f3a2b',
      season: 'LRLD',
      coverageType: 'LIVESTOCK_DROUGHT',
    },
  });

export const purchaseBody = z
  .discriminatedUnion('productType', [cropPurchase, livestockPurchase], {
    error: 'productType must be CROP or LIVESTOCK',
  })
  .meta({ id: 'PurchaseRequest' });
export type PurchaseBody = z.output<typeof purchaseBody>;

export const activateBody = z
  .strictObject({
    premiumReference: z
      .string()
      .trim()
      .min(1, 'must not be empty')
      .max(100, 'must be at most 100 characters')
      .optional()
      .meta({ description: 'Your own receipt for the premium you collected; kept on the policy' }),
  })
  .meta({ id: 'ActivationRequest', example: { premiumReference: 'MPESA-QK81XY2Z' } });

const onChainPolicyId = z
  .string()
  .nullable()
  .meta({ description: 'The registry id on chain; null until the policy is activated' });

/**
 * One determination issued for the policy, as the policy read summarises it (docs/api.md,
 * "Policies: damage assessments").
 */
export const damageAssessmentSchema = z
  .object({
    determinationId: z.uuid(),
    triggered: z.boolean().meta({ description: 'Whether the index crossed its trigger threshold' }),
    damagePercentBp: z
      .number()
      .int()
      .min(0)
      .max(10_000)
      .meta({ description: 'Assessed damage in basis points; 10000 = 100%', example: 2500 }),
    assessedAt: timestamp.meta({ description: 'When the damage was assessed (the observation)' }),
    issuedAt: timestamp.meta({ description: 'When the signed determination was issued' }),
    partnerSettlementStatus: z.enum(PARTNER_SETTLEMENT_STATUSES).meta({
      description:
        'Tier 1: PENDING while your settlement report is awaited (until dueAt), then REPORTED or OVERDUE; NOT_REQUIRED when nothing is owed. Tier 2: NOT_APPLICABLE (the service settles).',
    }),
    dueAt: timestamp
      .nullable()
      .meta({ description: 'Tier 1 reporting due date; null when no report is expected' }),
    links: z.object({
      determination: z.string().meta({
        description: 'The full signed determination',
        example: '/determinations/3f2b8c1e-7d4a-4e6b-9a1c-2b3d4e5f6a7b',
      }),
    }),
  })
  .meta({
    id: 'DamageAssessment',
    description:
      'A summary of one determination for the policy; the determination itself (signed, verifiable) is at links.determination.',
  });

export const policySchema = z
  .object({
    id: z.uuid(),
    policyNumber: z.string().meta({ example: 'KE-202611-7K3Q9X' }),
    status: z.enum(POLICY_STATUSES),
    premiumPaid: z.boolean(),
    sumInsured: z.number().meta({ description: 'Major units of `currency`' }),
    premium: z.number().meta({ description: 'Major units of `currency`' }),
    coverageType: z.enum([...CROP_COVERAGES, ...LIVESTOCK_COVERAGES]),
    onChainPolicyId,
    daysRemaining: z.number().int().min(0),
    payouts: z
      .array(
        z
          .object({
            payoutId: z.uuid(),
            determinationId: z.uuid(),
            status: z.enum(['PENDING', 'PROCESSING', 'COMPLETED', 'FAILED']),
            amount: z.string().meta({ description: 'Decimal string in `currency`', example: '12500.00' }),
            currency: z.string(),
            mobileMoneyRef: z.string().nullable(),
            reason: z.string().nullable(),
            updatedAt: timestamp,
            links: z.object({ payout: z.string() }),
          })
          .meta({ id: 'PayoutSummary' }),
      )
      .meta({ description: 'Tier 2 payouts of the policy, newest first (always empty in Tier 1)' }),
    damageAssessments: z
      .array(damageAssessmentSchema)
      .meta({ description: 'The determinations issued for the policy, newest assessedAt first' }),
    settlementMode: z.enum(SETTLEMENT_MODES),
    productType: z.enum(PRODUCT_TYPES),
    farmerId: z.uuid(),
    plotId: z.uuid().nullable(),
    herdId: z.uuid().nullable(),
    season: z.enum(SEASONS).nullable(),
    durationDays: z.number().int(),
    currency: z.string().meta({ example: 'KES' }),
    coverStartsAt: timestamp.nullable(),
    coverEndsAt: timestamp.nullable(),
    activatedAt: timestamp.nullable(),
    txHash: z.string().nullable(),
    premiumReference: z.string().nullable(),
    rateTableVersion: z.string(),
    createdAt: timestamp,
  })
  .meta({ id: 'Policy', description: 'A policy: the specified fields first, then ours.' });

export const paymentInstructionsSchema = z
  .object({
    amount: z.number().meta({ description: 'The premium, major units' }),
    policyNumber: z.string(),
    message: z.string(),
  })
  .meta({ id: 'PaymentInstructions' });

export const policyStatusSchema = z
  .object({
    id: z.uuid(),
    policyNumber: z.string(),
    status: z.enum(POLICY_STATUSES),
    premiumPaid: z.boolean(),
    activatedOnChain: z.boolean(),
    onChainPolicyId,
    coverStartsAt: timestamp.nullable(),
    coverEndsAt: timestamp.nullable(),
    daysRemaining: z.number().int().min(0),
    settlementMode: z.enum(SETTLEMENT_MODES),
    activation: z.object({
      activatedAt: timestamp.nullable(),
      via: z.enum(ACTIVATION_CHANNELS).nullable(),
      txHash: z.string().nullable(),
      pending: z.boolean().meta({ description: 'Tier 2: premium received, activation on chain under way' }),
      failedAttempts: z.number().int().min(0),
      lastError: z.string().nullable(),
    }),
    expiredAt: timestamp.nullable(),
    nextStep: z.string(),
  })
  .meta({ id: 'PolicyStatus' });

export const purchasePolicy = defineRoute({
  operationId: 'purchasePolicy',
  method: 'post',
  path: '/policies/purchase',
  summary: 'Buy a policy',
  description:
    'The body is checked first (400 INVALID_INPUT; a field of the other product is refused with the reason). Then the gates, in order: organization KYB-verified (403 FORBIDDEN), a current regulator licence for its market (403 REGULATOR_LICENSE_REQUIRED / _EXPIRED), recorded capacity with a live solvency attestation (400), farmer KYC APPROVED (400), the plot or herd is that farmer’s (404), remaining capacity (400). Creates a PENDING policy with payment instructions.\n\nSend an `Idempotency-Key` to make the purchase safe to retry: a repeat with the same key and the same body answers 201 with the policy the first request created (as it is now), marked `Idempotent-Replayed: true`, and reserves, writes and emits nothing; the same key with a different body is 409 CONFLICT. Without the header every request buys.',
  tags: ['Policies'],
  auth: 'partner',
  capability: 'policy:write',
  headers: idempotencyHeaders,
  body: purchaseBody,
  responses: {
    201: {
      description:
        'The PENDING policy and how to pay its premium; for a replay (same Idempotency-Key), the policy that key bought',
      data: z.object({ policy: policySchema, paymentInstructions: paymentInstructionsSchema }),
      headers: idempotentReplayHeaders,
    },
  },
  errors: ['NOT_FOUND', 'CONFLICT', 'REGULATOR_LICENSE_REQUIRED', 'REGULATOR_LICENSE_EXPIRED'],
});

export const policiesQuery = pageQuery.extend({
  status: z.enum(POLICY_STATUSES, oneOf(POLICY_STATUSES)).optional(),
  farmerId: uuid.optional(),
  productType: z.enum(PRODUCT_TYPES, oneOf(PRODUCT_TYPES)).optional(),
  settlementMode: z.enum(SETTLEMENT_MODES, oneOf(SETTLEMENT_MODES)).optional(),
});

export const listPolicies = defineRoute({
  operationId: 'listPolicies',
  method: 'get',
  path: '/policies',
  summary: 'List policies',
  description:
    'The organization’s policies, newest first (`createdAt`, then `id`, descending), optionally by `status`, `farmerId`, `productType` and `settlementMode`; the filters combine. Another organization’s policies never appear.',
  tags: ['Policies'],
  auth: 'partner',
  capability: 'policy:read',
  query: policiesQuery,
  responses: { 200: { description: 'A page of policies', item: policySchema } },
  errors: [],
});

export const getPolicy = defineRoute({
  operationId: 'getPolicy',
  method: 'get',
  path: '/policies/{id}',
  summary: 'Read a policy',
  tags: ['Policies'],
  auth: 'partner',
  capability: 'policy:read',
  params: idParams,
  responses: { 200: { description: 'The policy', data: policySchema } },
  errors: [],
});

export const getPolicyStatus = defineRoute({
  operationId: 'getPolicyStatus',
  method: 'get',
  path: '/policies/{id}/status',
  summary: "A policy's status and next step",
  tags: ['Policies'],
  auth: 'partner',
  capability: 'policy:read',
  params: idParams,
  responses: {
    200: { description: 'Status, activation progress and what to do next', data: policyStatusSchema },
  },
  errors: [],
});

export const activatePolicy = defineRoute({
  operationId: 'activatePolicy',
  method: 'put',
  path: '/policies/{id}/activate',
  summary: 'Activate a Tier 1 policy',
  description:
    'For DETERMINATION policies whose premium the partner collected: registers the policy on chain and makes it ACTIVE (emits `policy.activated`). Repeating it on an ACTIVE policy answers 200 with the policy unchanged. A chain failure is 502 BLOCKCHAIN_ERROR and changes nothing: retry. Tier 2 policies are activated by their payment (403).',
  tags: ['Policies'],
  auth: 'partner',
  capability: 'policy:write',
  params: idParams,
  body: activateBody,
  bodyOptional: true,
  responses: { 200: { description: 'The ACTIVE policy', data: policySchema } },
  errors: ['BLOCKCHAIN_ERROR'],
});

export const POLICY_ROUTES = [
  purchasePolicy,
  listPolicies,
  getPolicy,
  getPolicyStatus,
  activatePolicy,
] as const;
