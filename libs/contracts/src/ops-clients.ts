import { defineRoute, type OpsCapability } from '@parametric/http';
import { z } from 'zod';
import { idParams, pageQuery, timestamp } from './common';
import { OPS_READ_CAPABILITIES } from './operators';

/**
 * Machine clients of the ops API (issue 25; docs/ops.md, "Machine clients"): the data provider
 * pushing determinations, a BI export job. Each has a secret and scopes, and exchanges them at
 * `POST /ops/auth/token` (OAuth 2.0 client credentials, RFC 6749, section 4.4) for a short-lived token
 * carrying the capabilities of its scopes only.
 */

export const OPS_CLIENT_SCOPES = ['determinations:ingest', 'ops:read'] as const;
export type OpsClientScope = (typeof OPS_CLIENT_SCOPES)[number];

/** The one table of client scopes and their capabilities (docs/ops.md repeats it), beside the role table. */
export const OPS_SCOPE_CAPABILITIES: Readonly<Record<OpsClientScope, readonly OpsCapability[]>> = {
  'determinations:ingest': ['ops.determination:ingest'],
  'ops:read': OPS_READ_CAPABILITIES,
};

/** The capabilities of a set of scopes; none for a scope the table does not know. */
export function opsScopeCapabilitiesOf(scopes: readonly string[]): OpsCapability[] {
  const table = OPS_SCOPE_CAPABILITIES as Record<string, readonly OpsCapability[] | undefined>;
  return [...new Set(scopes.flatMap((scope) => table[scope] ?? []))];
}

export const OPS_CLIENT_STATUSES = ['ACTIVE', 'REVOKED'] as const;

const scope = z.enum(OPS_CLIENT_SCOPES, { error: `must be one of ${OPS_CLIENT_SCOPES.join(', ')}` });

export const opsClientSchema = z
  .object({
    id: z.string().meta({ description: 'The `client_id` of the token endpoint' }),
    name: z.string(),
    scopes: z.array(scope),
    status: z.enum(OPS_CLIENT_STATUSES),
    lastTokenAt: timestamp.nullable(),
    secretRotatedAt: timestamp.nullable(),
    revokedAt: timestamp.nullable(),
    createdAt: timestamp,
    updatedAt: timestamp,
  })
  .meta({ id: 'OpsClient', description: 'A machine client of the ops API. Secrets never appear.' });

export const opsClientCredentialsSchema = z
  .object({
    client: opsClientSchema,
    clientId: z.string(),
    clientSecret: z.string().meta({ description: 'Shown once; stored only as a peppered hash' }),
  })
  .meta({ id: 'OpsClientCredentials' });

export const createOpsClientBody = z
  .strictObject({
    name: z.string().trim().min(1).max(100),
    scopes: z.array(scope).max(OPS_CLIENT_SCOPES.length),
  })
  .meta({
    id: 'CreateOpsClientRequest',
    example: { name: 'rainfall data provider', scopes: ['determinations:ingest'] },
  });

export const opsClientsQuery = pageQuery
  .extend({
    status: z
      .enum(OPS_CLIENT_STATUSES, { error: `must be one of ${OPS_CLIENT_STATUSES.join(', ')}` })
      .optional(),
  })
  .strict();

const manage = 'ops.operator:manage' as const;

export const opsCreateClient = defineRoute({
  operationId: 'opsCreateClient',
  method: 'post',
  path: '/clients',
  summary: 'Create a machine client',
  description:
    'A client id and secret (shown once) for `POST /ops/auth/token` (`grant_type=client_credentials`). The scopes are all the client may ever be granted (docs/ops.md, "Machine clients").',
  tags: ['Machine clients'],
  auth: 'opsBearer',
  capability: manage,
  body: createOpsClientBody,
  responses: { 201: { description: 'The client and its secret (once)', data: opsClientCredentialsSchema } },
  errors: [],
});

export const opsListClients = defineRoute({
  operationId: 'opsListClients',
  method: 'get',
  path: '/clients',
  summary: 'List machine clients',
  tags: ['Machine clients'],
  auth: 'opsBearer',
  capability: manage,
  query: opsClientsQuery,
  responses: { 200: { description: 'A page of clients, newest first', item: opsClientSchema } },
  errors: [],
});

export const opsRotateClientSecret = defineRoute({
  operationId: 'opsRotateClientSecret',
  method: 'post',
  path: '/clients/{id}/rotate-secret',
  summary: 'Rotate a machine client’s secret',
  description:
    'A new secret (shown once); the old one stops at once, and so do the tokens issued with it. A revoked client is `409 CONFLICT`.',
  tags: ['Machine clients'],
  auth: 'opsBearer',
  capability: manage,
  params: idParams,
  responses: {
    200: { description: 'The client and its new secret (once)', data: opsClientCredentialsSchema },
  },
  errors: ['CONFLICT'],
});

export const opsRevokeClient = defineRoute({
  operationId: 'opsRevokeClient',
  method: 'post',
  path: '/clients/{id}/revoke',
  summary: 'Revoke a machine client',
  description:
    'For good: its tokens stop on their next request and it gets no new one. Revoking a revoked client changes nothing.',
  tags: ['Machine clients'],
  auth: 'opsBearer',
  capability: manage,
  params: idParams,
  responses: { 200: { description: 'The client, revoked', data: opsClientSchema } },
  errors: [],
});

export const OPS_CLIENT_ROUTES = [
  opsCreateClient,
  opsListClients,
  opsRotateClientSecret,
  opsRevokeClient,
] as const;
