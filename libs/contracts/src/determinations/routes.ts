import { defineRoute, uuid } from '@parametric/http';
import { z } from 'zod';
import {
  idParams,
  oneOf,
  pageQuery,
  preferenceAppliedHeaders,
  returnPreferenceHeaders,
  timestamp,
} from '../common';
import {
  DETERMINATION_KINDS,
  determinationIngestInput,
  INGEST_LIMITS,
  PARTNER_SETTLEMENT_STATUSES,
} from './ingest';
import {
  DETERMINATION_STATUSES,
  determinationSchema,
  determinationSummarySchema,
  evidenceSchema,
  ingestResultSchema,
  opsDeterminationSchema,
  SETTLEMENT_METHODS,
  SETTLEMENT_OUTCOMES,
  settlementReportListSchema,
  settlementReportRecordedSchema,
} from './schemas';

export const determinationsQuery = pageQuery.extend({
  policyId: uuid.optional(),
  triggered: z
    .enum(['true', 'false'], { error: 'must be true or false' })
    .transform((v) => v === 'true')
    .optional(),
  partnerSettlementStatus: z.enum(PARTNER_SETTLEMENT_STATUSES, oneOf(PARTNER_SETTLEMENT_STATUSES)).optional(),
});

export const listDeterminations = defineRoute({
  operationId: 'listDeterminations',
  method: 'get',
  path: '/determinations',
  summary: 'List determinations',
  description: "The organization's own determinations, newest first.",
  tags: ['Determinations'],
  auth: 'partner',
  capability: 'determination:read',
  query: determinationsQuery,
  responses: { 200: { description: 'A page of determinations', item: determinationSummarySchema } },
  errors: [],
});

export const getDetermination = defineRoute({
  operationId: 'getDetermination',
  method: 'get',
  path: '/determinations/{id}',
  summary: 'Read a signed determination',
  description:
    'Every field of the determination plus the signature, its `kid` and the exact signed bytes (`canonicalPayload`). Verify it with the public keys at `/.well-known/jwks.json` (docs/determinations.md). Another organization’s determination is `404`, like an unknown id.',
  tags: ['Determinations'],
  auth: 'partner',
  capability: 'determination:read',
  params: idParams,
  responses: { 200: { description: 'The determination', data: determinationSchema } },
  errors: [],
});

export const getDeterminationEvidence = defineRoute({
  operationId: 'getDeterminationEvidence',
  method: 'get',
  path: '/determinations/{id}/evidence',
  summary: 'Read the evidence behind a determination',
  description:
    'The index, thresholds, data source and input data hashes; `evidenceHash` is signed in the determination.',
  tags: ['Determinations'],
  auth: 'partner',
  capability: 'determination:read',
  params: idParams,
  responses: { 200: { description: 'The evidence', data: evidenceSchema } },
  errors: [],
});

const settledAtField = z.iso
  .datetime({ offset: true, error: 'must be an ISO 8601 date-time with a time zone' })
  .meta({
    description:
      'When the farmer was settled: not before the determination was issued (`issuedAt`) and not in the future, each within 60 s for clocks',
    example: '2026-11-20T09:30:00Z',
  });

export const settlementReportBody = z
  .strictObject({
    partnerReference: z
      .string({ error: 'must be a string' })
      .trim()
      .min(1, 'is required')
      .max(200, 'must be at most 200 characters'),
    outcome: z.enum(SETTLEMENT_OUTCOMES, oneOf(SETTLEMENT_OUTCOMES)),
    method: z.enum(SETTLEMENT_METHODS, oneOf(SETTLEMENT_METHODS)),
    settledAmountMinor: z
      .string({ error: 'must be a string holding an integer in minor units' })
      .regex(
        /^(0|[1-9]\d{0,17})$/,
        'must be a non-negative integer in minor units, as a string (e.g. "125000")',
      ),
    settlementCurrency: z
      .string({ error: 'must be a string' })
      .regex(/^[A-Z]{3}$/, 'must be an ISO 4217 currency code'),
    settledAt: settledAtField,
    supersedesReportId: uuid.optional(),
    notes: z.string({ error: 'must be a string' }).max(2_000, 'must be at most 2000 characters').optional(),
  })
  .meta({
    id: 'SettlementReportRequest',
    example: {
      partnerReference: 'COOP-PAY-2026-0042',
      outcome: 'SETTLED_FULL',
      method: 'MOBILE_MONEY',
      settledAmountMinor: '1250000',
      settlementCurrency: 'KES',
      settledAt: '2026-11-20T09:30:00Z',
    },
  });

