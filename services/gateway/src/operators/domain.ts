import { randomUUID } from 'node:crypto';
import type { OpsRole } from '@parametric/contracts';
import { AppError } from '@parametric/http';
import type { Logger } from '@parametric/logger';
import { isDuplicateKey } from '@parametric/mongo';
import type { Clock } from '../clock';
import type { OperatorTokens } from '../credentials/access-tokens';
import { assertAcceptablePassword, hashPassword } from '../credentials/passwords';
import { hashCredential, randomSecret } from '../credentials/secrets';
import type { LoginThrottle } from '../rate-limit/login-throttle';
import { badRefresh, checkSignIn, spendRefreshToken, tokensAnswer } from '../sessions/core';
import type { OperatorRefreshTokenModel, OperatorSessionModel } from '../sessions/model';
import type { SessionEndReason } from '../sessions/reasons';
import { invalidInvitation, newInvitation } from '../users/domain';
import type { OperatorDoc, OperatorModel } from './model';
import { operatorView } from './view';

export interface OperatorsDeps {
  operators: OperatorModel;
  sessions: OperatorSessionModel;
  refreshTokens: OperatorRefreshTokenModel;
  /** Invitation and refresh tokens are stored only as HMACs under it (credentials/secrets.ts). */
  pepper: string;
  invitationTtlSeconds: number;
  refreshTtlSeconds: number;
  tokens: OperatorTokens;
  throttle: LoginThrottle;
  /** Checked instead when there is no real hash, so every failure costs the same. */
  dummyHash: string;
  logger: Logger;
  clock: Clock;
}

/**
 * Operators and their sign-in (issue 25): the dashboard's rules (sessions/core.ts, the invitation
 * and password rules of users/domain.ts), their own collections and token audience.
 */
export function createOperators(deps: OperatorsDeps) {
  return {
    invite: (input: { email: string; role: OpsRole }) => invite(deps, input),
    list: (query: { page: number; limit: number; status?: string; role?: string }) => list(deps, query),
    update: (actorId: string | undefined, id: string, changes: OperatorChanges) =>
      update(deps, actorId, id, changes),
    acceptInvitation: (input: { token: string; password: string }) => acceptInvitation(deps, input),
    login: (input: { email: string; password: string }, clientIp: string) => login(deps, input, clientIp),
    verify: (input: { email: string; password: string }, clientIp: string) =>
      verify(deps, input, clientIp).then(({ operator }) => operator),
    refresh: (refreshToken: string) => refresh(deps, refreshToken),
    logout: (refreshToken: string) => logout(deps, refreshToken),
    resolve: (token: string) => resolve(deps, token),
    active: (id: string) => active(deps, id),
  };
}

export type Operators = ReturnType<typeof createOperators>;

async function invite(deps: OperatorsDeps, input: { email: string; role: OpsRole }) {
  const invitation = newInvitation(deps);
  let operator: OperatorDoc;
  try {
    const created = await deps.operators.create({
      email: input.email,
      role: input.role,
      status: 'INVITED',
      invitationHash: invitation.hash,
      invitationExpiresAt: invitation.expiresAt,
    });
    operator = created.toObject() as OperatorDoc;
  } catch (err) {
    if (isDuplicateKey(err)) {
      throw AppError.conflict('An operator with this email already exists', [
        { field: 'email', message: 'is already used by an operator' },
      ]);
    }
    throw err;
  }
  return {
    operator: operatorView(operator),
    invitationToken: invitation.token,
    invitationExpiresAt: invitation.expiresAt.toISOString(),
  };
}

async function list(
  deps: OperatorsDeps,
  query: { page: number; limit: number; status?: string; role?: string },
) {
  const filter: Record<string, unknown> = {
    ...(query.status ? { status: query.status } : {}),
    ...(query.role ? { role: query.role } : {}),
  };
  const [items, total] = await Promise.all([
    deps.operators
      .find(filter)
      .sort({ createdAt: -1, _id: -1 })
      .skip((query.page - 1) * query.limit)
      .limit(query.limit)
      .lean<OperatorDoc[]>(),
    deps.operators.countDocuments(filter),
  ]);
  return { items: items.map(operatorView), total };
}

