import { CAPABILITIES, defineRoute, ROLES } from '@parametric/http';
import { z } from 'zod';
import { idParams, pageQuery, timestamp } from './common';

/**
 * Dashboard users (issue 12; docs/api.md, "Dashboard users and tokens" and "Capabilities"):
 * people of an organization who sign in to the dashboard with a password and act with their
 * role's capabilities through short-lived bearer tokens. Server-to-server integrations use the
 * API key, never these tokens.
 */

export const USER_STATUSES = ['INVITED', 'ACTIVE', 'DEACTIVATED'] as const;

/** Rules every new password meets (the common-password list is checked by the gateway). */
export const PASSWORD_RULES = { minLength: 12, maxLength: 256 } as const;

/** Emails compare case-insensitively: stored and matched trimmed and lower-cased. */
export const email = z
  .string({ error: 'must be an email address' })
  .trim()
  .toLowerCase()
  .pipe(z.email({ error: 'must be an email address' }).max(254, 'must be at most 254 characters'))
  .meta({ example: 'amina@nakuru-growers.example' });

const personName = z
  .string({ error: 'must be a string' })
  .trim()
  .min(1, 'must be 1 to 200 characters')
  .max(200, 'must be 1 to 200 characters');

export const role = z.enum(ROLES, { error: `must be one of ${ROLES.join(', ')}` });

/** A password being set: length bounds here, the common-password list in the gateway. */
export const newPassword = z
  .string({ error: 'must be a string' })
  .min(PASSWORD_RULES.minLength, `must be at least ${PASSWORD_RULES.minLength} characters`)
  .max(PASSWORD_RULES.maxLength, `must be at most ${PASSWORD_RULES.maxLength} characters`)
  .meta({
    description: `${PASSWORD_RULES.minLength} to ${PASSWORD_RULES.maxLength} characters, not a common password`,
  });

export const userSchema = z
  .object({
    id: z.uuid(),
    email: z.string(),
    name: z.string(),
    role,
    status: z.enum(USER_STATUSES),
    invitationExpiresAt: timestamp
      .nullable()
      .meta({ description: 'While INVITED: when the invitation lapses' }),
    lastLoginAt: timestamp.nullable(),
    createdAt: timestamp,
    updatedAt: timestamp,
  })
  .meta({ id: 'User', description: 'A dashboard user of the organization. Passwords never appear.' });

export const invitationSchema = z
  .object({
    user: userSchema,
    invitationToken: z.string().meta({
      description: 'One-time token the invited person redeems at `POST /auth/accept-invitation`; shown once',
    }),
    invitationExpiresAt: timestamp,
  })
  .meta({ id: 'Invitation' });

export const tokensSchema = z
  .object({
    accessToken: z.string().meta({ description: 'JWT for `Authorization: Bearer`; dashboard only' }),
    tokenType: z.literal('Bearer'),
    expiresIn: z.number().int().meta({ description: 'Seconds the access token is valid (900)' }),
    refreshToken: z.string().meta({
      description: 'Opaque, single use: `POST /auth/refresh` spends it and returns a new one',
    }),
    refreshExpiresIn: z.number().int().meta({ description: 'Seconds the refresh token is valid (7 days)' }),
  })
  .meta({ id: 'DashboardTokens' });

export const createUserBody = z.strictObject({ email, name: personName, role }).meta({
  id: 'CreateUserRequest',
  example: { email: 'amina@nakuru-growers.example', name: 'Amina Wanjiru', role: 'ORG_OPERATOR' },
});

export const updateUserBody = z
  .strictObject({
    name: personName.optional(),
    role: role.optional(),
    active: z.boolean({ error: 'must be true or false' }).optional(),
  })
  .refine((body) => Object.keys(body).length > 0, { message: 'give at least one of name, role, active' })
  .meta({ id: 'UpdateUserRequest', example: { role: 'ORG_FINANCE' } });

export const usersQuery = pageQuery
  .extend({
    status: z.enum(USER_STATUSES, { error: `must be one of ${USER_STATUSES.join(', ')}` }).optional(),
    role: role.optional(),
  })
  .strict();

export const acceptInvitationBody = z
  .strictObject({
    token: z
      .string({ error: 'must be a string' })
      .min(1, 'is required')
      .max(200, 'is not an invitation token'),
    password: newPassword,
  })
  .meta({ id: 'AcceptInvitationRequest' });

