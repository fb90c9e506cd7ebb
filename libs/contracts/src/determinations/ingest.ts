import { uuid } from '@parametric/http';
import { z } from 'zod';

/**
 * What an index pipeline (or ops) sends to issue one determination: the body of
 * `POST /ops/determinations`, each item of the batch door, and the payload of the
 * `determination-ingest` queue. One schema for all three doors.
 */

export const DETERMINATION_KINDS = ['CROP_DAMAGE', 'LIVESTOCK_MORTALITY_INDEX'] as const;
/** Which kind a policy's product takes (docs/determinations.md, "From index to amount owed"). */
export const KIND_OF_PRODUCT = { CROP: 'CROP_DAMAGE', LIVESTOCK: 'LIVESTOCK_MORTALITY_INDEX' } as const;

/** Where a determination stands with its Tier 1 settlement report (docs/determinations.md). */
export const PARTNER_SETTLEMENT_STATUSES = [
  /** Tier 1, triggered, something owed: the partner's report is awaited until `dueAt`. */
  'PENDING',
  'REPORTED',
  'OVERDUE',
  /** Tier 1 with nothing to settle (not triggered, or a zero amount). */
  'NOT_REQUIRED',
  /** Tier 2: the service settles; partners report nothing. */
  'NOT_APPLICABLE',
] as const;
export type PartnerSettlementStatus = (typeof PARTNER_SETTLEMENT_STATUSES)[number];

export const INGEST_LIMITS = {
  idempotencyKey: 200,
  batchItems: 1_000,
  text: 200,
  inputDataHashes: 100,
} as const;

const isoInstant = z.iso.datetime({ offset: true, error: 'must be an ISO 8601 date-time with a time zone' });
const shortText = (what: string) =>
  z
    .string({ error: 'must be a string' })
    .trim()
    .min(1, `${what} is required`)
    .max(INGEST_LIMITS.text, `must be at most ${INGEST_LIMITS.text} characters`);
/** Index values and thresholds: finite numbers; JCS serialises them exactly as ECMAScript does. */
const indexNumber = z
  .number({ error: 'must be a number' })
  .refine(Number.isFinite, 'must be a finite number');

export const inputDataHash = z.strictObject({
  name: shortText('name'),
  sha256: z
    .string({ error: 'must be a string' })
    .regex(/^[0-9a-f]{64}$/, 'must be a lowercase hex SHA-256 (64 characters)'),
});

/** Where the assessment applies: the plot's or herd's location, when the pipeline knows it. */
const location = z.strictObject({
  latitude: z.number({ error: 'must be a number' }).min(-90).max(90),
  longitude: z.number({ error: 'must be a number' }).min(-180).max(180),
});

export const evidenceInput = z
  .strictObject({
    indexName: shortText('indexName'),
    indexValue: indexNumber,
    triggerThreshold: indexNumber,
    exitThreshold: indexNumber,
    dataSource: shortText('dataSource'),
    dataSourceVersion: shortText('dataSourceVersion'),
    periodStart: isoInstant,
    periodEnd: isoInstant,
    inputDataHashes: z
      .array(inputDataHash, { error: 'must be an array' })
      .min(1, 'at least one input data hash is required')
      .max(INGEST_LIMITS.inputDataHashes, `at most ${INGEST_LIMITS.inputDataHashes} hashes`),
    location: location.optional(),
    unitId: shortText('unitId').optional(),
    season: shortText('season').optional(),
    notes: z.string({ error: 'must be a string' }).max(2_000).optional(),
  })
  .superRefine((e, ctx) => {
    if (Date.parse(e.periodEnd) < Date.parse(e.periodStart)) {
      ctx.addIssue({ code: 'custom', path: ['periodEnd'], message: 'must not be before periodStart' });
    }
    const names = new Set<string>();
    e.inputDataHashes.forEach((h, i) => {
      if (names.has(h.name)) {
        ctx.addIssue({ code: 'custom', path: ['inputDataHashes', i, 'name'], message: 'is listed twice' });
      }
      names.add(h.name);
    });
  })
  .meta({ id: 'DeterminationEvidenceInput' });

export const determinationIngestInput = z
  .strictObject({
    idempotencyKey: z
      .string({ error: 'must be a string' })
      .min(1, 'is required')
      .max(INGEST_LIMITS.idempotencyKey, `must be at most ${INGEST_LIMITS.idempotencyKey} characters`),
    policyId: uuid.optional(),
    policyNumber: shortText('policyNumber').optional(),
    kind: z.enum(DETERMINATION_KINDS, { error: `must be one of ${DETERMINATION_KINDS.join(', ')}` }),
    methodologyVersion: shortText('methodologyVersion'),
    triggered: z.boolean({ error: 'must be a boolean' }),
    damagePercentBp: z
      .number({ error: 'must be an integer' })
      .int('must be an integer')
      .min(0, 'must be between 0 and 10000')
      .max(10_000, 'must be between 0 and 10000'),
    assessedAt: isoInstant,
    evidence: evidenceInput,
  })
  .superRefine((d, ctx) => {
    if (d.policyId === undefined && d.policyNumber === undefined) {
      ctx.addIssue({ code: 'custom', path: ['policyId'], message: 'policyId or policyNumber is required' });
    }
    if (!d.triggered && d.damagePercentBp !== 0) {
      ctx.addIssue({ code: 'custom', path: ['damagePercentBp'], message: 'must be 0 when not triggered' });
    }
  })
  .meta({ id: 'DeterminationIngest' });

export type DeterminationIngestInput = z.infer<typeof determinationIngestInput>;
