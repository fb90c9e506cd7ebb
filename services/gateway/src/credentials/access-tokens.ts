import { randomUUID } from 'node:crypto';
import type { Ed25519KeyBundle } from '@parametric/ed25519-keys';
import { CAPABILITIES, type Capability, ROLES, type Role } from '@parametric/http';
import { errors, jwtVerify, SignJWT } from 'jose';
import { z } from 'zod';
import { type Clock, systemClock } from '../clock';

/**
 * The only audience our tokens carry, and the only one the gateway accepts (docs/api.md,
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
    capabilities: readonly Capability[];
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
  const clock = options.clock ?? systemClock;
  const byKid = new Map(keys.keys.map((k) => [k.kid, k.publicKey]));
  const maxTokenAge = options.ttlSeconds + 5;
  /**
   * A signature check costs more than the rest of a request, and a dashboard sends the same
   * token for its 15 minutes: a token that verified once is remembered, by its exact text, until
   * it would fail jose's time checks. Whether its session and user still hold is not a property
   * of the token, and is checked on every request by the caller.
   */
  const verified = new Map<string, AccessClaims>();
  const stillInTime = (claims: AccessClaims) => {
    const now = Math.floor(clock().getTime() / 1000);
    return (
      claims.exp > now - CLOCK_TOLERANCE_SECONDS && now - claims.iat - CLOCK_TOLERANCE_SECONDS <= maxTokenAge
    );
  };
  const remember = (token: string, claims: AccessClaims) => {
    if (verified.size >= VERIFIED_TOKENS_KEPT) {
      // The oldest first: Map keeps insertion order.
      const oldest = verified.keys().next();
      if (!oldest.done) verified.delete(oldest.value);
    }
    verified.set(token, claims);
  };
  return {
    async issue({ userId, organizationId, sessionId, role, capabilities }) {
      const now = Math.floor(clock().getTime() / 1000);
      const token = await new SignJWT({ org: organizationId, sid: sessionId, role, caps: [...capabilities] })
        .setProtectedHeader({ alg: 'EdDSA', kid: keys.activeKid, typ: 'JWT' })
        .setSubject(userId)
        .setIssuer(options.issuer)
        .setAudience(DASHBOARD_AUDIENCE)
        .setIssuedAt(now)
        .setExpirationTime(now + options.ttlSeconds)
        .setJti(randomUUID())
        .sign(keys.activePrivateKey);
      return { token, expiresIn: options.ttlSeconds };
    },
    async verify(token) {
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
            audience: DASHBOARD_AUDIENCE,
            issuer: options.issuer,
            typ: 'JWT',
            requiredClaims: ['sub', 'iat', 'exp', 'jti'],
            clockTolerance: CLOCK_TOLERANCE_SECONDS,
            maxTokenAge,
            currentDate: clock(),
          },
        );
        const claims = accessClaimsSchema.safeParse(payload);
        if (!claims.success) return undefined;
        remember(token, claims.data);
        return claims.data;
      } catch {
        return undefined;
      }
    },
  };
}
