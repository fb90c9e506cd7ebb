import { defineRoute, OPS_CAPABILITIES, type OpsCapability } from '@parametric/http';
import { z } from 'zod';
import { idParams, pageQuery, timestamp } from './common';
import {
  acceptInvitationBody,
  email,
  loginBody,
  refreshBody,
  tokensSchema,
  USER_STATUSES,
  userSchema,
} from './users';

/**
 * Operators (issue 25; docs/ops.md, "Operators and roles"): the platform's own people, who sign in
 * to the ops API with a password, as dashboard users sign in to the partner API, and act with
 * their role's ops capabilities. The shared `OPS_TOKEN` is break-glass only.
 */

export const OPS_ROLES = ['OPS_ADMIN', 'UNDERWRITER', 'FINANCE', 'SUPPORT'] as const;
export type OpsRole = (typeof OPS_ROLES)[number];

export const OPERATOR_STATUSES = USER_STATUSES;

/** Every ops read: what `SUPPORT` may do, and what every other role may do besides its writes. */
export const OPS_READ_CAPABILITIES: readonly OpsCapability[] = [
  'ops.organization:read',
  'ops.farmer:read',
  'ops.policy:read',
  'ops.determination:read',
  'ops.audit:read',
  'ops.document:read',
  'ops.session:read',
  'ops.queues:read',
];

/**
 * The one table of ops roles and their capabilities (docs/ops.md repeats it). Reads are not
 * segregated (an underwriter looks at policies, finance at determinations); writes are.
 */
export const OPS_ROLE_CAPABILITIES: Readonly<Record<OpsRole, readonly OpsCapability[]>> = {
  OPS_ADMIN: OPS_CAPABILITIES,
  UNDERWRITER: [
    ...OPS_READ_CAPABILITIES,
    'ops.organization:write',
    'ops.service-tier:write',
    'ops.underwriting:write',
    'ops.farmer:write',
  ],
  FINANCE: [...OPS_READ_CAPABILITIES, 'ops.payout:write'],
  SUPPORT: OPS_READ_CAPABILITIES,
};

/** An ops role's capabilities in the table; none for a name it does not know. */
export function opsCapabilitiesOf(role: string): readonly OpsCapability[] {
  return (OPS_ROLE_CAPABILITIES as Record<string, readonly OpsCapability[] | undefined>)[role] ?? [];
}

export const opsRole = z.enum(OPS_ROLES, { error: `must be one of ${OPS_ROLES.join(', ')}` });

/** A dashboard user's record (users.ts) without a name (operators are known by email), with an ops role. */
export const operatorSchema = userSchema
  .omit({ name: true, role: true })
  .extend({ role: opsRole })
  .meta({ id: 'Operator', description: 'A person who operates the platform. Passwords never appear.' });

export const operatorInvitationSchema = z
  .object({
    operator: operatorSchema,
    invitationToken: z.string().meta({
      description:
        'One-time token the invited operator redeems at `POST /ops/auth/accept-invitation`; shown once',
    }),
    invitationExpiresAt: timestamp,
  })
  .meta({ id: 'OperatorInvitation' });

export const createOperatorBody = z
  .strictObject({ email, role: opsRole })
  .meta({ id: 'CreateOperatorRequest', example: { email: 'wanjiku@insurer.example', role: 'UNDERWRITER' } });

export const updateOperatorBody = z
  .strictObject({
    role: opsRole.optional(),
    status: z.enum(['ACTIVE', 'DEACTIVATED'], { error: 'must be ACTIVE or DEACTIVATED' }).optional(),
  })
  .refine((body) => Object.keys(body).length > 0, { message: 'give at least one of role, status' })
  .meta({ id: 'UpdateOperatorRequest', example: { status: 'DEACTIVATED' } });

export const operatorsQuery = pageQuery
  .extend({
    status: z.enum(OPERATOR_STATUSES, { error: `must be one of ${OPERATOR_STATUSES.join(', ')}` }).optional(),
    role: opsRole.optional(),
  })
  .strict();

/** Who is calling the ops API, and what it may do now. */
export const opsSessionSchema = z
  .object({
    kind: z.enum(['operator', 'client', 'break-glass']),
    id: z
      .string()
      .meta({ description: 'The operator’s or client’s id; `ops-token:<fingerprint>` for break-glass' }),
    email: z.string().optional(),
    role: z.string().optional(),
    scopes: z.array(z.string()).optional(),
    capabilities: z.array(z.enum(OPS_CAPABILITIES)),
  })
  .meta({ id: 'OpsSession' });

const manage = 'ops.operator:manage' as const;

