import { randomUUID } from 'node:crypto';
import { AppError, ROLE_CAPABILITIES, type Role } from '@parametric/http';
import type { Logger } from '@parametric/logger';
import type { Clock } from '../clock';
import type { AccessTokenIssuer } from '../credentials/access-tokens';
import { hashCredential, randomSecret } from '../credentials/secrets';
import type { OrganizationDoc } from '../organizations/model';
import type { LoginThrottle } from '../rate-limit/login-throttle';
import type { GatewayDataAcross, TenantGatewayData } from '../repositories';
import type { UserDoc } from '../users/model';
import { badCredentials, badRefresh, checkSignIn, spendRefreshToken, tokensAnswer } from './core';
import type { SessionEndReason } from './reasons';

export interface SignInDeps {
  across: GatewayDataAcross;
  tenantOf: (organizationId: string) => TenantGatewayData;
  pepper: string;
  accessTokens: AccessTokenIssuer;
  refreshTtlSeconds: number;
  throttle: LoginThrottle;
  /** Checked instead when there is no real hash, so every failure costs the same. */
  dummyHash: string;
  logger: Logger;
  clock: Clock;
}

/** Sign-in, refresh and logout, bound once per process to their stores, keys and throttle. */
export function createSessions(deps: SignInDeps) {
  return {
    login: (input: { email: string; password: string }, clientIp: string) => login(deps, input, clientIp),
    refresh: (refreshToken: string) => refresh(deps, refreshToken),
    logout: (refreshToken: string) => logout(deps, refreshToken),
  };
}

export type Sessions = ReturnType<typeof createSessions>;

/**
 * Signs a user in. Unknown email, wrong password, invited or deactivated user: one answer,
 * after one scrypt either way, and one failure counted against the account and the address.
 */
async function login(deps: SignInDeps, input: { email: string; password: string }, clientIp: string) {
  await deps.throttle.assertAllowed(input.email, clientIp);
  const found = await deps.across.users.findOne({ email: input.email }).lean<UserDoc>();
  const { account: user, rehash } = await checkSignIn(deps, found, input, clientIp);
  const organization = await organizationOf(deps, user.organizationId);

  const tenant = deps.tenantOf(user.organizationId);
  const sessionId = randomUUID();
  const now = deps.clock();
  await tenant.sessions.create({ _id: sessionId, userId: user._id, expiresAt: refreshExpiry(deps, now) });
  await tenant.users.updateOne({ _id: user._id }, { $set: { lastLoginAt: now, ...rehash } });
  // The user's other sessions show lastLoginAt (GET /auth/session) from what gateways cached.
  await tenant.authChanged();
  deps.logger.info({ userId: user._id, organizationId: organization._id, sessionId }, 'dashboard sign-in');
  return issueTokens(deps, tenant, user, sessionId, now);
}

/**
 * Spends a refresh token for new tokens. A token presented a second time means someone holds
 * a copy: the whole session is revoked, for the thief and the user alike.
 */
async function refresh(deps: SignInDeps, refreshToken: string) {
  const tokenHash = hashCredential(deps.pepper, refreshToken);
  const token = await deps.across.refreshTokens.findOne({ _id: tokenHash }).lean();
  if (!token) throw badRefresh();
  const tenant = deps.tenantOf(token.organizationId);
  const now = deps.clock();
  await spendRefreshToken(tenant.refreshTokens, token, now, async () => {
    await endSession(tenant, token.sessionId, 'REFRESH_TOKEN_REUSED', now);
    deps.logger.warn(
      { userId: token.userId, organizationId: token.organizationId, sessionId: token.sessionId },
      'a spent refresh token was presented again: session revoked',
    );
  });
  const [session, user] = await Promise.all([
    tenant.sessions.findById(token.sessionId).lean(),
    tenant.users.findById(token.userId).lean<UserDoc>(),
  ]);
  if (!session || session.revokedAt || !user || user.status !== 'ACTIVE') throw badRefresh();
  await organizationOf(deps, user.organizationId);
  await tenant.sessions.updateOne(
    { _id: session._id },
    { $set: { lastRefreshedAt: now, expiresAt: refreshExpiry(deps, now) } },
  );
  return issueTokens(deps, tenant, user, session._id, now);
}

/** Ends the refresh token's session. Unknown tokens are ignored (RFC 7009). */
async function logout(deps: SignInDeps, refreshToken: string) {
  const token = await deps.across.refreshTokens
    .findOne({ _id: hashCredential(deps.pepper, refreshToken) })
    .lean();
  if (token) await endSession(deps.tenantOf(token.organizationId), token.sessionId, 'LOGOUT', deps.clock());
  return { loggedOut: true as const };
}

/** Ends every live session of a user (deactivation), as of `at`. */
export async function revokeUserSessions(
  tenant: TenantGatewayData,
  userId: string,
  reason: SessionEndReason,
  at: Date,
) {
  await tenant.sessions.updateMany(
    { userId, revokedAt: null },
    { $set: { revokedAt: at, revokedReason: reason } },
  );
  await tenant.authChanged();
}

async function endSession(tenant: TenantGatewayData, sessionId: string, reason: SessionEndReason, at: Date) {
  await tenant.sessions.updateOne(
    { _id: sessionId, revokedAt: null },
    { $set: { revokedAt: at, revokedReason: reason } },
  );
  // Its access tokens stop on the next request, on every replica.
  await tenant.authChanged();
}

async function organizationOf(deps: SignInDeps, organizationId: string): Promise<OrganizationDoc> {
  const organization = await deps.across.organizations.findById(organizationId).lean<OrganizationDoc>();
  if (!organization) throw badCredentials();
  if (!organization.isActive) throw AppError.forbidden('Organization is deactivated');
  return organization;
}

function refreshExpiry(deps: SignInDeps, now: Date): Date {
  return new Date(now.getTime() + deps.refreshTtlSeconds * 1000);
}

async function issueTokens(
  deps: SignInDeps,
  tenant: TenantGatewayData,
  user: UserDoc,
  sessionId: string,
  now: Date,
) {
  const refreshToken = randomSecret('prt');
  await tenant.refreshTokens.create({
    _id: hashCredential(deps.pepper, refreshToken),
    sessionId,
    userId: user._id,
    expiresAt: refreshExpiry(deps, now),
  });
  const role = user.role as Role;
  const access = await deps.accessTokens.issue({
    userId: user._id,
    organizationId: user.organizationId,
    sessionId,
    role,
    capabilities: ROLE_CAPABILITIES[role],
  });
  return tokensAnswer(access, refreshToken, deps.refreshTtlSeconds);
}