export const recordSettlementReport = defineRoute({
  operationId: 'recordSettlementReport',
  method: 'post',
  path: '/determinations/{id}/settlement-report',
  summary: 'Report how the farmer was settled (Tier 1)',
  description:
    'Partner-attested and not verified by us. Idempotent on (determination, `partnerReference`): the same body again is `200` with `replayed: true`, nothing written or emitted; a different body is `409`. A correction names the current report in `supersedesReportId`. The amount may not exceed the amount owed; `SETTLED_FULL` is exactly the amount owed, `SETTLED_PARTIAL` less, `NOT_SETTLED` zero. `settledAt` lies between the determination’s issue and now. A determination that owes nothing (not triggered, or triggered at 0 bp: `NOT_REQUIRED`) takes no report (`400`). Policies we settle (Tier 2) answer `403 NOT_PARTNER_SETTLED`.',
  tags: ['Determinations'],
  auth: 'partner',
  capability: 'settlement-report:write',
  params: idParams,
  body: settlementReportBody,
  responses: {
    201: {
      description: 'Recorded; `determination.settlement_report_recorded` is sent',
      data: settlementReportRecordedSchema,
    },
    200: {
      description: 'A replay: the stored report, nothing written',
      data: settlementReportRecordedSchema,
    },
  },
  errors: ['CONFLICT', 'NOT_PARTNER_SETTLED'],
});

export const getSettlementReports = defineRoute({
  operationId: 'getSettlementReports',
  method: 'get',
  path: '/determinations/{id}/settlement-report',
  summary: 'Read the settlement reports of a determination',
  description:
    'Every report, newest first, superseded ones included (the correction chain is the audit trail). `current` is the newest report not superseded. All content is partner-attested and unverified.',
  tags: ['Determinations'],
  auth: 'partner',
  capability: 'determination:read',
  params: idParams,
  responses: { 200: { description: 'The reports', data: settlementReportListSchema } },
  errors: [],
});

export const getJwks = defineRoute({
  operationId: 'getJwks',
  method: 'get',
  path: '/.well-known/jwks.json',
  summary: 'Public keys that sign determinations',
  description:
    'A JSON Web Key Set (Ed25519, RFC 8037) without the envelope, as JOSE libraries expect it. No key needed; cacheable. Retired keys stay listed so older determinations still verify; pick the key by `kid`.',
  tags: ['Determinations'],
  auth: 'none',
  ignoresQuery: true,
  responses: { 200: { description: 'The JWKS', contentType: 'application/jwk-set+json' } },
  errors: [],
});

/** The longest a sandbox test determination's Tier 1 report may be due in: the production term. */
export const SANDBOX_MAX_DUE_SECONDS = 2_592_000;

export const sandboxDeterminationBody = z
  .strictObject({
    policyId: uuid.meta({ description: 'One of your own ACTIVE (or EXPIRED) policies' }),
    triggered: z.boolean({ error: 'must be a boolean' }),
    damagePercentBp: z
      .number({ error: 'must be an integer' })
      .int('must be an integer')
      .min(0, 'must be between 0 and 10000')
      .max(10_000, 'must be between 0 and 10000'),
    kind: z.enum(DETERMINATION_KINDS, oneOf(DETERMINATION_KINDS)).optional().meta({
      description:
        'The policy’s own kind (`CROP_DAMAGE` for crop, `LIVESTOCK_MORTALITY_INDEX` for livestock) when left out; another is `400`',
    }),
    dueInSeconds: z
      .number({ error: 'must be an integer' })
      .int('must be an integer')
      .min(1, 'must be at least 1')
      .max(
        SANDBOX_MAX_DUE_SECONDS,
        `must be at most ${SANDBOX_MAX_DUE_SECONDS} (30 days, the production term)`,
      )
      .optional()
      .meta({
        description:
          'Tier 1: when the settlement report falls due, from issue (default the production term, 30 days). A short one lets `determination.settlement_report_overdue` be tried: it is sent by the overdue sweep, which runs every few minutes.',
      }),
  })
  .superRefine((body, ctx) => {
    if (!body.triggered && body.damagePercentBp !== 0) {
      ctx.addIssue({ code: 'custom', path: ['damagePercentBp'], message: 'must be 0 when not triggered' });
    }
  })
  .meta({
    id: 'SandboxDeterminationRequest',
    example: { policyId: '8e7d6c5b-4a39-4281-9f0e-d1c2b3a49586', triggered: true, damagePercentBp: 4000 },
  });

