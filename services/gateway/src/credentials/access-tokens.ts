import { randomUUID } from 'node:crypto';
import type { Ed25519KeyBundle } from '@parametric/ed25519-keys';
import { CAPABILITIES, type PartnerCapability, ROLES, type Role } from '@parametric/http';
import { decodeJwt, errors, jwtVerify, SignJWT } from 'jose';
import { z } from 'zod';
import { type Clock, systemClock } from '../clock';

/**
 * The audience of dashboard tokens, the only one the partner API accepts (docs/api.md,
 * "Dashboard users and tokens").
 */
export const DASHBOARD_AUDIENCE = 'dashboard';

/** What an access token says, once its signature, audience, issuer and lifetime held. */
export const accessClaimsSchema = z.object({
  sub: z.uuid(),
  org: z.uuid(),
  /** The sign-in session (refresh-token family): logout or theft detection revokes it. */
  sid: z.uuid(),
  role: z.enum(ROLES),
  caps: z.array(z.enum(CAPABILITIES)),
  jti: z.uuid(),
  iat: z.number().int(),
  exp: z.number().int(),
});
export type AccessClaims = z.infer<typeof accessClaimsSchema>;

export interface AccessTokenIssuer {
  issue(subject: {
    userId: string;
    organizationId: string;
    sessionId: string;
    role: Role;
    capabilities: readonly PartnerCapability[];
  }): Promise<{ token: string; expiresIn: number }>;
  /** The claims of a valid token, or undefined for anything else (never throws for bad input). */
  verify(token: string): Promise<AccessClaims | undefined>;
}

/**
 * Access tokens: EdDSA (Ed25519) JWTs signed with the active key of the configured bundle,
 * `kid` in the header; verification accepts any key of the bundle by `kid` (rotation), only
 * EdDSA (so `alg: none` or an HMAC token made with a public key never passes), only our
 * issuer and the dashboard audience.
 */
/** Seconds of clock skew allowed on `exp` and `iat`, as jose is told below. */
const CLOCK_TOLERANCE_SECONDS = 5;
/** Verified tokens remembered per process; about 1 KiB each. */
const VERIFIED_TOKENS_KEPT = 10_000;

export function accessTokens(
  keys: Ed25519KeyBundle,
  options: { issuer: string; ttlSeconds: number; clock?: Clock },
): AccessTokenIssuer {
  const core = signedTokens(keys, { ...options, audience: DASHBOARD_AUDIENCE, claims: accessClaimsSchema });
  return {
    issue: ({ userId, organizationId, sessionId, role, capabilities }) =>
      core.issue(userId, { org: organizationId, sid: sessionId, role, caps: [...capabilities] }),
    verify: core.verify,
  };
}

/** The audience of operators' access tokens (ops API only; never accepted on the partner API). */
export const OPS_AUDIENCE = 'ops';

/** What an operator's access token says: who, which sign-in session. The role is read per request. */
export const operatorClaimsSchema = z.object({
  sub: z.uuid(),
  sid: z.uuid(),
  jti: z.uuid(),
  iat: z.number().int(),
  exp: z.number().int(),
});
export type OperatorClaims = z.infer<typeof operatorClaimsSchema>;

/**
 * Operators' access tokens: the same keys, issuer and checks as dashboard tokens, another
 * audience, so neither API ever accepts the other's token (one identity core, two audiences).
 */
export function operatorTokens(
  keys: Ed25519KeyBundle,
  options: { issuer: string; ttlSeconds: number; clock?: Clock },
) {
  const core = signedTokens(keys, { ...options, audience: OPS_AUDIENCE, claims: operatorClaimsSchema });
  return {
    issue: (operatorId: string, sessionId: string) => core.issue(operatorId, { sid: sessionId }),
    verify: core.verify,
  };
}
export type OperatorTokens = ReturnType<typeof operatorTokens>;

/**
 * What a machine client's access token says (issue 25): which client, the generation of the
 * secret it was issued under (a rotation ends the old one's tokens), and the scopes granted.
 * Capabilities are not in it: they are looked up from the scopes on every request.
 */
