import { z } from 'zod';
import { timestamp } from '../common';
import { DETERMINATION_KINDS, evidenceInput, PARTNER_SETTLEMENT_STATUSES } from './ingest';

// What partners and ops read of determinations and settlement reports (docs/determinations.md).

export const SETTLEMENT_OUTCOMES = ['SETTLED_FULL', 'SETTLED_PARTIAL', 'NOT_SETTLED'] as const;
export const SETTLEMENT_METHODS = ['MOBILE_MONEY', 'BANK_TRANSFER', 'CASH', 'OTHER'] as const;
export const AMOUNT_UNAVAILABLE_REASONS = ['CURRENCY_EXPONENT_UNREGISTERED', 'SETTLED_BY_SERVICE'] as const;
export const UNATTRIBUTED_REASONS = [
  'POLICY_NOT_FOUND',
  'POLICY_REFERENCE_MISMATCH',
  'POLICY_NOT_IN_FORCE',
  'KIND_MISMATCH',
  'OUTSIDE_COVER',
] as const;
export const DETERMINATION_STATUSES = ['ISSUED', 'UNATTRIBUTED'] as const;

const minorUnits = z
  .string()
  .regex(/^\d+$/)
  .meta({ description: 'Integer in minor units', example: '1250000' });

export const amountOwedSchema = z
  .object({
    amountMinor: minorUnits,
    amount: z
      .string()
      .meta({ description: 'Decimal string with exactly `exponent` decimals', example: '12500.00' }),
    currency: z.string().meta({ example: 'KES' }),
    exponent: z.number().int().min(0),
    damagePercentBp: z.number().int().min(0).max(10_000),
    basis: z.string().meta({ description: 'The formula in words, with the numbers' }),
  })
  .meta({
    id: 'AmountOwed',
    description:
      'min(sumInsured × damagePercentBp / 10000 truncated to the minor unit, the remaining cover): the amounts owed by all of a policy’s determinations together never exceed its sum insured. The remaining cover is the sum insured less what the policy’s earlier determinations owe; `basis` says when the cap applied. A determination on exhausted cover owes "0" and is still signed and delivered.',
  });

/**
 * The determination (docs/determinations.md, "The record"), as carried by
 * `determination.delivered` (the signed fields plus hash and links).
 */
const determinationFields = {
  determinationId: z.uuid(),
  policyId: z.string(),
  policyNumber: z.string(),
  kind: z.enum(DETERMINATION_KINDS),
  methodologyVersion: z.string(),
  triggered: z.boolean(),
  damagePercentBp: z.number().int().min(0).max(10_000),
  assessedAt: timestamp,
  canonicalHash: z.string().meta({ description: 'Lowercase hex SHA-256 of `canonicalPayload`' }),
  settlementMode: z.enum(['DETERMINATION', 'DETERMINATION_AND_SETTLEMENT']),
  settledByMicrocrop: z.boolean(),
  amountOwed: amountOwedSchema.nullable(),
  amountOwedUnavailableReason: z
    .string()
    .optional()
    .meta({
      description: `Present instead of a value when amountOwed is null: ${AMOUNT_UNAVAILABLE_REASONS.join(', ')}`,
    }),
};

const settlementStatusFields = {
  partnerSettlementStatus: z.enum(PARTNER_SETTLEMENT_STATUSES),
  dueAt: timestamp
    .nullable()
    .meta({ description: 'Tier 1 reporting due date; null when no report is expected' }),
  verifiedByMicrocrop: z.literal(false),
  verificationStatus: z.enum(['UNVERIFIED', 'NOT_APPLICABLE']),
};

export const determinationSummarySchema = z
  .object({
    ...determinationFields,
    links: z.object({ self: z.string(), evidence: z.string(), settlementReport: z.string() }),
    issuedAt: timestamp,
    ...settlementStatusFields,
  })
  .meta({
    id: 'DeterminationSummary',
    description: 'A determination in a list (its fields and its settlement status)',
  });