type OperatorChanges = { role?: OpsRole; status?: 'ACTIVE' | 'DEACTIVATED' };

/**
 * Changes an operator's role or status. Deactivation revokes every sign-in session; the access
 * tokens fail at once anyway, since every ops request reads the operator (auth/ops-caller.ts).
 * Nobody changes their own role or status: an admin cannot lock the last admin out by mistake,
 * nor promote themselves.
 */
async function update(
  deps: OperatorsDeps,
  actorId: string | undefined,
  id: string,
  changes: OperatorChanges,
) {
  if (actorId === id) throw AppError.forbidden('An operator cannot change their own role or status');
  const operator = await deps.operators.findById(id).lean<OperatorDoc>();
  if (!operator) throw AppError.notFound('Operator');
  let status = operator.status;
  if (changes.status === 'DEACTIVATED') status = 'DEACTIVATED';
  // Restored operators go back to where they were: signed-up ones active, others still invited.
  if (changes.status === 'ACTIVE' && operator.status === 'DEACTIVATED')
    status = operator.passwordHash ? 'ACTIVE' : 'INVITED';
  const deactivating = status === 'DEACTIVATED' && operator.status !== 'DEACTIVATED';
  const now = deps.clock();
  const updated = await deps.operators
    .findOneAndUpdate(
      // Conditional on what was read, so two concurrent changes cannot interleave.
      { _id: id, status: operator.status, role: operator.role },
      {
        $set: {
          role: changes.role ?? operator.role,
          status,
          ...(deactivating ? { deactivatedAt: now, invitationHash: null, invitationExpiresAt: null } : {}),
          ...(status !== 'DEACTIVATED' ? { deactivatedAt: null } : {}),
        },
      },
      { returnDocument: 'after' },
    )
    .lean<OperatorDoc>();
  if (!updated) {
    throw AppError.conflict(
      'The operator was changed by another request at the same time; read it and try again',
    );
  }
  if (deactivating) await endSessions(deps, { userId: id }, 'USER_DEACTIVATED', now);
  return operatorView(updated);
}

async function acceptInvitation(deps: OperatorsDeps, input: { token: string; password: string }) {
  const invitationHash = hashCredential(deps.pepper, input.token);
  const operator = await deps.operators.findOne({ invitationHash, status: 'INVITED' }).lean<OperatorDoc>();
  if (!operator?.invitationExpiresAt || operator.invitationExpiresAt.getTime() <= deps.clock().getTime()) {
    throw invalidInvitation();
  }
  assertAcceptablePassword(input.password, operator.email, 'password');
  const passwordHash = await hashPassword(input.password);
  const accepted = await deps.operators
    .findOneAndUpdate(
      // The token is single use: only the request that still finds it redeems it.
      { _id: operator._id, invitationHash, status: 'INVITED' },
      { $set: { passwordHash, status: 'ACTIVE', invitationHash: null, invitationExpiresAt: null } },
      { returnDocument: 'after' },
    )
    .lean<OperatorDoc>();
  if (!accepted) throw invalidInvitation();
  return { operator: operatorView(accepted) };
}

async function login(deps: OperatorsDeps, input: { email: string; password: string }, clientIp: string) {
  const { operator, now } = await verify(deps, input, clientIp);
  const sessionId = randomUUID();
  await deps.sessions.create({ _id: sessionId, userId: operator._id, expiresAt: refreshExpiry(deps, now) });
  deps.logger.info({ operatorId: operator._id, sessionId }, 'operator sign-in');
  return issueTokens(deps, operator._id, sessionId, now);
}

/**
 * An operator's email and password checked as a sign-in is (the throttle, one scrypt, the
 * operator `ACTIVE`; `lastLoginAt` set), without a session: what a sign-in starts with, and all
 * that HTTP Basic on the queue dashboard needs (auth/password-cache.ts keeps its success briefly).
 */
