import { defineRoute, type OpsCapability } from '@parametric/http';
import { MARKET_CURRENCY, MARKETS } from '@parametric/money';
import { z } from 'zod';
import { approvalRequestedResponse } from './approvals';
import { idParams, mobileMoneyMarketsText, pageQuery, timestamp, uuid } from './common';
import {
  apiKeyMetadataSchema,
  credentialsSchema,
  ENVIRONMENTS,
  organizationSchema,
  SERVICE_TIERS,
} from './gateway';
import { farmerSchema } from './policy/farmers';
import { POLICY_NUMBER_PATTERN, policySchema } from './policy/policies';

/** The years an ops date (a licence expiry, a solvency attestation) may fall in. */
export const OPS_DATE_MIN_YEAR = 2000;
export const OPS_DATE_MAX_YEAR = 9999;

/**
 * An ISO 8601 date-time between the years 2000 and 9999 (UTC): a year such as 0000 is a typing
 * mistake, not a licence, and would make every expiry check pass or fail for the wrong reason.
 */
const isoDate = z.iso
  .datetime({ offset: true, error: 'must be an ISO 8601 date-time' })
  .refine(
    (v) => {
      const year = new Date(v).getUTCFullYear();
      // Not a date at all is the format check's message, not this one's.
      return Number.isNaN(year) || (year >= OPS_DATE_MIN_YEAR && year <= OPS_DATE_MAX_YEAR);
    },
    {
      error: `must be a date-time between ${OPS_DATE_MIN_YEAR}-01-01 and ${OPS_DATE_MAX_YEAR}-12-31 (UTC)`,
      abort: true,
    },
  )
  .transform((v) => new Date(v));

export const opsOrganizationSchema = organizationSchema
  .omit({ webhookUrl: true })
  .extend({
    kybNotes: z.string().nullable(),
    kybUpdatedAt: timestamp.nullable(),
    apiKey: apiKeyMetadataSchema.nullable(),
  })
  .meta({ id: 'OpsOrganization' });

/**
 * The organization as `GET /ops/organizations/{id}` reads it: the above plus the webhook URL, read
 * from the webhooks service (which owns it) exactly as `GET /organizations/me` reads it, so ops
 * and the partner see one value. The write actions' answers leave it out: they report what they
 * changed, and none of them depends on the webhooks service being up.
 */
export const opsOrganizationReadSchema = opsOrganizationSchema
  .extend({
    webhookUrl: z.string().nullable().meta({
      description:
        'The webhook URL the webhooks service holds for the organization (what the partner sees on GET /organizations/me); null until one is set',
    }),
  })
  .meta({ id: 'OpsOrganizationRead' });

export const kybBody = z
  .strictObject({
    status: z.enum(['VERIFIED', 'REJECTED'], { error: 'must be VERIFIED or REJECTED' }),
    notes: z.string().trim().max(2000).optional(),
  })
  .meta({ id: 'KybDecision', example: { status: 'VERIFIED', notes: 'Certificate of registration checked' } });

export const tierBody = z
  .strictObject({
    serviceTier: z.enum(SERVICE_TIERS, { error: `must be one of ${SERVICE_TIERS.join(', ')}` }),
  })
  .meta({ id: 'ServiceTierChange' });

export const kycBody = z
  .strictObject({ status: z.enum(['APPROVED', 'REJECTED'], { error: 'must be APPROVED or REJECTED' }) })
  .meta({ id: 'KycDecision' });

export const licenceBody = z
  .strictObject({
    market: z.enum(MARKETS, { error: `must be one of ${MARKETS.join(', ')}` }),
    licenceNumber: z.string().trim().min(1, 'is required').max(64),
    // Optional on purpose: a licence recorded without an expiry is treated as expired
    // (docs/ops.md, "Underwriting setup").
    expiresAt: isoDate.nullable().optional(),
  })
  .meta({
    id: 'LicenceRequest',
    example: { market: 'KE', licenceNumber: 'IRA/2026/0042', expiresAt: '2027-06-30T00:00:00Z' },
  });

// Capacity backs policies, which are sold in their market's currency.
const currencies = [...new Set(Object.values(MARKET_CURRENCY))] as [string, ...string[]];

