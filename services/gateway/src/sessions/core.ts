import { AppError } from '@parametric/http';
import { hashPassword, needsRehash, verifyPassword } from '../credentials/passwords';
import type { LoginThrottle } from '../rate-limit/login-throttle';

/**
 * The sign-in rules both audiences share (issue 25: one identity core, two audiences): dashboard
 * users (sessions/domain.ts) and operators (operators/domain.ts) sign in, refresh and are throttled
 * by these same functions; only where the person and the session are stored differs.
 */

export const badCredentials = () => AppError.unauthorized('Invalid email or password');
export const badRefresh = () =>
  AppError.unauthorized('Invalid, expired or revoked refresh token; sign in again');
export const reusedRefresh = () =>
  AppError.unauthorized('This refresh token was already used; the session is revoked, sign in again');

/** A person who signs in with a password. */
interface Account {
  status: string;
  passwordHash?: string | null;
}

/**
 * Checks a sign-in. Unknown email, wrong password, a person not `ACTIVE`: one answer, after one
 * scrypt either way, and one failure counted against the account and the address. Returns the
 * hash to store when the password's hash should be upgraded.
 */
export async function checkSignIn<A extends Account>(
  deps: { throttle: LoginThrottle; dummyHash: string },
  account: A | null,
  input: { email: string; password: string },
  clientIp: string,
): Promise<{ account: A; rehash: { passwordHash?: string } }> {
  const matches = await verifyPassword(input.password, account?.passwordHash ?? deps.dummyHash);
  if (!account || !matches || account.status !== 'ACTIVE') {
    await deps.throttle.recordFailure(input.email, clientIp);
    throw badCredentials();
  }
  await deps.throttle.recordSuccess(input.email);
  const rehash = needsRehash(account.passwordHash ?? '')
    ? { passwordHash: await hashPassword(input.password) }
    : {};
  return { account, rehash };
}

/**
 * Spends a refresh token (by its hash) once. Spent before means a copy exists: `revoke` ends the
 * whole session (the caller's store, the caller's log line) and the answer says so. An expired
 * token is refused after being spent, so it cannot be tried again either.
 */
export async function spendRefreshToken(
  refreshTokens: { findOneAndUpdate(filter: object, update: object): PromiseLike<unknown> },
  token: { _id: string; expiresAt: Date },
  now: Date,
  revoke: () => Promise<void>,
): Promise<void> {
  const spent = await refreshTokens.findOneAndUpdate(
    { _id: token._id, spentAt: null },
    { $set: { spentAt: now } },
  );
  if (spent === null) {
    await revoke();
    throw reusedRefresh();
  }
  if (token.expiresAt.getTime() <= now.getTime()) throw badRefresh();
}

/** The sign-in answer of either audience (the contracts' `tokensSchema`). */
export function tokensAnswer(
  access: { token: string; expiresIn: number },
  refreshToken: string,
  refreshTtlSeconds: number,
) {
  return {
    accessToken: access.token,
    tokenType: 'Bearer' as const,
    expiresIn: access.expiresIn,
    refreshToken,
    refreshExpiresIn: refreshTtlSeconds,
  };
}
