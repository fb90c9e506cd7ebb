import {
  OPERATOR_ROUTES,
  OPS_ROLES,
  type OpsClientScope,
  type OpsRole,
  opsCapabilitiesOf,
  opsScopeCapabilitiesOf,
} from '@parametric/contracts';
import { AppError, OPS_CAPABILITIES, type OpsCapability } from '@parametric/http';
import type { NextFunction, Request, Response } from 'express';
import { type AuditActor, opsActor } from '../audit/trail';
import { looksLikeClientToken } from '../credentials/access-tokens';
import { sameSecret } from '../credentials/secrets';
import type { SsoIdentity } from './oidc';

/**
 * Who calls the ops API (issue 25; docs/ops.md, "Operators and roles"): an operator signed in
 * (their current role's capabilities), a machine client (its token's scopes' capabilities), or
 * the shared ops token as break-glass (everything).
 */
export type OpsCaller =
  | {
      kind: 'operator';
      /** The operator's id; `oidc:<sub>` for one signed in through single sign-on. */
      id: string;
      email?: string;
      role: OpsRole;
      capabilities: readonly OpsCapability[];
      /** Signed in through the configured OpenID Connect issuer (auth/oidc.ts), not with a password. */
      sso: boolean;
    }
  /** `role` is what refusals and forwarded ops contexts name (libs/http internal-context.ts). */
  | {
      kind: 'client';
      id: string;
      name: string;
      scopes: readonly OpsClientScope[];
      role: 'CLIENT';
      capabilities: readonly OpsCapability[];
    }
  | { kind: 'break-glass'; id: string; role: 'BREAK_GLASS'; capabilities: readonly OpsCapability[] }
  /** Prometheus reading `/ops/metrics` with the ops token: no capability, so nothing else. */
  | { kind: 'metrics-scrape'; id: string; role: 'METRICS_SCRAPE'; capabilities: readonly OpsCapability[] };

declare global {
  namespace Express {
    interface Request {
      opsCaller?: OpsCaller;
    }
  }
}

/** The ops routes that need no caller (sign-in), as `METHOD path` under `/ops`. */
const SIGN_IN = new Set(
  OPERATOR_ROUTES.filter((route) => route.auth === 'none').map(
    (route) => `${route.method.toUpperCase()} ${route.path}`,
  ),
);

/** Why an ops request was refused for its credentials (the `reason` of `auth_failures_total`). */
export type OpsRefusal = 'ops_token' | 'ops_break_glass_off';

export interface OpsAuthDeps {
  /** The shared ops token (break-glass). */
  opsToken: string;
  /** Whether the shared token is accepted: always outside production, else only with OPS_BREAK_GLASS. */
  breakGlassAllowed: boolean;
  /**
   * An operator's access token to the operator, while they and their session are active
   * (`createOperators(…).resolve`, operators/domain.ts). Declared here, not imported, so that
   * authentication does not depend on the operators' rules above it.
   */
  operators: { resolve(token: string): Promise<{ _id: string; email: string; role: string } | undefined> };
  /**
   * A machine client's access token to the client and the scopes it still holds, while it is
   * active and its secret unrotated (`createOpsClients(…).resolve`, clients/domain.ts).
   */
  clients: { resolve(token: string): Promise<{ _id: string; name: string; scopes: string[] } | undefined> };
  /** Single sign-on (auth/oidc.ts), when OPS_OIDC_ISSUER is set. */
  sso?: { claimsIssuer(token: string): boolean; verify(token: string): Promise<SsoIdentity | undefined> };
  refused: (reason: OpsRefusal) => void;
  /** Hears every request the shared token makes (the break-glass metric). */
  breakGlassUsed: () => void;
  /**
   * A path (under the mount) a browser opens, the queue dashboard: there the shared token is also
   * taken as the password of HTTP Basic credentials, since a browser cannot send a bearer token.
   */
  browserPath?: string;
  /**
   * Where Prometheus scrapes with the ops token (k8s/observability/gateway-servicemonitor.yaml):
   * a GET there is a scrape, not break-glass, accepted even with break-glass off, and grants no
   * capability, so the token opens nothing else.
   */
  scrapePath?: string;
}

/**
 * Resolves the ops caller before any body is read, and refuses a request without one (`401`),
 * except the sign-in routes. The capability check comes next (auth/capabilities.ts), as on the
 * partner API.
 */