export const createSandboxDetermination = defineRoute({
  operationId: 'createSandboxDetermination',
  method: 'post',
  path: '/sandbox/determinations',
  summary: 'Issue a test determination (sandbox organizations)',
  description:
    'A real, signed determination for one of your own policies, issued through the same ingestion as the index pipeline’s, so `determination.delivered`, settlement reports, corrections and `determination.settlement_report_overdue` follow as in production. Signed with a sandbox key: the JWKS lists it marked `"environment": "sandbox"`, and live verifiers refuse it (docs/determinations.md, "Public keys"). Its evidence says it is a test (`dataSource: "sandbox"`). A live organization gets `404`; another organization’s policy, or an unknown one, is `404`; a policy not yet ACTIVE is `400`. Each call issues a new determination (no `Idempotency-Key`).',
  tags: ['Sandbox'],
  auth: 'partner',
  capability: 'policy:write',
  body: sandboxDeterminationBody,
  responses: { 201: { description: 'The determination, signed', data: determinationSchema } },
  errors: ['INVALID_INPUT', 'NOT_FOUND'],
});

export const DETERMINATION_ROUTES = [
  listDeterminations,
  getDetermination,
  getDeterminationEvidence,
  recordSettlementReport,
  getSettlementReports,
  getJwks,
  createSandboxDetermination,
] as const;

// Ops: ingestion (the index pipeline's door) and the unattributed queue.

export const batchIngestBody = z
  .strictObject({
    items: z
      .array(z.unknown(), { error: 'must be an array' })
      .min(1, 'at least one item is required')
      .max(INGEST_LIMITS.batchItems, `at most ${INGEST_LIMITS.batchItems} items`)
      .meta({ description: 'Each item is a `DeterminationIngest`, validated on its own' }),
  })
  .meta({ id: 'DeterminationIngestBatch' });

const errorShape = z.object({
  code: z.string(),
  message: z.string(),
  details: z.array(z.object({ field: z.string(), message: z.string() })).optional(),
});

export const batchIngestResultSchema = z
  .object({
    results: z.array(
      z.object({
        index: z.number().int().min(0),
        status: z.number().int().meta({ description: '201 new, 200 replay, 400/409/503 refused' }),
        replayed: z.boolean().optional(),
        determination: opsDeterminationSchema.optional(),
        error: errorShape.optional(),
      }),
    ),
    summary: z.object({
      created: z.number().int(),
      replayed: z.number().int(),
      failed: z.number().int(),
    }),
  })
  .meta({ id: 'DeterminationIngestBatchResult' });

export const opsIngestDetermination = defineRoute({
  operationId: 'opsIngestDetermination',
  method: 'post',
  path: '/determinations',
  summary: 'Ingest one determination',
  description:
    'Attributes it to a policy (ACTIVE or EXPIRED, cover overlapping the observation period), computes the amount owed, signs and stores it, and sends `determination.delivered`. One that cannot be attributed is kept `UNATTRIBUTED` and sends nothing. Idempotent on `idempotencyKey`: the same content again is `200` with `replayed: true`; different content is `409`.',
  tags: ['Determinations'],
  auth: 'opsBearer',
  capability: 'ops.determination:ingest',
  body: determinationIngestInput,
  responses: {
    201: { description: 'A new determination', data: ingestResultSchema },
    200: { description: 'A replay of the same key and content', data: ingestResultSchema },
  },
  errors: ['CONFLICT'],
});