export const capacityBody = z
  .strictObject({
    amount: z
      .number({ error: 'must be a number' })
      .positive('must be positive')
      .max(1e12, 'must be at most 1,000,000,000,000')
      .refine((n) => /^\d+(\.\d{1,2})?$/.test(String(n)), 'must have at most 2 decimal places'),
    currency: z.enum(currencies, { error: `must be one of ${currencies.join(', ')}` }),
    solvencyAttestedUntil: isoDate,
  })
  .meta({
    id: 'CapacityRequest',
    example: { amount: 10000000, currency: 'KES', solvencyAttestedUntil: '2027-06-30T00:00:00Z' },
  });

export const licenceSchema = z
  .object({
    market: z.enum(MARKETS),
    licenceNumber: z.string(),
    expiresAt: timestamp.nullable(),
    updatedAt: timestamp,
  })
  .meta({ id: 'Licence' });

export const capacitySchema = z
  .object({
    currency: z.string(),
    amount: z.string().meta({ description: 'Decimal string, major units' }),
    reserved: z.string(),
    remaining: z.string(),
    solvencyAttestedUntil: timestamp,
    sandbox: z.boolean().meta({
      description:
        "A sandbox organization's made-up capacity, recorded at its registration: not a real insurer's",
    }),
    updatedAt: timestamp,
  })
  .meta({ id: 'Capacity' });

const opsOrganizationRoute = <const P extends string, const B extends z.ZodType | undefined>(
  operationId: string,
  path: P,
  summary: string,
  body: B,
  capability: OpsCapability,
  description?: string,
) =>
  defineRoute({
    operationId,
    method: 'post',
    path,
    summary,
    ...(description ? { description } : {}),
    tags: ['Organizations'],
    auth: 'opsBearer',
    capability,
    params: idParams,
    body,
    responses: { 200: { description: 'The organization as ops see it', data: opsOrganizationSchema } },
    errors: [],
  });

export const opsGetOrganization = defineRoute({
  operationId: 'opsGetOrganization',
  method: 'get',
  path: '/organizations/{id}',
  summary: 'Read an organization',
  tags: ['Organizations'],
  auth: 'opsBearer',
  capability: 'ops.organization:read',
  params: idParams,
  responses: {
    200: {
      description:
        'The organization as ops see it, with its webhook URL (503 SERVICE_UNAVAILABLE while the webhooks service cannot be asked)',
      data: opsOrganizationReadSchema,
    },
  },
  errors: [],
});

export const opsSetKyb = opsOrganizationRoute(
  'opsSetKyb',
  '/organizations/{id}/kyb',
  'Record a KYB decision (emits kyb.verified / kyb.rejected; repeating the current status emits nothing)',
  kybBody,
  'ops.organization:write',
);
export const opsSetServiceTier = defineRoute({
  operationId: 'opsSetServiceTier',
  method: 'post',
  path: '/organizations/{id}/service-tier',
  summary: 'Change the service tier (existing policies keep the settlement mode frozen at sale)',
  description: `\`DETERMINATION_AND_SETTLEMENT\` (Tier 2) collects premiums and pays farmers by mobile money, so it is open only to an organization whose market has a provider (${mobileMoneyMarketsText()}): elsewhere the change is \`400 INVALID_INPUT\` naming \`serviceTier\` and the market, and nothing changes. A sandbox organization may have it: its premiums and payouts go only to the M-Pesa simulator’s test numbers (docs/api.md, "Sandbox"). Back to \`DETERMINATION\` is always allowed. Asked by an operator, a change of tier is \`202\` with a pending approval (four eyes); asking for the current tier changes nothing and answers \`200\`.`,
  tags: ['Organizations'],
  auth: 'opsBearer',
  capability: 'ops.service-tier:write',
  params: idParams,
  body: tierBody,
  responses: {
    200: { description: 'The organization as ops see it', data: opsOrganizationSchema },
    202: approvalRequestedResponse,
  },
  errors: [],
});
export const opsDeactivate = opsOrganizationRoute(
  'opsDeactivateOrganization',
  '/organizations/{id}/deactivate',
  'Deactivate an organization (its key and its users’ dashboard tokens then get 403, sign-in too)',
  undefined,
  'ops.organization:write',
);
export const opsActivate = opsOrganizationRoute(
  'opsActivateOrganization',
  '/organizations/{id}/activate',
  'Re-activate an organization',
  undefined,
  'ops.organization:write',
);

