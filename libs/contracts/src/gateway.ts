import { defineRoute } from '@parametric/http';
import { MARKETS } from '@parametric/money';
import { z } from 'zod';
import { phoneNumber, timestamp } from './common';
import { email, newPassword, userSchema } from './users';

/** The spec names COOPERATIVE; the rest is our decision (docs/decisions.md). */
export const ORGANIZATION_TYPES = [
  'COOPERATIVE',
  'LENDER',
  'AGRITECH',
  'INPUT_SUPPLIER',
  'NGO',
  'INSURER',
  'OTHER',
] as const;
export const KYB_STATUSES = ['NOT_STARTED', 'VERIFIED', 'REJECTED'] as const;
export const SERVICE_TIERS = ['DETERMINATION', 'DETERMINATION_AND_SETTLEMENT'] as const;
/** A sandbox organization tries the API on made-up data; it never meets a live one (docs/api.md, "Sandbox"). */
export const ENVIRONMENTS = ['sandbox', 'live'] as const;

export const settingsSchema = z
  .object({ brandColor: z.string().nullable(), contactPhone: z.string().nullable() })
  .meta({ id: 'OrganizationSettings', description: 'Readable settings; only these two keys are writable.' });

export const organizationSchema = z
  .object({
    id: z.uuid(),
    name: z.string(),
    type: z.enum(ORGANIZATION_TYPES),
    countryCode: z.enum(MARKETS).meta({ description: 'Two-letter market code' }),
    contactEmail: z.string().nullable(),
    contactPhone: z.string().nullable(),
    kybStatus: z.enum(KYB_STATUSES),
    serviceTier: z.enum(SERVICE_TIERS),
    isActive: z.boolean(),
    environment: z.enum(ENVIRONMENTS).meta({
      description:
        '`sandbox`: KYB verified, licence and capacity recorded, farmers KYC-approved at once; never mixes with live data (docs/api.md, "Sandbox")',
    }),
    webhookUrl: z.string().nullable().meta({
      description: 'The configured webhook URL; null until one is set (PUT /organizations/me/webhook)',
    }),
    settings: settingsSchema,
    createdAt: timestamp,
    updatedAt: timestamp,
  })
  .meta({ id: 'Organization', description: 'The calling organization. Keys and secrets never appear here.' });

export const apiKeyMetadataSchema = z
  .object({
    keyPrefix: z.string(),
    last4: z.string(),
    masked: z.string().meta({ example: 'pik_reg_AbCd********wXyZ' }),
    active: z.boolean(),
    rotatedAt: timestamp.nullable(),
    createdAt: timestamp,
  })
  .meta({ id: 'ApiKeyMetadata', description: 'The API key’s metadata: never the key itself.' });

export const credentialsSchema = z
  .object({
    apiKey: z.string().meta({ description: 'Shown once: store it server-side' }),
    apiSecret: z.string().meta({ description: 'Shown once' }),
  })
  .meta({ id: 'Credentials' });

export const registrationBody = z
  .strictObject({
    name: z.string().trim().min(2, 'must be 2 to 200 characters').max(200, 'must be 2 to 200 characters'),
    type: z.enum(ORGANIZATION_TYPES, { error: `must be one of ${ORGANIZATION_TYPES.join(', ')}` }),
    countryCode: z.enum(MARKETS, { error: `must be one of the markets we serve: ${MARKETS.join(', ')}` }),
    contactEmail: z.email({ error: 'must be an email address' }).max(254).optional(),
    contactPhone: phoneNumber.optional(),
    adminEmail: email
      .optional()
      .meta({ description: 'With `adminPassword`: also creates the first dashboard user, ORG_ADMIN' }),
    adminPassword: newPassword.optional(),
    environment: z
      .enum(ENVIRONMENTS, { error: `must be one of ${ENVIRONMENTS.join(', ')}` })
      .default('live')
      .meta({
        description:
          '`sandbox` makes a sandbox organization (docs/api.md, "Sandbox"); `400 INVALID_INPUT` where the sandbox is switched off',
      }),
  })
  .superRefine((body, ctx) => {
    if ((body.adminEmail === undefined) !== (body.adminPassword === undefined)) {
      const missing = body.adminEmail === undefined ? 'adminEmail' : 'adminPassword';
      ctx.addIssue({ code: 'custom', path: [missing], message: 'adminEmail and adminPassword go together' });
    }
  })
  .meta({
    id: 'RegistrationRequest',
    example: { name: 'Nakuru Growers Cooperative', type: 'COOPERATIVE', countryCode: 'KE' },
  });

/**
 * Settings accept exactly two keys; anything else is dropped without an error (`updateSettings`
 * below promises partners so), so
 * this schema strips instead of rejecting. `null` clears a value.
 */
