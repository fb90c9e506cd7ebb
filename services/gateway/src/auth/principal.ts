import { type Capability, ROLE_CAPABILITIES, type Role, roleHas } from '@parametric/contracts';
import { AppError } from '@parametric/http';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { hashCredential, sameHash } from '../api-keys/credentials';
import type { OrganizationDoc } from '../organizations/model';
import type { GatewayDataAcross } from '../repositories';
import type { UserDoc } from '../users/model';
import type { AccessTokenIssuer } from './access-tokens';

/**
 * Who is calling: the organization behind a valid, active API key (`ORG_ADMIN`), or a
 * dashboard user behind a valid access token (the user's role, as of this request).
 */
export type Principal =
  | {
      kind: 'apiKey';
      organization: OrganizationDoc;
      role: 'ORG_ADMIN';
      capabilities: readonly Capability[];
      keyHash: string;
      /** What the partner rate limit counts against. */
      limitKey: string;
    }
  | {
      kind: 'user';
      organization: OrganizationDoc;
      role: Role;
      capabilities: readonly Capability[];
      user: UserDoc;
      sessionId: string;
      limitKey: string;
    };

/** What was wrong with the credentials sent, when they did not identify anyone. */
type Refusal = 'both' | 'bearer' | 'scheme';

declare global {
  namespace Express {
    interface Request {
      principal?: Principal;
      authRefusal?: Refusal;
    }
  }
}

/** Longer than any key we issue; anything longer is not worth hashing. */
const MAX_KEY_LENGTH = 128;
/** Our access tokens are about 600 bytes; anything much longer is not worth parsing. */
const MAX_TOKEN_LENGTH = 4096;

/**
 * Resolves the credentials without answering yet, so the rate limiter can count every
 * request (anonymous ones by client IP) before `requirePrincipal` rejects. `x-api-key` is
 * looked up as a key only and a bearer token verified as a dashboard JWT only, so neither
 * ever works as the other.
 */
export function identify(deps: {
  pepper: string;
  across: Pick<GatewayDataAcross, 'apiKeys' | 'organizations' | 'users' | 'sessions'>;
  accessTokens: AccessTokenIssuer;
}): RequestHandler {
  return async (req: Request, _res: Response, next: NextFunction) => {
    const key = req.headers['x-api-key'];
    const authorization = req.headers.authorization;
    const bearer =
      typeof authorization === 'string' ? /^Bearer +(\S+) *$/i.exec(authorization)?.[1] : undefined;
    if (key !== undefined && bearer !== undefined) {
      req.authRefusal = 'both';
      return next();
    }
    if (bearer !== undefined) {
      req.principal = await userPrincipal(deps, bearer);
      if (!req.principal) req.authRefusal = 'bearer';
      return next();
    }
    if (key === undefined && authorization !== undefined) {
      req.authRefusal = 'scheme';
      return next();
    }
    if (typeof key !== 'string' || key.length === 0 || key.length > MAX_KEY_LENGTH) return next();
    const keyHash = hashCredential(deps.pepper, key);
    const record = await deps.across.apiKeys.findOne({ keyHash, active: true }).lean();
    if (!record || !sameHash(record.keyHash, keyHash)) return next();
    const organization = await deps.across.organizations.findById(record._id).lean<OrganizationDoc>();
    if (organization) {
      req.principal = {
        kind: 'apiKey',
        organization,
        role: 'ORG_ADMIN',
        capabilities: ROLE_CAPABILITIES.ORG_ADMIN,
        keyHash,
        limitKey: keyHash,
      };
    }
    next();
  };
}

/**
 * A dashboard user from an access token, checked against the store on every request: the user
 * still active, the sign-in session not revoked, the organization still there. The token's
 * capabilities are narrowed to the user's current role, so a demotion applies at once.
 */
async function userPrincipal(
  deps: Parameters<typeof identify>[0],
  token: string,
): Promise<Principal | undefined> {
  if (token.length > MAX_TOKEN_LENGTH) return undefined;
  const claims = await deps.accessTokens.verify(token);
  if (!claims) return undefined;
  const [user, session, organization] = await Promise.all([
    deps.across.users.findOne({ _id: claims.sub, organizationId: claims.org }).lean<UserDoc>(),
    deps.across.sessions.findOne({ _id: claims.sid, organizationId: claims.org, userId: claims.sub }).lean(),
    deps.across.organizations.findById(claims.org).lean<OrganizationDoc>(),
  ]);
  if (user?.status !== 'ACTIVE' || !session || session.revokedAt || !organization) return undefined;
  const role = user.role as Role;
  return {
    kind: 'user',
    organization,
    role,
    capabilities: claims.caps.filter((capability) => roleHas(role, capability)),
    user,
    sessionId: session._id,
    limitKey: `user:${user._id}`,
  };
}

const REFUSALS: Record<Refusal, () => AppError> = {
  both: () => AppError.invalid('Send either x-api-key or Authorization: Bearer, not both'),
  bearer: () => AppError.unauthorized('Invalid, expired or revoked access token'),
  scheme: () =>
    AppError.unauthorized(
      'Unsupported Authorization scheme: send x-api-key, or Authorization: Bearer with a dashboard access token',
    ),
};

/** 401 without valid credentials; 403 for a deactivated organization (spec 5.3, 5.6). */
export function requirePrincipal(req: Request, _res: Response, next: NextFunction): void {
  if (req.authRefusal) {
    next(REFUSALS[req.authRefusal]());
    return;
  }
  if (!req.principal) {
    const sent = typeof req.headers['x-api-key'] === 'string' && req.headers['x-api-key'] !== '';
    next(AppError.unauthorized(sent ? 'Invalid, revoked or replaced API key' : 'Missing x-api-key header'));
    return;
  }
  if (!req.principal.organization.isActive) {
    next(AppError.forbidden('Organization is deactivated'));
    return;
  }
  next();
}

/** The authenticated caller of a partner request. */
export function principalOf(req: Request): Principal {
  if (!req.principal) throw new Error('requirePrincipal must run before this handler');
  return req.principal;
}
