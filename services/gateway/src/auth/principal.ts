import { AppError, type PartnerCapability, ROLE_CAPABILITIES, type Role, roleHas } from '@parametric/http';
import type { Logger } from '@parametric/logger';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { ApiKeyDoc } from '../api-keys/model';
import type { Clock } from '../clock';
import type { AccessTokenIssuer } from '../credentials/access-tokens';
import { hashCredential, sameHash } from '../credentials/secrets';
import type { OrganizationDoc } from '../organizations/model';
import { consumeAll, settle } from '../rate-limit/limiter';
import type { Limit } from '../rate-limit/limits';
import type { GatewayDataAcross } from '../repositories';
import type { SessionDoc } from '../sessions/model';
import type { UserDoc } from '../users/model';
import { StampedCache } from './principal-cache';
import type { AuthVersions, CheckResult } from './versions';

/**
 * Who is calling: the organization behind a valid, active API key (`ORG_ADMIN`), or a
 * dashboard user behind a valid access token (the user's role, as of this request).
 */
export type Principal =
  | {
      kind: 'apiKey';
      organization: OrganizationDoc;
      role: 'ORG_ADMIN';
      capabilities: readonly PartnerCapability[];
      keyHash: string;
      /** What the partner rate limit counts against: the organization (`organizationLimitKey`). */
      limitKey: string;
    }
  | {
      kind: 'user';
      organization: OrganizationDoc;
      role: Role;
      capabilities: readonly PartnerCapability[];
      user: UserDoc;
      sessionId: string;
      /** The organization's dashboard bucket (`dashboardLimitKey`). */
      limitKey: string;
    };

/** What was wrong with the credentials sent, when they did not identify anyone. */
type Refusal = 'both' | 'bearer' | 'scheme';

declare global {
  namespace Express {
    interface Request {
      principal?: Principal;
      authRefusal?: Refusal;
      /** The caller's organization's version stamp as this request saw it (versions.ts), if Redis answered. */
      authVersion?: string;
    }
  }
}

/** Longer than any key we issue; anything longer is not worth hashing. */
const MAX_KEY_LENGTH = 128;
/** Our access tokens are about 600 bytes; anything much longer is not worth parsing. */
const MAX_TOKEN_LENGTH = 4096;

/** What a replica keeps of a resolved caller (principal-cache.ts), by key hash or by session. */
type Cached =
  | { kind: 'apiKey'; organization: OrganizationDoc; principal: Principal }
  | {
      kind: 'user';
      organization: OrganizationDoc;
      user: UserDoc;
      session: Pick<SessionDoc, '_id' | 'expiresAt'>;
    };

export interface AuthDeps {
  pepper: string;
  across: Pick<GatewayDataAcross, 'apiKeys' | 'organizations' | 'users' | 'sessions'>;
  accessTokens: AccessTokenIssuer;
  cache: StampedCache<Cached>;
  versions: AuthVersions;
  limits: { partner: Limit; anonymous: Limit; paymentsInitiate: Limit };
  clientIp: (req: Request) => string;
  logger: Logger;
  clock: Clock;
}

/**
 * The partner rate limit's bucket for the organization's API key (docs/api.md, "Rate limits"):
 * the organization's, not the key's, so a rotation continues the count. `POST /payments/initiate`
 * counts here for every caller of the organization, dashboard users included.
 */
export function organizationLimitKey(organizationId: string): string {
  return `org:${organizationId}`;
}

/**
 * The bucket every dashboard user of an organization shares, the same size as the key's but
 * apart from it: people paging through the dashboard (its overview alone is eight reads) never
 * starve the organization's integration, nor its integration them; and one bucket for all of
 * them, so inviting users does not multiply the budget (docs/decisions.md, "Dashboard budget").
 */
export function dashboardLimitKey(organizationId: string): string {
  return `dashboard:${organizationId}`;
}

export function principalCache(maxEntries: number, maxAgeMs: number): StampedCache<Cached> {
  return new StampedCache<Cached>(maxEntries, maxAgeMs);
}

/** How a caller was resolved: who, the organization's stamp it was checked under, and the partner point if spent. */
interface Resolution {
  principal?: Principal;
  version?: string;
  limited?: CheckResult['limited'];
}

/**
 * Resolves the credentials and counts the request against its rate limits, without answering
 * yet, so every request is counted (anonymous ones by client IP) before `requirePrincipal`
 * rejects. `x-api-key` is looked up as a key only and a bearer token verified as a dashboard
 * JWT only, so neither ever works as the other.
 *
 * A caller resolved before is taken from this replica's cache when the organization's version
 * stamp in Redis is still the one it was cached under; that check and the partner rate limit
 * are one Redis round trip, and nothing is read from MongoDB. Any other case reads MongoDB
 * (after reading the stamp, so what is cached can never be older than its stamp). While Redis
 * does not answer, nothing is cached or taken from the cache, and the limits fall back to
 * this replica's memory.
 */