export const opsRotateApiKey = defineRoute({
  operationId: 'opsRotateApiKey',
  method: 'post',
  path: '/organizations/{id}/api-key/rotate',
  summary: "Rotate an organization's API key (e.g. after it revoked its only key)",
  tags: ['Organizations'],
  auth: 'opsBearer',
  capability: 'ops.api-key:rotate',
  params: idParams,
  responses: { 200: { description: 'The new credentials, once', data: credentialsSchema } },
  errors: [],
});

/** A farmer as ops (and the payments service, paying the farmer) read it. */
export const opsFarmerSchema = farmerSchema.extend({ organizationId: z.uuid() }).meta({ id: 'OpsFarmer' });

export const opsGetFarmer = defineRoute({
  operationId: 'opsGetFarmer',
  method: 'get',
  path: '/farmers/{id}',
  summary: 'Read any farmer',
  description: 'The payments service reads the phone number a Tier 2 payout goes to here.',
  tags: ['Farmers'],
  auth: 'opsBearer',
  capability: 'ops.farmer:read',
  params: idParams,
  responses: { 200: { description: 'The farmer and its organization', data: opsFarmerSchema } },
  errors: [],
});

export const opsSetFarmerKyc = defineRoute({
  operationId: 'opsSetFarmerKyc',
  method: 'post',
  path: '/farmers/{id}/kyc',
  summary: "Record a farmer's KYC decision",
  tags: ['Farmers'],
  auth: 'opsBearer',
  capability: 'ops.farmer:write',
  params: idParams,
  body: kycBody,
  responses: {
    200: { description: 'The farmer and its organization', data: opsFarmerSchema },
  },
  errors: [],
});

export const opsRecordLicence = defineRoute({
  operationId: 'opsRecordLicence',
  method: 'post',
  path: '/organizations/{id}/licences',
  summary: 'Record a regulator licence (one per market; replaces the previous one)',
  tags: ['Underwriting'],
  auth: 'opsBearer',
  capability: 'ops.underwriting:write',
  params: idParams,
  body: licenceBody,
  responses: { 200: { description: 'The licence', data: licenceSchema } },
  errors: [],
});

export const opsRecordCapacity = defineRoute({
  operationId: 'opsRecordCapacity',
  method: 'post',
  path: '/organizations/{id}/capacity',
  summary: 'Record underwriting capacity and the solvency attestation',
  description:
    'Asked by an operator, an increase of more than OPS_APPROVAL_CAPACITY_THRESHOLD (in the capacity’s currency) over the capacity recorded now (none counts as zero; another currency counts as zero) is `202` with a pending approval (four eyes). A decrease, or an increase within the threshold, is recorded at once.',
  tags: ['Underwriting'],
  auth: 'opsBearer',
  capability: 'ops.underwriting:write',
  params: idParams,
  body: capacityBody,
  responses: { 200: { description: 'The capacity', data: capacitySchema }, 202: approvalRequestedResponse },
  errors: [],
});

export const opsGetUnderwriting = defineRoute({
  operationId: 'opsGetUnderwriting',
  method: 'get',
  path: '/organizations/{id}/underwriting',
  summary: "An organization's licences and capacity",
  tags: ['Underwriting'],
  auth: 'opsBearer',
  capability: 'ops.organization:read',
  params: idParams,
  responses: {
    200: {
      description: 'Licences and capacity',
      data: z.object({ licences: z.array(licenceSchema), capacity: capacitySchema.nullable() }),
    },
  },
  errors: [],
});

const minorUnits = z
  .string()
  .regex(/^\d+$/)
  .meta({ description: 'Integer in minor units of `currency`, as a string', example: '5000000' });

/**
 * A policy as ops (and the determinations service attributing a determination) read it: the
 * partner's view, plus whose it is and its money exactly, and where its capacity stands.
 */