export const loginBody = z
  .strictObject({
    email,
    // Never the new-password rules here: an old password still signs in, and the answer to a
    // wrong one must not say anything about it.
    password: z
      .string({ error: 'must be a string' })
      .min(1, 'is required')
      .max(PASSWORD_RULES.maxLength, `must be at most ${PASSWORD_RULES.maxLength} characters`),
  })
  .meta({ id: 'LoginRequest' });

export const refreshBody = z
  .strictObject({
    refreshToken: z
      .string({ error: 'must be a string' })
      .min(1, 'is required')
      .max(200, 'is not a refresh token'),
  })
  .meta({ id: 'RefreshRequest' });

export const sessionSchema = z
  .object({
    organizationId: z.uuid(),
    principal: z.enum(['API_KEY', 'USER']),
    user: userSchema.nullable().meta({ description: 'The signed-in user; null for the API key' }),
    role,
    capabilities: z.array(z.enum(CAPABILITIES)),
  })
  .meta({ id: 'Session', description: 'Who the caller is and what it may do' });

export const createUser = defineRoute({
  operationId: 'createUser',
  method: 'post',
  path: '/organizations/me/users',
  summary: 'Invite a dashboard user',
  description:
    'Creates the user as `INVITED` and returns a one-time invitation token (valid 72 hours) to pass on to the person, who sets a password at `POST /auth/accept-invitation`. Emails are unique across the platform: an email already in use is `409 CONFLICT`.',
  tags: ['Users'],
  auth: 'partner',
  capability: 'user:manage',
  body: createUserBody,
  responses: {
    201: { description: 'The invited user and the invitation token (once)', data: invitationSchema },
  },
  errors: ['CONFLICT'],
});

export const listUsers = defineRoute({
  operationId: 'listUsers',
  method: 'get',
  path: '/organizations/me/users',
  summary: 'List dashboard users',
  description: 'The organization’s users, newest first, optionally by `status` or `role`.',
  tags: ['Users'],
  auth: 'partner',
  capability: 'user:manage',
  query: usersQuery,
  responses: { 200: { description: 'A page of users', item: userSchema } },
  errors: [],
});

export const getUser = defineRoute({
  operationId: 'getUser',
  method: 'get',
  path: '/organizations/me/users/{id}',
  summary: 'Read a dashboard user',
  tags: ['Users'],
  auth: 'partner',
  capability: 'user:manage',
  params: idParams,
  responses: { 200: { description: 'The user', data: userSchema } },
  errors: [],
});

export const updateUser = defineRoute({
  operationId: 'updateUser',
  method: 'patch',
  path: '/organizations/me/users/{id}',
  summary: 'Change a user’s name, role or active state',
  description:
    'A role change applies to the user’s tokens at once (a token never grants more than the user’s current role). `active: false` deactivates (as `DELETE` does); `active: true` restores a deactivated user. The last active `ORG_ADMIN` cannot be demoted or deactivated (`409 CONFLICT`).',
  tags: ['Users'],
  auth: 'partner',
  capability: 'user:manage',
  params: idParams,
  body: updateUserBody,
  responses: { 200: { description: 'The user after the change', data: userSchema } },
  errors: ['CONFLICT'],
});

export const deactivateUser = defineRoute({
  operationId: 'deactivateUser',
  method: 'delete',
  path: '/organizations/me/users/{id}',
  summary: 'Deactivate a user',
  description:
    'The user’s tokens stop working on the next request and every sign-in session is revoked; the record stays for the audit trail and can be restored with `PATCH … { active: true }`. The last active `ORG_ADMIN` cannot be deactivated (`409 CONFLICT`).',
  tags: ['Users'],
  auth: 'partner',
  capability: 'user:manage',
  params: idParams,
  responses: { 200: { description: 'The user, `DEACTIVATED`', data: userSchema } },
  errors: ['CONFLICT'],
});

export const reissueInvitation = defineRoute({
  operationId: 'reissueInvitation',
  method: 'post',
  path: '/organizations/me/users/{id}/invitation',
  summary: 'Issue a new invitation token',
  description:
    'For a user still `INVITED` (for example after the 72 hours lapsed): a new token, valid 72 hours; the previous one stops working. `409 CONFLICT` for a user who already accepted or is deactivated.',
  tags: ['Users'],
  auth: 'partner',
  capability: 'user:manage',
  params: idParams,
  responses: { 200: { description: 'The user and the new invitation token (once)', data: invitationSchema } },
  errors: ['CONFLICT'],
});