export function authenticate(deps: AuthDeps): RequestHandler {
  return async (req: Request, res: Response, next: NextFunction) => {
    const key = req.headers['x-api-key'];
    const authorization = req.headers.authorization;
    const bearer =
      typeof authorization === 'string' ? /^Bearer +(\S+) *$/i.exec(authorization)?.[1] : undefined;
    let resolution: Resolution = {};
    if (key !== undefined && bearer !== undefined) {
      req.authRefusal = 'both';
    } else if (bearer !== undefined) {
      resolution = await userPrincipal(deps, bearer);
      if (!resolution.principal) req.authRefusal = 'bearer';
    } else if (key === undefined && authorization !== undefined) {
      req.authRefusal = 'scheme';
    } else if (typeof key === 'string' && key.length > 0 && key.length <= MAX_KEY_LENGTH) {
      resolution = await keyPrincipal(deps, hashCredential(deps.pepper, key));
    }
    const { principal } = resolution;
    req.principal = principal;
    // What `mountRoutes` checks the gateway's own routes' capabilities against.
    req.caller = principal;
    req.authVersion = resolution.version;

    const { limits } = deps;
    const paymentsInitiate = req.method === 'POST' && req.path === '/payments/initiate';
    if (resolution.limited && !paymentsInitiate) {
      // A cached caller has spent its point with the stamp check: nothing is left to await.
      next(settle(res, limits.partner.spec, resolution.limited.state, resolution.limited.over));
      return;
    }
    const picked: Array<{ limit: Limit; key: string }> = [];
    if (!principal) {
      picked.push({ limit: limits.anonymous, key: `ip:${deps.clientIp(req)}` });
    } else {
      if (resolution.limited) {
        const refused = settle(res, limits.partner.spec, resolution.limited.state, resolution.limited.over);
        if (refused) return next(refused);
      } else {
        picked.push({ limit: limits.partner, key: principal.limitKey });
      }
      if (paymentsInitiate) {
        picked.push({
          limit: limits.paymentsInitiate,
          key: organizationLimitKey(principal.organization._id),
        });
      }
    }
    next(picked.length === 0 ? undefined : await consumeAll(res, picked, deps.logger));
  };
}

/**
 * The stamp check (and, when the cached principal is good, the partner point) in one round
 * trip. Undefined when Redis does not answer: the cache is then dropped, since a change made
 * while this replica could not see the stamps would go unnoticed.
 */
async function checkStamp(
  deps: AuthDeps,
  organizationId: string,
  expected: string | undefined,
  limitKey: string,
): Promise<CheckResult | undefined> {
  try {
    return await deps.versions.check(organizationId, expected, deps.limits.partner, limitKey);
  } catch (err) {
    deps.cache.clear();
    deps.logger.warn({ err: (err as Error).message }, 'auth cache: Redis did not answer; reading MongoDB');
    return undefined;
  }
}

async function currentStamp(deps: AuthDeps, organizationId: string): Promise<string | undefined> {
  try {
    return await deps.versions.current(organizationId);
  } catch (err) {
    deps.cache.clear();
    deps.logger.warn({ err: (err as Error).message }, 'auth cache: Redis did not answer; reading MongoDB');
    return undefined;
  }
}

function keyPrincipalOf(organization: OrganizationDoc, keyHash: string): Principal {
  return {
    kind: 'apiKey',
    organization,
    role: 'ORG_ADMIN',
    capabilities: ROLE_CAPABILITIES.ORG_ADMIN,
    keyHash,
    limitKey: organizationLimitKey(organization._id),
  };
}

/** The organization behind an active API key, from the cache or from MongoDB. */
async function keyPrincipal(deps: AuthDeps, keyHash: string): Promise<Resolution> {
  const cacheKey = `key:${keyHash}`;
  const cached = deps.cache.get(cacheKey);
  let organizationId: string;
  let version: string | undefined;
  if (cached?.value.kind === 'apiKey') {
    // The principal made when the entry was stored: a request of a cached caller builds nothing.
    const { principal } = cached.value;
    const check = await checkStamp(deps, cached.organizationId, cached.version, principal.limitKey);
    if (check?.limited) return { principal, version: check.version, limited: check.limited };
    organizationId = cached.organizationId;
    version = check?.version;
  } else {
    const record = await deps.across.apiKeys.findOne({ keyHash, active: true }, { _id: 1 }).lean();
    if (!record) return {};
    organizationId = record._id;
    version = await currentStamp(deps, organizationId);
  }
  // Read after the stamp: the key again (a rotation may have come between), and its organization.
  const [record, organization] = await Promise.all([
    deps.across.apiKeys.findById(organizationId).lean<ApiKeyDoc>(),
    deps.across.organizations.findById(organizationId).lean<OrganizationDoc>(),
  ]);
  if (!record?.active || !sameHash(record.keyHash, keyHash) || !organization) {
    deps.cache.delete(cacheKey);
    return {};
  }
  const principal = keyPrincipalOf(organization, keyHash);
  if (version !== undefined)
    deps.cache.set(cacheKey, organizationId, version, { kind: 'apiKey', organization, principal });
  return { principal, version };
}