export const settingsBody = z
  .object({
    brandColor: z
      .string()
      .regex(/^#[0-9A-Fa-f]{6}$/, 'must be a hex colour like #1A2B3C')
      .nullable()
      .optional(),
    contactPhone: phoneNumber.nullable().optional(),
  })
  .meta({ id: 'SettingsRequest', example: { brandColor: '#1A7F37', contactPhone: '+254712345678' } });

export const registerOrganization = defineRoute({
  operationId: 'registerOrganization',
  method: 'post',
  path: '/auth/register-organization',
  summary: 'Register an organization',
  description:
    'Creates the organization and its first API key. The key (and secret) are shown in this response and at each rotation, never again. With `adminEmail` and `adminPassword` it also creates the first dashboard user (`ORG_ADMIN`, `ACTIVE`); an email already in use is `409 CONFLICT` and nothing is created. With `environment: "sandbox"` the organization is a sandbox one: its key starts `pik_sandbox_`, it is KYB-verified at once and its farmers are KYC-approved on creation (docs/api.md, "Sandbox").',
  tags: ['Organization'],
  auth: 'none',
  body: registrationBody,
  responses: {
    201: {
      description: 'The organization, with its API key and secret in plaintext (once)',
      data: z.object({
        organization: organizationSchema.extend(credentialsSchema.shape),
        adminUser: userSchema
          .optional()
          .meta({ description: 'The first dashboard user (ACTIVE, ORG_ADMIN) when adminEmail was given' }),
      }),
    },
  },
  errors: ['RATE_LIMIT_EXCEEDED', 'CONFLICT'],
});

export const getOrganization = defineRoute({
  operationId: 'getOrganization',
  method: 'get',
  path: '/organizations/me',
  summary: 'Read the calling organization',
  tags: ['Organization'],
  auth: 'partner',
  capability: 'organization:read',
  responses: { 200: { description: 'The organization', data: organizationSchema } },
  errors: [],
});

export const updateSettings = defineRoute({
  operationId: 'updateSettings',
  method: 'put',
  path: '/organizations/me/settings',
  summary: 'Update brand colour and contact phone',
  description: 'Only `brandColor` and `contactPhone` are writable; any other key is silently discarded.',
  tags: ['Organization'],
  auth: 'partner',
  capability: 'organization:write',
  body: settingsBody,
  responses: { 200: { description: 'The settings after the change', data: settingsSchema } },
  errors: [],
});

export const getApiKey = defineRoute({
  operationId: 'getApiKey',
  method: 'get',
  path: '/organizations/me/api-key',
  summary: 'Read the API key metadata (masked)',
  tags: ['API key'],
  auth: 'partner',
  capability: 'api-key:manage',
  responses: { 200: { description: 'Masked key metadata', data: apiKeyMetadataSchema } },
  errors: [],
});

export const rotateApiKey = defineRoute({
  operationId: 'rotateApiKey',
  method: 'post',
  path: '/organizations/me/api-key/rotate',
  summary: 'Rotate the API key',
  description:
    'Returns a new key and secret once; the old key stops working immediately. Also re-enables a revoked key.',
  tags: ['API key'],
  auth: 'partner',
  capability: 'api-key:manage',
  responses: { 200: { description: 'The new credentials, in plaintext, once', data: credentialsSchema } },
  errors: [],
});

export const revokeApiKey = defineRoute({
  operationId: 'revokeApiKey',
  method: 'post',
  path: '/organizations/me/api-key/revoke',
  summary: 'Revoke the API key',
  description: 'The key stops working at once; rotating (ops can rotate for you) issues a working one again.',
  tags: ['API key'],
  auth: 'partner',
  capability: 'api-key:manage',
  responses: { 200: { description: 'Masked metadata with `active` false', data: apiKeyMetadataSchema } },
  errors: [],
});

export const getOpenApiDocument = defineRoute({
  operationId: 'getOpenApiDocument',
  method: 'get',
  path: '/openapi.json',
  summary: 'This document',
  description: 'The OpenAPI 3.1.0 document of the partner API. No key needed.',
  tags: ['Meta'],
  auth: 'none',
  ignoresQuery: true,
  responses: { 200: { description: 'The OpenAPI document', contentType: 'application/json' } },
  errors: [],
});

export const getApiDocs = defineRoute({
  operationId: 'getApiDocs',
  method: 'get',
  path: '/docs',
  summary: 'Interactive API reference',
  description: 'An HTML page rendering this document; it loads nothing from outside the platform.',
  tags: ['Meta'],
  auth: 'none',
  ignoresQuery: true,
  responses: { 200: { description: 'The docs page', contentType: 'text/html' } },
  errors: [],
});

/** Partner routes the gateway serves itself (everything else it forwards). */
export const GATEWAY_ROUTES = [
  registerOrganization,
  getOrganization,
  updateSettings,
  getApiKey,
  rotateApiKey,
  revokeApiKey,
] as const;

export const META_ROUTES = [getOpenApiDocument, getApiDocs] as const;