export const getSession = defineRoute({
  operationId: 'getSession',
  method: 'get',
  path: '/auth/session',
  summary: 'Who am I',
  description:
    'The caller as the platform sees it: the API key (`ORG_ADMIN`) or the signed-in user, with the role and the capabilities that apply now.',
  tags: ['Dashboard sign-in'],
  auth: 'partner',
  capability: 'organization:read',
  responses: { 200: { description: 'The caller', data: sessionSchema } },
  errors: [],
});

export const acceptInvitation = defineRoute({
  operationId: 'acceptInvitation',
  method: 'post',
  path: '/auth/accept-invitation',
  summary: 'Accept an invitation and set a password',
  description:
    'Redeems the one-time invitation token: the user’s password is set and the user becomes `ACTIVE`. A used, replaced, lapsed or unknown token is `400 INVALID_INPUT` on `token`. Passwords: 12 to 256 characters, not a common password.',
  tags: ['Dashboard sign-in'],
  auth: 'none',
  body: acceptInvitationBody,
  responses: { 200: { description: 'The user, now ACTIVE', data: z.object({ user: userSchema }) } },
  errors: ['FORBIDDEN', 'RATE_LIMIT_EXCEEDED'],
});

export const login = defineRoute({
  operationId: 'login',
  method: 'post',
  path: '/auth/login',
  summary: 'Sign in to the dashboard',
  description:
    'Returns a 15-minute access token (JWT, `aud: "dashboard"`) and a single-use refresh token (7 days). Wrong password, unknown email, a user not yet active or deactivated: the same `401` in body and timing. After 5 failures in 15 minutes for one email (or many from one address) sign-in answers `429 RATE_LIMIT_EXCEEDED` with `retryAfter`. Access tokens are for the dashboard only; integrations use the API key.',
  tags: ['Dashboard sign-in'],
  auth: 'none',
  body: loginBody,
  responses: { 200: { description: 'The tokens', data: tokensSchema } },
  errors: ['UNAUTHORIZED', 'FORBIDDEN', 'RATE_LIMIT_EXCEEDED'],
});

export const refreshSession = defineRoute({
  operationId: 'refreshSession',
  method: 'post',
  path: '/auth/refresh',
  summary: 'Exchange a refresh token for new tokens',
  description:
    'Spends the refresh token and returns a new access token and a new refresh token. A refresh token works once: presenting a spent one again revokes the whole sign-in session (every token descended from the same login), because it means the token was copied.',
  tags: ['Dashboard sign-in'],
  auth: 'none',
  body: refreshBody,
  responses: { 200: { description: 'New tokens', data: tokensSchema } },
  errors: ['UNAUTHORIZED', 'FORBIDDEN', 'RATE_LIMIT_EXCEEDED'],
});

export const logout = defineRoute({
  operationId: 'logout',
  method: 'post',
  path: '/auth/logout',
  summary: 'Sign out',
  description:
    'Revokes the sign-in session the refresh token belongs to: its refresh tokens stop working, and so do its access tokens, at once. Always `200` (as RFC 7009 token revocation), so it says nothing about a token it does not know.',
  tags: ['Dashboard sign-in'],
  auth: 'none',
  body: refreshBody,
  responses: { 200: { description: 'Signed out', data: z.object({ loggedOut: z.literal(true) }) } },
  errors: ['RATE_LIMIT_EXCEEDED'],
});

/**
 * The dashboard's own sign-in (docs/dashboard.md, "Sign-in cookie"; docs/decisions.md, "The
 * dashboard's refresh-token cookie"): the same sessions as `/auth/login`, `/auth/refresh` and
 * `/auth/logout`, but the refresh token never appears in a body. It lives in an HttpOnly,
 * SameSite=Strict cookie sent only to these routes, so a script in the page can use the session
 * while the page is open and cannot carry it away. Routes of their own rather than a mode of the
 * JSON routes: the JSON routes' answers stay exactly what API clients were promised.
 */
export const DASHBOARD_REFRESH_COOKIE = 'dashboard_refresh';
export const DASHBOARD_COOKIE_PATH = '/api/auth/cookie';

/**
 * Cross-site request forgery: a page of another site can send this header only after a CORS
 * preflight, which the gateway never grants; a browser that says the request is cross-site
 * (`Sec-Fetch-Site`) or from another origin (`Origin`) is refused as well.
 */