export const opsPolicySchema = policySchema
  .extend({
    organizationId: z.uuid(),
    exponent: z.number().int().min(0).meta({ description: 'Minor-unit exponent of `currency`' }),
    sumInsuredMinor: minorUnits,
    premiumMinor: minorUnits,
    expiredAt: timestamp.nullable(),
    capacityReleasedAt: timestamp.nullable().meta({
      description:
        'When the capacity sweep gave the sum insured back to the organization (claims window over, no report pending); null while it is reserved',
    }),
    environment: z.enum(ENVIRONMENTS).meta({
      description:
        'The organization’s environment when the policy was sold: a `sandbox` policy’s determinations are signed with the sandbox keys, and its premium and payouts move only to the M-Pesa simulator’s test numbers (docs/api.md, "Sandbox")',
    }),
  })
  .meta({ id: 'OpsPolicy' });

export const opsGetPolicy = defineRoute({
  operationId: 'opsGetPolicy',
  method: 'get',
  path: '/policies/{id}',
  summary: 'Read any organization’s policy by id',
  tags: ['Policies'],
  auth: 'opsBearer',
  capability: 'ops.policy:read',
  params: idParams,
  responses: { 200: { description: 'The policy as ops see it', data: opsPolicySchema } },
  errors: [],
});

export const opsGetPolicyByNumber = defineRoute({
  operationId: 'opsGetPolicyByNumber',
  method: 'get',
  path: '/policies/by-number/{policyNumber}',
  summary: 'Read any organization’s policy by its policy number',
  description:
    'Policy numbers are unique across the platform. A malformed number is 400, an unknown one 404.',
  tags: ['Policies'],
  auth: 'opsBearer',
  capability: 'ops.policy:read',
  params: z.object({
    policyNumber: z
      .string()
      .regex(POLICY_NUMBER_PATTERN, 'must be a policy number such as KE-202611-7K3Q9X')
      .meta({ description: 'The policy number partners and farmers quote', example: 'KE-202611-7K3Q9X' }),
  }),
  responses: { 200: { description: 'The policy as ops see it', data: opsPolicySchema } },
  errors: [],
});

/** At most this many ids and as many numbers in one look-up: the ops batch door's size. */
export const POLICY_LOOKUP_MAX = 1_000;

export const opsLookupPoliciesBody = z
  .strictObject({
    policyIds: z.array(uuid).max(POLICY_LOOKUP_MAX).default([]),
    // Any text: a number that is not one finds nothing, as `GET /policies/by-number/{n}` answers.
    policyNumbers: z.array(z.string().min(1).max(200)).max(POLICY_LOOKUP_MAX).default([]),
  })
  .meta({ id: 'OpsPolicyLookup' });

export const opsLookupPolicies = defineRoute({
  operationId: 'opsLookupPolicies',
  method: 'post',
  path: '/policies/lookup',
  summary: 'Read many policies of any organization by id or number',
  description:
    'The policies found among `policyIds` and `policyNumbers`, each once, in no particular order; ids and numbers that name no policy are left out. Changes nothing (POST only to carry up to 1,000 of each).',
  tags: ['Policies'],
  auth: 'opsBearer',
  capability: 'ops.policy:read',
  changesNothing: true,
  body: opsLookupPoliciesBody,
  responses: {
    200: {
      description: 'The policies found',
      data: z.object({ policies: z.array(opsPolicySchema) }),
    },
  },
  errors: [],
});

export const getOpsOpenApiDocument = defineRoute({
  operationId: 'getOpsOpenApiDocument',
  method: 'get',
  path: '/openapi.json',
  summary: 'This document',
  description: 'The OpenAPI 3.1.0 document of the ops API (needs the ops token).',
  tags: ['Meta'],
  auth: 'opsBearer',
  capability: 'ops.document:read',
  ignoresQuery: true,
  responses: { 200: { description: 'The OpenAPI document', contentType: 'application/json' } },
  errors: [],
});