async function verify(deps: OperatorsDeps, input: { email: string; password: string }, clientIp: string) {
  await deps.throttle.assertAllowed(input.email, clientIp);
  const found = await deps.operators.findOne({ email: input.email }).lean<OperatorDoc>();
  const { account: operator, rehash } = await checkSignIn(deps, found, input, clientIp);
  const now = deps.clock();
  await deps.operators.updateOne({ _id: operator._id }, { $set: { lastLoginAt: now, ...rehash } });
  return { operator, now };
}

async function refresh(deps: OperatorsDeps, refreshToken: string) {
  const tokenHash = hashCredential(deps.pepper, refreshToken);
  const token = await deps.refreshTokens.findById(tokenHash).lean();
  if (!token) throw badRefresh();
  const now = deps.clock();
  await spendRefreshToken(deps.refreshTokens, token, now, async () => {
    await endSessions(deps, { _id: token.sessionId }, 'REFRESH_TOKEN_REUSED', now);
    deps.logger.warn(
      { operatorId: token.userId, sessionId: token.sessionId },
      'a spent operator refresh token was presented again: session revoked',
    );
  });
  const [session, operator] = await Promise.all([
    deps.sessions.findById(token.sessionId).lean(),
    deps.operators.findById(token.userId).lean<OperatorDoc>(),
  ]);
  if (!session || session.revokedAt || operator?.status !== 'ACTIVE') throw badRefresh();
  await deps.sessions.updateOne(
    { _id: session._id },
    { $set: { lastRefreshedAt: now, expiresAt: refreshExpiry(deps, now) } },
  );
  return issueTokens(deps, operator._id, session._id, now);
}

/** Ends the refresh token's session. Unknown tokens are ignored (RFC 7009). */
async function logout(deps: OperatorsDeps, refreshToken: string) {
  const token = await deps.refreshTokens.findById(hashCredential(deps.pepper, refreshToken)).lean();
  if (token) await endSessions(deps, { _id: token.sessionId }, 'LOGOUT', deps.clock());
  return { loggedOut: true as const };
}

/**
 * The operator behind an access token, read on every request (ops requests are few): an operator
 * deactivated, or a session revoked, stops the token at once on every replica.
 */
async function resolve(deps: OperatorsDeps, token: string) {
  const claims = await deps.tokens.verify(token);
  if (!claims) return undefined;
  const [operator, session] = await Promise.all([
    deps.operators.findById(claims.sub).lean<OperatorDoc>(),
    deps.sessions.findOne({ _id: claims.sid, userId: claims.sub }).lean(),
  ]);
  if (operator?.status !== 'ACTIVE' || !session || session.revokedAt) return undefined;
  return operator;
}

/**
 * The operator while `ACTIVE`, read afresh: a password checked a little earlier (HTTP Basic's
 * cached success) stops at once when they are deactivated, and their current role applies, as
 * with an access token (`resolve`).
 */
async function active(deps: OperatorsDeps, id: string) {
  const operator = await deps.operators.findById(id).lean<OperatorDoc>();
  return operator?.status === 'ACTIVE' ? operator : undefined;
}

async function endSessions(
  deps: OperatorsDeps,
  which: { _id: string } | { userId: string },
  reason: SessionEndReason,
  at: Date,
) {
  await deps.sessions.updateMany(
    { ...which, revokedAt: null },
    { $set: { revokedAt: at, revokedReason: reason } },
  );
}

function refreshExpiry(deps: OperatorsDeps, now: Date): Date {
  return new Date(now.getTime() + deps.refreshTtlSeconds * 1000);
}

async function issueTokens(deps: OperatorsDeps, operatorId: string, sessionId: string, now: Date) {
  const refreshToken = randomSecret('ort');
  await deps.refreshTokens.create({
    _id: hashCredential(deps.pepper, refreshToken),
    sessionId,
    userId: operatorId,
    expiresAt: refreshExpiry(deps, now),
  });
  const access = await deps.tokens.issue(operatorId, sessionId);
  return tokensAnswer(access, refreshToken, deps.refreshTtlSeconds);
}