export const dashboardRequestHeaders = z.object({
  'X-Requested-By': z.literal('dashboard', { error: 'must be dashboard' }).meta({
    description:
      'Required (`dashboard`): proof that the request comes from a page of the gateway’s own origin, which alone may send it',
  }),
});

export const cookieTokensSchema = z
  .object({
    accessToken: z.string().meta({ description: 'JWT for `Authorization: Bearer`; keep it in memory only' }),
    tokenType: z.literal('Bearer'),
    expiresIn: z.number().int().meta({ description: 'Seconds the access token is valid (900)' }),
    refreshExpiresIn: z
      .number()
      .int()
      .meta({
        description: `Seconds the refresh token, set in the \`${DASHBOARD_REFRESH_COOKIE}\` cookie, is valid (7 days)`,
      }),
  })
  .meta({ id: 'DashboardCookieTokens' });

const setCookieHeaders = z.object({
  'Set-Cookie': z.string().meta({
    description: `\`${DASHBOARD_REFRESH_COOKIE}=…; Path=${DASHBOARD_COOKIE_PATH}; Max-Age=…; HttpOnly; SameSite=Strict\`, and \`Secure\` over https or in production`,
  }),
});

const CROSS_SITE =
  'A request a browser marks as cross-site (`Sec-Fetch-Site` other than `same-origin`, or an `Origin` other than the gateway’s) is `403 FORBIDDEN`; without `X-Requested-By: dashboard` it is `400`.';

export const cookieLogin = defineRoute({
  operationId: 'cookieLogin',
  method: 'post',
  path: '/auth/cookie/login',
  summary: 'Sign in to the dashboard (refresh token in a cookie)',
  description: `As \`POST /auth/login\`, for the dashboard’s own pages: the refresh token is set in the \`${DASHBOARD_REFRESH_COOKIE}\` cookie instead of the body. ${CROSS_SITE}`,
  tags: ['Dashboard sign-in'],
  auth: 'none',
  headers: dashboardRequestHeaders,
  body: loginBody,
  responses: {
    200: {
      description: 'The access token; the refresh token in the cookie',
      data: cookieTokensSchema,
      headers: setCookieHeaders,
    },
  },
  errors: ['UNAUTHORIZED', 'FORBIDDEN', 'RATE_LIMIT_EXCEEDED'],
});

export const cookieRefresh = defineRoute({
  operationId: 'cookieRefresh',
  method: 'post',
  path: '/auth/cookie/refresh',
  summary: 'Refresh the dashboard’s tokens from the cookie',
  description: `As \`POST /auth/refresh\` with the cookie’s refresh token (no body): a new access token, and the next refresh token in the cookie. A spent token presented again revokes the session. ${CROSS_SITE}`,
  tags: ['Dashboard sign-in'],
  auth: 'none',
  headers: dashboardRequestHeaders,
  responses: {
    200: {
      description: 'A new access token; the next refresh token in the cookie',
      data: cookieTokensSchema,
      headers: setCookieHeaders,
    },
  },
  errors: ['UNAUTHORIZED', 'FORBIDDEN', 'RATE_LIMIT_EXCEEDED'],
});

export const cookieLogout = defineRoute({
  operationId: 'cookieLogout',
  method: 'post',
  path: '/auth/cookie/logout',
  summary: 'Sign the dashboard out',
  description: `As \`POST /auth/logout\` with the cookie’s refresh token (no body): the session is revoked and the cookie cleared. Always \`200\` for a same-origin request, cookie or not. ${CROSS_SITE}`,
  tags: ['Dashboard sign-in'],
  auth: 'none',
  headers: dashboardRequestHeaders,
  responses: {
    200: {
      description: 'Signed out, the cookie cleared',
      data: z.object({ loggedOut: z.literal(true) }),
      headers: setCookieHeaders,
    },
  },
  errors: ['FORBIDDEN', 'RATE_LIMIT_EXCEEDED'],
});

/** Dashboard users and sign-in: served by the gateway, which owns identities. */
export const USER_ROUTES = [
  createUser,
  listUsers,
  getUser,
  updateUser,
  deactivateUser,
  reissueInvitation,
  getSession,
  acceptInvitation,
  login,
  refreshSession,
  logout,
  cookieLogin,
  cookieRefresh,
  cookieLogout,
] as const;