/**
 * A dashboard user from an access token: the user still active, the sign-in session not
 * revoked, the organization still there, from the cache or from MongoDB. The token's
 * capabilities are narrowed to the user's current role, so a demotion applies at once.
 */
async function userPrincipal(deps: AuthDeps, token: string): Promise<Resolution> {
  if (token.length > MAX_TOKEN_LENGTH) return {};
  const claims = await deps.accessTokens.verify(token);
  if (!claims) return {};
  const principalOf = (organization: OrganizationDoc, user: UserDoc): Principal => {
    const role = user.role as Role;
    return {
      kind: 'user',
      organization,
      role,
      capabilities: claims.caps.filter((capability) => roleHas(role, capability)),
      user,
      sessionId: claims.sid,
      limitKey: dashboardLimitKey(organization._id),
    };
  };
  const cacheKey = `session:${claims.sid}`;
  const cached = deps.cache.get(cacheKey);
  const good =
    cached?.value.kind === 'user' &&
    cached.value.user._id === claims.sub &&
    cached.organizationId === claims.org &&
    cached.value.session.expiresAt.getTime() > deps.clock().getTime()
      ? cached
      : undefined;
  // The token names the organization, so the stamp is read before anything else, hit or miss.
  const check = await checkStamp(deps, claims.org, good?.version, dashboardLimitKey(claims.org));
  if (good?.value.kind === 'user' && check?.limited) {
    return {
      principal: principalOf(good.value.organization, good.value.user),
      version: check.version,
      limited: check.limited,
    };
  }
  const [user, session, organization] = await Promise.all([
    deps.across.users.findOne({ _id: claims.sub, organizationId: claims.org }).lean<UserDoc>(),
    deps.across.sessions
      .findOne({ _id: claims.sid, organizationId: claims.org, userId: claims.sub })
      .lean<SessionDoc>(),
    deps.across.organizations.findById(claims.org).lean<OrganizationDoc>(),
  ]);
  if (user?.status !== 'ACTIVE' || !session || session.revokedAt || !organization) {
    deps.cache.delete(cacheKey);
    return {};
  }
  if (check) {
    deps.cache.set(cacheKey, claims.org, check.version, {
      kind: 'user',
      organization,
      user,
      session: { _id: session._id, expiresAt: session.expiresAt },
    });
  }
  return { principal: principalOf(organization, user), version: check?.version };
}

const REFUSALS: Record<Refusal, () => AppError> = {
  both: () => AppError.invalid('Send either x-api-key or Authorization: Bearer, not both'),
  bearer: () => AppError.unauthorized('Invalid, expired or revoked access token'),
  scheme: () =>
    AppError.unauthorized(
      'Unsupported Authorization scheme: send x-api-key, or Authorization: Bearer with a dashboard access token',
    ),
};

/**
 * Why a partner request was refused for its credentials: the `reason` of `auth_failures_total`
 * (a fixed set: never the key, the token or the organization).
 */
export type AuthFailureReason =
  | 'both_credentials'
  | 'invalid_token'
  | 'unsupported_scheme'
  | 'invalid_key'
  | 'missing_key'
  | 'organization_deactivated';

const REFUSAL_REASONS: Record<Refusal, AuthFailureReason> = {
  both: 'both_credentials',
  bearer: 'invalid_token',
  scheme: 'unsupported_scheme',
};

/**
 * 401 without valid credentials; 403 for a deactivated organization (docs/api.md,
 * "Authentication"). `refused` hears the reason of each refusal (the gateway counts them).
 */
export function requirePrincipalCounting(refused?: (reason: AuthFailureReason) => void) {
  return (req: Request, _res: Response, next: NextFunction): void => {
    if (req.authRefusal) {
      refused?.(REFUSAL_REASONS[req.authRefusal]);
      next(REFUSALS[req.authRefusal]());
      return;
    }
    if (!req.principal) {
      const sent = typeof req.headers['x-api-key'] === 'string' && req.headers['x-api-key'] !== '';
      refused?.(sent ? 'invalid_key' : 'missing_key');
      next(AppError.unauthorized(sent ? 'Invalid, revoked or replaced API key' : 'Missing x-api-key header'));
      return;
    }
    if (!req.principal.organization.isActive) {
      refused?.('organization_deactivated');
      next(AppError.forbidden('Organization is deactivated'));
      return;
    }
    next();
  };
}

/** `requirePrincipalCounting` without a counter. */
export const requirePrincipal = requirePrincipalCounting();

/** The authenticated caller of a partner request. */
export function principalOf(req: Request): Principal {
  if (!req.principal) throw new Error('requirePrincipal must run before this handler');
  return req.principal;
}