export const opsCreateOperator = defineRoute({
  operationId: 'opsCreateOperator',
  method: 'post',
  path: '/operators',
  summary: 'Invite an operator',
  description:
    'Creates the operator as `INVITED` with a one-time invitation token (valid as long as a dashboard invitation) that the person redeems at `POST /ops/auth/accept-invitation`. An email already used by an operator is `409 CONFLICT`.',
  tags: ['Operators'],
  auth: 'opsBearer',
  capability: manage,
  body: createOperatorBody,
  responses: {
    201: {
      description: 'The invited operator and the invitation token (once)',
      data: operatorInvitationSchema,
    },
  },
  errors: ['CONFLICT'],
});

export const opsListOperators = defineRoute({
  operationId: 'opsListOperators',
  method: 'get',
  path: '/operators',
  summary: 'List operators',
  tags: ['Operators'],
  auth: 'opsBearer',
  capability: manage,
  query: operatorsQuery,
  responses: { 200: { description: 'A page of operators, newest first', item: operatorSchema } },
  errors: [],
});

export const opsUpdateOperator = defineRoute({
  operationId: 'opsUpdateOperator',
  method: 'patch',
  path: '/operators/{id}',
  summary: 'Change an operator’s role or status',
  description:
    '`DEACTIVATED` stops the operator’s access tokens on their next request and revokes every sign-in session; `ACTIVE` restores a deactivated operator. A role change applies to live tokens at once. An operator cannot change their own role or status (`403 FORBIDDEN`).',
  tags: ['Operators'],
  auth: 'opsBearer',
  capability: manage,
  params: idParams,
  body: updateOperatorBody,
  responses: { 200: { description: 'The operator after the change', data: operatorSchema } },
  errors: ['CONFLICT'],
});

export const opsAcceptInvitation = defineRoute({
  operationId: 'opsAcceptInvitation',
  method: 'post',
  path: '/auth/accept-invitation',
  summary: 'Accept an operator invitation and set a password',
  description:
    'As the dashboard’s: a used, replaced, lapsed or unknown token is `400 INVALID_INPUT` on `token`. Passwords: 12 to 256 characters, not a common password.',
  tags: ['Ops sign-in'],
  auth: 'none',
  body: acceptInvitationBody,
  responses: {
    200: { description: 'The operator, now ACTIVE', data: z.object({ operator: operatorSchema }) },
  },
  errors: [],
});

export const opsLogin = defineRoute({
  operationId: 'opsLogin',
  method: 'post',
  path: '/auth/login',
  summary: 'Sign in as an operator',
  description:
    'A 15-minute access token (EdDSA JWT, `aud: "ops"`) for `Authorization: Bearer` on the ops API, and a single-use refresh token. Wrong password, unknown email, an operator not yet active or deactivated: the same `401`. Failures are throttled as dashboard sign-ins are (`429` with `retryAfter`).',
  tags: ['Ops sign-in'],
  auth: 'none',
  body: loginBody,
  responses: { 200: { description: 'The tokens', data: tokensSchema } },
  errors: ['UNAUTHORIZED'],
});

export const opsRefreshSession = defineRoute({
  operationId: 'opsRefreshSession',
  method: 'post',
  path: '/auth/refresh',
  summary: 'Exchange an operator refresh token for new tokens',
  description:
    'Spends the refresh token for a new pair. Presenting a spent one again revokes the whole sign-in session (every token descended from the same login).',
  tags: ['Ops sign-in'],
  auth: 'none',
  body: refreshBody,
  responses: { 200: { description: 'New tokens', data: tokensSchema } },
  errors: ['UNAUTHORIZED'],
});

export const opsLogout = defineRoute({
  operationId: 'opsLogout',
  method: 'post',
  path: '/auth/logout',
  summary: 'Sign an operator out',
  description:
    'Revokes the sign-in session of the refresh token: its refresh and access tokens stop at once. Always `200` (RFC 7009).',
  tags: ['Ops sign-in'],
  auth: 'none',
  body: refreshBody,
  responses: { 200: { description: 'Signed out', data: z.object({ loggedOut: z.literal(true) }) } },
  errors: [],
});

export const opsGetSession = defineRoute({
  operationId: 'opsGetSession',
  method: 'get',
  path: '/auth/session',
  summary: 'Who am I (ops)',
  tags: ['Ops sign-in'],
  auth: 'opsBearer',
  capability: 'ops.session:read',
  responses: { 200: { description: 'The caller', data: opsSessionSchema } },
  errors: [],
});

/** Operators and their sign-in: served by the gateway, which owns identities. */
export const OPERATOR_ROUTES = [
  opsCreateOperator,
  opsListOperators,
  opsUpdateOperator,
  opsAcceptInvitation,
  opsLogin,
  opsRefreshSession,
  opsLogout,
  opsGetSession,
] as const;
