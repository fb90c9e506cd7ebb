import { createRemoteJWKSet, decodeJwt, type JWTVerifyGetKey, jwtVerify } from 'jose';
import type { Clock } from '../clock';
import type { OpsOidcSettings } from '../config';

/** Asymmetric algorithms only: `none` and HMAC (a key anyone holding the public key could use) never pass. */
const ASYMMETRIC = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'];
const CLOCK_TOLERANCE_SECONDS = 5;

/** What a verified single sign-on token says of its operator. */
export interface SsoIdentity {
  sub: string;
  email?: string;
  /** The role claim as given: checked against the role table by the caller. */
  role?: string;
}

/**
 * Verifies bearer tokens of the configured OpenID Connect issuer (docs/ops.md, "Single sign-on"):
 * keys from the issuer's discovery document's `jwks_uri` (jose caches and refreshes them), every
 * fetch bounded by the timeout, `iss`, `aud`, `exp` and `nbf` checked.
 */
export function ssoVerifier(settings: OpsOidcSettings, clock: Clock) {
  let keys: JWTVerifyGetKey | undefined;
  let discovering: Promise<JWTVerifyGetKey> | undefined;
  const allowed = (url: URL) => url.protocol === 'https:' || (settings.allowHttp && url.protocol === 'http:');

  const discover = async (): Promise<JWTVerifyGetKey> => {
    const base = settings.issuer.endsWith('/') ? settings.issuer : `${settings.issuer}/`;
    const res = await fetch(new URL('.well-known/openid-configuration', base), {
      signal: AbortSignal.timeout(settings.timeoutMs),
      redirect: 'error',
    });
    if (!res.ok) throw new Error(`OIDC discovery answered ${res.status}`);
    const document = (await res.json()) as { issuer?: unknown; jwks_uri?: unknown };
    if (document.issuer !== settings.issuer) throw new Error('OIDC discovery names another issuer');
    if (typeof document.jwks_uri !== 'string') throw new Error('OIDC discovery has no jwks_uri');
    const jwksUri = new URL(document.jwks_uri);
    if (!allowed(jwksUri)) throw new Error('OIDC jwks_uri must be https');
    return createRemoteJWKSet(jwksUri, { timeoutDuration: settings.timeoutMs });
  };
  const keySet = async (): Promise<JWTVerifyGetKey> => {
    if (keys) return keys;
    // One discovery at a time; a failed one is tried again by the next request.
    discovering ??= discover().finally(() => {
      discovering = undefined;
    });
    keys = await discovering;
    return keys;
  };

  return {
    /** Whether a token claims to come from the issuer (unverified: it only chooses the check). */
    claimsIssuer(token: string): boolean {
      try {
        return decodeJwt(token).iss === settings.issuer;
      } catch {
        return false;
      }
    },
    /** The identity of a valid token; undefined for anything else, or when the issuer cannot be reached. */
    async verify(token: string): Promise<SsoIdentity | undefined> {
      try {
        const { payload } = await jwtVerify(token, await keySet(), {
          issuer: settings.issuer,
          audience: settings.audience,
          algorithms: ASYMMETRIC,
          requiredClaims: ['sub', 'exp'],
          clockTolerance: CLOCK_TOLERANCE_SECONDS,
          currentDate: clock(),
        });
        const role = payload[settings.roleClaim];
        return {
          sub: String(payload.sub),
          ...(typeof payload.email === 'string' ? { email: payload.email } : {}),
          ...(typeof role === 'string' ? { role } : {}),
        };
      } catch {
        return undefined;
      }
    },
  };
}
export type SsoVerifier = ReturnType<typeof ssoVerifier>;