export const clientClaimsSchema = z.object({
  sub: z.uuid(),
  gen: z.number().int().positive(),
  scope: z.string(),
  jti: z.uuid(),
  iat: z.number().int(),
  exp: z.number().int(),
});
export type ClientClaims = z.infer<typeof clientClaimsSchema>;

/** Machine clients' access tokens: the operators' keys, issuer and audience, other claims. */
export function clientTokens(
  keys: Ed25519KeyBundle,
  options: { issuer: string; ttlSeconds: number; clock?: Clock },
) {
  const core = signedTokens(keys, { ...options, audience: OPS_AUDIENCE, claims: clientClaimsSchema });
  return {
    issue: (clientId: string, generation: number, scopes: readonly string[]) =>
      core.issue(clientId, { gen: generation, scope: scopes.join(' ') }),
    verify: core.verify,
  };
}
export type ClientTokens = ReturnType<typeof clientTokens>;

/**
 * Whether an ops bearer token looks like a machine client's (it carries `gen`), read without
 * verifying: it only chooses which verification runs, and that one checks everything.
 */
export function looksLikeClientToken(token: string): boolean {
  try {
    return 'gen' in decodeJwt(token);
  } catch {
    return false;
  }
}

/** Signing and verifying one audience's tokens, remembering those that verified. */
function signedTokens<C extends { iat: number; exp: number }>(
  keys: Ed25519KeyBundle,
  options: { issuer: string; ttlSeconds: number; clock?: Clock; audience: string; claims: z.ZodType<C> },
) {
  const clock = options.clock ?? systemClock;
  const byKid = new Map(keys.keys.map((k) => [k.kid, k.publicKey]));
  const maxTokenAge = options.ttlSeconds + 5;
  /**
   * A signature check costs more than the rest of a request, and a dashboard sends the same
   * token for its 15 minutes: a token that verified once is remembered, by its exact text, until
   * it would fail jose's time checks. Whether its session and user still hold is not a property
   * of the token, and is checked on every request by the caller.
   */
  const verified = new Map<string, C>();
  const stillInTime = (claims: C) => {
    const now = Math.floor(clock().getTime() / 1000);
    return (
      claims.exp > now - CLOCK_TOLERANCE_SECONDS && now - claims.iat - CLOCK_TOLERANCE_SECONDS <= maxTokenAge
    );
  };
  const remember = (token: string, claims: C) => {
    if (verified.size >= VERIFIED_TOKENS_KEPT) {
      // The oldest first: Map keeps insertion order.
      const oldest = verified.keys().next();
      if (!oldest.done) verified.delete(oldest.value);
    }
    verified.set(token, claims);
  };
  return {
    async issue(subject: string, claims: Record<string, unknown>) {
      const now = Math.floor(clock().getTime() / 1000);
      const token = await new SignJWT(claims)
        .setProtectedHeader({ alg: 'EdDSA', kid: keys.activeKid, typ: 'JWT' })
        .setSubject(subject)
        .setIssuer(options.issuer)
        .setAudience(options.audience)
        .setIssuedAt(now)
        .setExpirationTime(now + options.ttlSeconds)
        .setJti(randomUUID())
        .sign(keys.activePrivateKey);
      return { token, expiresIn: options.ttlSeconds };
    },
    async verify(token: string): Promise<C | undefined> {
      const known = verified.get(token);
      if (known) {
        if (stillInTime(known)) return known;
        verified.delete(token);
        return undefined;
      }
      try {
        const { payload } = await jwtVerify(
          token,
          (header) => {
            const key = header.kid === undefined ? undefined : byKid.get(header.kid);
            if (!key) throw new errors.JWKSNoMatchingKey();
            return key;
          },
          {
            algorithms: ['EdDSA'],
            audience: options.audience,
            issuer: options.issuer,
            typ: 'JWT',
            requiredClaims: ['sub', 'iat', 'exp', 'jti'],
            clockTolerance: CLOCK_TOLERANCE_SECONDS,
            maxTokenAge,
            currentDate: clock(),
          },
        );
        const claims = options.claims.safeParse(payload);
        if (!claims.success) return undefined;
        remember(token, claims.data);
        return claims.data;
      } catch {
        return undefined;
      }
    },
  };
}