export const opsIngestDeterminationBatch = defineRoute({
  operationId: 'opsIngestDeterminationBatch',
  method: 'post',
  path: '/determinations/batch',
  summary: 'Ingest up to 1,000 determinations',
  description:
    'Each item is handled as `POST /determinations` would handle it, and gets its own result (status, determination or error with field details). Items are independent: one refused item refuses nothing else.\n\nA pipeline that needs only what each item became sends `Prefer: return=minimal`: each determination then carries its ingestion fields (id, status, organization, policy, amount owed) without the signed payload, signature and canonical bytes, which are most of a full answer (read them with `GET /determinations/{id}`).',
  tags: ['Determinations'],
  auth: 'opsBearer',
  capability: 'ops.determination:ingest',
  headers: returnPreferenceHeaders,
  body: batchIngestBody,
  responses: {
    200: {
      description: 'Per-item results and a summary',
      data: batchIngestResultSchema,
      headers: preferenceAppliedHeaders,
    },
  },
  errors: [],
});

export const opsDeterminationsQuery = pageQuery.extend({
  status: z.enum(DETERMINATION_STATUSES, oneOf(DETERMINATION_STATUSES)).optional(),
  organizationId: uuid.optional(),
  policyId: uuid.optional(),
  kind: z.enum(DETERMINATION_KINDS, oneOf(DETERMINATION_KINDS)).optional(),
});

export const opsListDeterminations = defineRoute({
  operationId: 'opsListDeterminations',
  method: 'get',
  path: '/determinations',
  summary: 'List determinations (all organizations)',
  description: 'Newest first. `status=UNATTRIBUTED` is the queue of assessments no policy could take.',
  tags: ['Determinations'],
  auth: 'opsBearer',
  capability: 'ops.determination:read',
  query: opsDeterminationsQuery,
  responses: { 200: { description: 'A page of determinations', item: opsDeterminationSchema } },
  errors: [],
});

export const opsGetDetermination = defineRoute({
  operationId: 'opsGetDetermination',
  method: 'get',
  path: '/determinations/{id}',
  summary: 'Read any determination',
  tags: ['Determinations'],
  auth: 'opsBearer',
  capability: 'ops.determination:read',
  params: idParams,
  responses: { 200: { description: 'The determination', data: opsDeterminationSchema } },
  errors: [],
});

export const PAYABLE_PAGE_LIMIT = 1_000;

export const payableDeterminationsQuery = z
  .object({
    issuedFrom: timestamp.optional().meta({ description: 'Only determinations issued at or after this' }),
    afterId: uuid.optional().meta({
      description:
        'With `issuedFrom`: skip those issued exactly at `issuedFrom` whose id is not greater (a cursor: the last item of the previous page)',
    }),
    issuedBefore: timestamp.optional().meta({ description: 'Only determinations issued before this' }),
    limit: z.coerce
      .number({ error: 'must be an integer' })
      .int('must be an integer')
      .min(1, 'must be at least 1')
      .max(PAYABLE_PAGE_LIMIT, `must be at most ${PAYABLE_PAGE_LIMIT}`)
      .default(500),
  })
  .superRefine((q, ctx) => {
    if (q.afterId !== undefined && q.issuedFrom === undefined) {
      ctx.addIssue({ code: 'custom', path: ['afterId'], message: 'needs issuedFrom' });
    }
  });

export const opsListPayableDeterminations = defineRoute({
  operationId: 'opsListPayableDeterminations',
  method: 'get',
  path: '/payable-determinations',
  summary: 'List determinations that owe a Tier 2 payout',
  description:
    'Issued, triggered Tier 2 (`DETERMINATION_AND_SETTLEMENT`) determinations with a non-zero amount owed, oldest first by (`issuedAt`, id): what the payments service’s origination sweep pages through to find any without a payout. Page on with `issuedFrom` and `afterId` of the last item.',
  tags: ['Determinations'],
  auth: 'opsBearer',
  capability: 'ops.determination:read',
  query: payableDeterminationsQuery,
  responses: {
    200: { description: 'Up to `limit` determinations, oldest first', data: z.array(opsDeterminationSchema) },
  },
  errors: [],
});

export const DETERMINATION_OPS_ROUTES = [
  opsIngestDetermination,
  opsIngestDeterminationBatch,
  opsListDeterminations,
  opsListPayableDeterminations,
  opsGetDetermination,
] as const;