export const determinationSchema = determinationSummarySchema
  .extend({
    evidenceHash: z
      .string()
      .meta({ description: 'SHA-256 (hex) of the RFC 8785 canonical evidence; signed' }),
    signature: z.string().meta({ description: 'Ed25519 over the bytes of `canonicalPayload`, base64url' }),
    signatureAlgorithm: z.literal('Ed25519'),
    kid: z.string().meta({ description: 'RFC 7638 thumbprint of the signing key; find it in the JWKS' }),
    canonicalPayload: z.string().meta({ description: 'The exact signed bytes (RFC 8785 JSON) as a string' }),
  })
  .meta({ id: 'Determination', description: 'A signed, independently verifiable determination' });

export const evidenceSchema = z
  .object({
    determinationId: z.uuid(),
    evidenceHash: z.string(),
    evidence: evidenceInput.meta({ id: 'DeterminationEvidence' }),
    links: z.object({ determination: z.string() }),
  })
  .meta({ id: 'DeterminationEvidenceRecord' });

export const settlementReportSchema = z
  .object({
    id: z.uuid(),
    partnerReference: z.string(),
    outcome: z.enum(SETTLEMENT_OUTCOMES),
    method: z.enum(SETTLEMENT_METHODS),
    settledAmountMinor: minorUnits,
    settlementCurrency: z.string(),
    settledAt: timestamp,
    reportedAt: timestamp,
    supersedesReportId: z.uuid().nullable(),
    supersededByReportId: z.uuid().nullable(),
    notes: z.string().nullable(),
  })
  .meta({ id: 'SettlementReport', description: 'A settlement report: partner-attested, not verified by us' });

export const settlementReportRecordedSchema = z
  .object({
    replayed: z.boolean(),
    report: settlementReportSchema,
    determinationId: z.uuid(),
    partnerSettlementStatus: z.enum(PARTNER_SETTLEMENT_STATUSES),
    verifiedByMicrocrop: z.literal(false),
    verificationStatus: z.literal('UNVERIFIED'),
  })
  .meta({ id: 'SettlementReportResult' });

export const settlementReportListSchema = z
  .object({
    determinationId: z.uuid(),
    current: settlementReportSchema.nullable(),
    reports: z.array(settlementReportSchema).meta({ description: 'Newest first, superseded ones included' }),
    ...settlementStatusFields,
  })
  .meta({ id: 'SettlementReports' });

export const jwksSchema = z
  .object({
    keys: z.array(
      z.object({
        kty: z.literal('OKP'),
        crv: z.literal('Ed25519'),
        x: z.string(),
        kid: z.string(),
        use: z.literal('sig'),
        alg: z.literal('Ed25519'),
      }),
    ),
  })
  .meta({ id: 'Jwks' });

/**
 * What ops read: every determination, attributed or not. The fields of the ingestion and the
 * record's status always; once ISSUED, every field partners read as well (flat, as they see them).
 */
export const opsDeterminationSchema = determinationSchema
  .partial()
  .extend({
    determinationId: z.uuid(),
    status: z.enum(DETERMINATION_STATUSES),
    unattributedReason: z.enum(UNATTRIBUTED_REASONS).nullable(),
    idempotencyKey: z.string(),
    organizationId: z.uuid().nullable(),
    receivedAt: timestamp,
    policyId: z.string().nullable(),
    policyNumber: z.string().nullable(),
    kind: z.enum(DETERMINATION_KINDS),
    methodologyVersion: z.string(),
    triggered: z.boolean(),
    damagePercentBp: z.number().int().min(0).max(10_000),
    assessedAt: timestamp,
    owed: z
      .object({
        amountMinor: minorUnits,
        currency: z.string(),
        exponent: z.number().int().min(0),
      })
      .nullable()
      .meta({
        description:
          'What the determination makes owed in the policy’s currency, Tier 2 included (partners see a Tier 2 determination currency-neutral; its payout pays this). Capped by the policy’s remaining cover. null when unattributed or when the currency has no registered exponent.',
      }),
  })
  .meta({ id: 'OpsDetermination' });

export const ingestResultSchema = z
  .object({ replayed: z.boolean(), determination: opsDeterminationSchema })
  .meta({ id: 'DeterminationIngestResult' });