/** Ops routes the gateway serves itself. */
/** One ops action as the audit trail keeps it. */
export const auditEntrySchema = z
  .object({
    id: z.string(),
    at: z.string().meta({ description: 'When the action was answered (ISO 8601)' }),
    actor: z.string().meta({
      description:
        'Who: `operator:<id>` for an operator, `client:<id>` for a machine client, `ops-token:<fingerprint>` for the break-glass ops token',
    }),
    actorKind: z
      .enum(['operator', 'client', 'break-glass'])
      .nullable()
      .meta({ description: 'What kind of caller acted (null on entries recorded before operators existed)' }),
    actorEmail: z.string().nullable().meta({ description: 'The operator’s email; null for anyone else' }),
    actorName: z.string().nullable().meta({ description: 'The machine client’s name; null for anyone else' }),
    actorRole: z.string().nullable().meta({
      description:
        'The role the action was taken with (`BREAK_GLASS` for the shared token); for a machine client, its token’s scopes, space-separated',
    }),
    action: z.string().meta({
      description:
        'The operationId of the ops route, e.g. `opsSetKyb`; `opsQueueDashboard` for a job retried or removed through the queue dashboard (`/ops/queues`)',
    }),
    method: z.string(),
    path: z.string().meta({ description: 'The path called, ids included' }),
    organizationId: z.string().nullable(),
    targetId: z
      .string()
      .nullable()
      .meta({ description: 'The id in the path (organization, farmer, policy, payout…)' }),
    status: z.number().int().meta({ description: 'The HTTP status the action was answered with' }),
    requestId: z.string(),
    request: z
      .unknown()
      .meta({ description: 'The body sent, secrets and personal data redacted; null without one' }),
    before: z.unknown().meta({
      description:
        'The organization before the action, for actions on an organization the gateway holds; else null',
    }),
    after: z
      .unknown()
      .meta({ description: 'What the action answered (`data`), redacted like `request`; null when refused' }),
    approval: z
      .object({
        id: z.string(),
        requestedBy: z.object({ id: z.string(), email: z.string().nullable(), role: z.string() }),
        approvedBy: z.object({ id: z.string(), email: z.string().nullable(), role: z.string() }),
      })
      .nullable()
      .meta({
        description:
          'For an action carried out on approval (four eyes): the approval, who asked for it and who approved it (the actor). Null otherwise.',
      }),
  })
  .meta({ id: 'AuditEntry' });

export const auditQuery = pageQuery
  .extend({
    organizationId: uuid.optional(),
    action: z
      .string()
      .regex(/^ops[A-Za-z]+$/, 'must be an ops operationId, e.g. opsSetKyb')
      .optional(),
    actor: z
      .string()
      .min(1)
      .max(254)
      .optional()
      .meta({ description: 'An operator’s id or email, or an entry’s `actor` (`ops-token:<fingerprint>`)' }),
    from: timestamp.optional(),
    to: timestamp.optional(),
  })
  .strict();

export const opsListAudit = defineRoute({
  operationId: 'opsListAudit',
  method: 'get',
  path: '/audit',
  summary: 'The audit trail of ops actions',
  description:
    'Every ops action that changes something (KYB, service tier, activation, key rotation, licences, capacity, KYC, determination ingestion, payout retries…), newest first: who, what, when, the answer, and before/after. Refused attempts change nothing and are not recorded. Append-only: no route edits or deletes an entry.',
  tags: ['Audit'],
  auth: 'opsBearer',
  capability: 'ops.audit:read',
  query: auditQuery,
  responses: { 200: { description: 'A page of audit entries', item: auditEntrySchema } },
  errors: [],
});

export const GATEWAY_OPS_ROUTES = [
  opsGetOrganization,
  opsSetKyb,
  opsSetServiceTier,
  opsDeactivate,
  opsActivate,
  opsRotateApiKey,
  opsListAudit,
] as const;

/** Ops routes the policy service serves (the gateway forwards them). */
export const POLICY_OPS_ROUTES = [
  opsGetFarmer,
  opsSetFarmerKyc,
  opsRecordLicence,
  opsRecordCapacity,
  opsGetUnderwriting,
  opsGetPolicy,
  opsGetPolicyByNumber,
  opsLookupPolicies,
] as const;