export function authenticateOps(deps: OpsAuthDeps) {
  const expected = Buffer.from(deps.opsToken);
  const breakGlass: OpsCaller = {
    kind: 'break-glass',
    id: opsActor(deps.opsToken),
    role: 'BREAK_GLASS',
    capabilities: OPS_CAPABILITIES,
  };
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    if (SIGN_IN.has(`${req.method} ${req.path}`)) return next();
    const header = req.headers.authorization ?? '';
    const browser = deps.browserPath !== undefined && req.path.startsWith(deps.browserPath);
    const bearer = /^Bearer +(\S+) *$/i.exec(header)?.[1];
    const given = bearer ?? (browser ? basicPassword(header) : '');
    const refuse = (reason: OpsRefusal, message: string) => {
      deps.refused(reason);
      if (browser) res.setHeader('WWW-Authenticate', 'Basic realm="ops", charset="UTF-8"');
      next(AppError.unauthorized(message));
    };
    if (given !== '' && sameSecret(given, expected)) {
      if (req.method === 'GET' && deps.scrapePath !== undefined && req.path === deps.scrapePath) {
        return accept(req, next, {
          ...breakGlass,
          kind: 'metrics-scrape',
          role: 'METRICS_SCRAPE',
          capabilities: [],
        });
      }
      if (!deps.breakGlassAllowed) {
        return refuse(
          'ops_break_glass_off',
          'The shared ops token is break-glass only and break-glass is off (OPS_BREAK_GLASS); sign in as an operator',
        );
      }
      deps.breakGlassUsed();
      return accept(req, next, breakGlass);
    }
    if (bearer === undefined) return refuse('ops_token', 'A valid ops bearer token is required');
    if (deps.sso?.claimsIssuer(bearer)) {
      const identity = await deps.sso.verify(bearer);
      if (!identity) return refuse('ops_token', 'Invalid or expired single sign-on token');
      const role = identity.role as OpsRole | undefined;
      const capabilities = role === undefined ? [] : opsCapabilitiesOf(role);
      if (role === undefined || capabilities.length === 0) {
        return next(
          AppError.forbidden(
            `The single sign-on token carries no ops role (${OPS_ROLES.join(', ')}); ask for one in the identity provider`,
          ),
        );
      }
      return accept(req, next, {
        kind: 'operator',
        id: `oidc:${identity.sub}`,
        ...(identity.email === undefined ? {} : { email: identity.email }),
        role,
        capabilities,
        sso: true,
      });
    }
    if (looksLikeClientToken(bearer)) {
      const client = await deps.clients.resolve(bearer);
      if (!client) return refuse('ops_token', 'Invalid, expired or revoked ops access token');
      const scopes = client.scopes as OpsClientScope[];
      return accept(req, next, {
        kind: 'client',
        id: client._id,
        name: client.name,
        scopes,
        role: 'CLIENT',
        capabilities: opsScopeCapabilitiesOf(scopes),
      });
    }
    const operator = await deps.operators.resolve(bearer);
    if (!operator) return refuse('ops_token', 'Invalid, expired or revoked ops access token');
    const role = operator.role as OpsRole;
    accept(req, next, {
      kind: 'operator',
      id: operator._id,
      email: operator.email,
      role,
      capabilities: opsCapabilitiesOf(role),
      sso: false,
    });
  };
}

function accept(req: Request, next: NextFunction, caller: OpsCaller): void {
  req.opsCaller = caller;
  // What `mountRoutes` and the ops capability guard check.
  req.caller = caller;
  next();
}

/** The ops caller of a request that passed `authenticateOps`. */
export function opsCallerOf(req: Request): OpsCaller {
  if (!req.opsCaller) throw new Error('authenticateOps must run before this handler');
  return req.opsCaller;
}

/** How the audit trail names a caller: who, their kind, email or name, and role or scopes. */
export function auditActorOf(caller: OpsCaller): AuditActor {
  if (caller.kind === 'operator') {
    return {
      actor: caller.sso ? caller.id : `operator:${caller.id}`,
      actorKind: caller.kind,
      actorEmail: caller.email ?? null,
      actorRole: caller.role,
    };
  }
  if (caller.kind === 'client') {
    return {
      actor: `client:${caller.id}`,
      actorKind: caller.kind,
      actorEmail: null,
      actorName: caller.name,
      actorRole: caller.scopes.join(' '),
    };
  }
  return { actor: caller.id, actorKind: 'break-glass', actorEmail: null, actorRole: caller.role };
}

/** The password of `Basic base64(user:password)` credentials, or '' when there are none. */
function basicPassword(header: string): string {
  if (!header.startsWith('Basic ')) return '';
  const decoded = Buffer.from(header.slice(6), 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon < 0 ? '' : decoded.slice(colon + 1);
}
