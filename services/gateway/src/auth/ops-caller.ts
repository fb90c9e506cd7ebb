import {
  loginBody,
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
import type { Clock } from '../clock';
import { looksLikeClientToken } from '../credentials/access-tokens';
import { sameSecret } from '../credentials/secrets';
import type { SsoIdentity } from './oidc';
import { passwordCache } from './password-cache';
import { operatorSessions, type SessionCookies, type SessionTokens } from './queue-session';

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

/**
 * Why an ops request was refused for its credentials (the `reason` of `auth_failures_total`):
 * `ops_session` a dashboard session cookie that no longer works, `ops_password` an operator's
 * email and password in HTTP Basic that do not.
 */
export type OpsRefusal = 'ops_token' | 'ops_break_glass_off' | 'ops_session' | 'ops_password';

/** An operator as the ops caller needs them. */
type OperatorRecord = { _id: string; email: string; role: string };

export interface OpsAuthDeps {
  /** The shared ops token (break-glass). */
  opsToken: string;
  /** Whether the shared token is accepted: always outside production, else only with OPS_BREAK_GLASS. */
  breakGlassAllowed: boolean;
  /**
   * The operators (`createOperators(…)`, operators/domain.ts). Declared here, not imported, so
   * that authentication does not depend on the operators' rules above it.
   */
  operators: {
    /** An operator's access token to the operator, while they and their session are active. */
    resolve(token: string): Promise<OperatorRecord | undefined>;
    /** A session's next tokens for its refresh token (the dashboard's cookies); throws when refused. */
    refresh(refreshToken: string): Promise<SessionTokens>;
    /** An email and password checked as a sign-in is, without a session; throws when refused. */
    verify(input: { email: string; password: string }, clientIp: string): Promise<OperatorRecord>;
    /** The operator while `ACTIVE`. */
    active(id: string): Promise<OperatorRecord | undefined>;
  };
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
   * A path (under the mount) a browser opens, the queue dashboard, where operators also sign in
   * with a session in cookies (ops/queue-sign-in.ts sets them) or HTTP Basic with their email and
   * password, and the shared token is also taken as the password of HTTP Basic credentials, since
   * a browser cannot send a bearer token. A browser there without a session is sent to `signIn`.
   */
  browser?: { path: string; signIn: string; cookies: SessionCookies };
  clientIp: (req: Request) => string;
  clock: Clock;
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
  const sessions = deps.browser
    ? operatorSessions({ operators: deps.operators, cookies: deps.browser.cookies, clock: deps.clock })
    : undefined;
  const passwords = passwordCache({ operators: deps.operators, clock: deps.clock });
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    if (SIGN_IN.has(`${req.method} ${req.path}`)) return next();
    const header = req.headers.authorization ?? '';
    const browser =
      deps.browser !== undefined &&
      (req.path === deps.browser.path || req.path.startsWith(`${deps.browser.path}/`));
    // A browser navigating names HTML in Accept; fetch and curl send `*/*`.
    const wants = req.headers.accept ?? '';
    const html = /\btext\/html\b/i.test(wants);
    // bull-board's own fetches, and whatever asks for JSON, are answered in the envelope, without
    // a challenge, which would pop a password dialog over the dashboard.
    const api =
      browser &&
      (req.path.startsWith(`${deps.browser?.path}/api/`) || (!html && /\bapplication\/json\b/i.test(wants)));
    const refuse = (reason: OpsRefusal, message: string) => {
      deps.refused(reason);
      if (browser && !api) res.setHeader('WWW-Authenticate', 'Basic realm="ops", charset="UTF-8"');
      next(AppError.unauthorized(message));
    };
    if (browser && header === '' && deps.browser && sessions) {
      return browserSession(req, res, next, {
        browser: deps.browser,
        sessions,
        api,
        html,
        refuse,
        refused: deps.refused,
      });
    }
    const bearer = /^Bearer +(\S+) *$/i.exec(header)?.[1];
    const basic = browser ? basicCredentials(header) : undefined;
    const given = bearer ?? basic?.password ?? '';
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
    if (basic !== undefined) {
      // The operators' own rules for an email (trimmed, lower-cased); a user name that is not
      // one (`ops`, with a wrong token) cannot be an operator, and costs no scrypt.
      const input = loginBody.safeParse({ email: basic.user, password: basic.password });
      if (!input.success) {
        return refuse('ops_token', 'Invalid credentials: the ops token, or an operator’s email and password');
      }
      let operator: OperatorRecord | undefined;
      try {
        operator = await passwords.operator(input.data.email, input.data.password, deps.clientIp(req));
      } catch (err) {
        if (err instanceof AppError && err.code === 'UNAUTHORIZED') {
          return refuse('ops_password', 'Invalid email or password');
        }
        if (err instanceof AppError && err.code === 'RATE_LIMIT_EXCEEDED') {
          res.setHeader('Retry-After', String(retryAfterOf(err)));
        }
        throw err;
      }
      if (!operator) return refuse('ops_password', 'Invalid email or password');
      return accept(req, next, operatorCaller(operator));
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
    accept(req, next, operatorCaller(operator));
  };
}

/** An operator with a password (not single sign-on), with their current role's capabilities. */
function operatorCaller(operator: OperatorRecord): OpsCaller {
  const role = operator.role as OpsRole;
  return {
    kind: 'operator',
    id: operator._id,
    email: operator.email,
    role,
    capabilities: opsCapabilitiesOf(role),
    sso: false,
  };
}

/**
 * A browser's request to the dashboard without an Authorization header: the operator of its
 * session cookies, refreshed when the access token has lapsed. Without a working session, a
 * page a browser navigates to is sent to the sign-in page (`303`), and anything else is `401`;
 * cookies that no longer work are cleared either way.
 */
async function browserSession(
  req: Request,
  res: Response,
  next: NextFunction,
  deps: {
    browser: { signIn: string; cookies: SessionCookies };
    sessions: ReturnType<typeof operatorSessions<OperatorRecord>>;
    api: boolean;
    html: boolean;
    refuse: (reason: OpsRefusal, message: string) => void;
    refused: (reason: OpsRefusal) => void;
  },
): Promise<void> {
  const { access, refresh } = deps.browser.cookies.read(req);
  const presented = access !== undefined || refresh !== undefined;
  if (presented) {
    const operator = await deps.sessions.resolve(req, res);
    if (operator) return accept(req, next, operatorCaller(operator));
    deps.browser.cookies.clear(req, res);
  }
  const navigation = (req.method === 'GET' || req.method === 'HEAD') && !deps.api && deps.html;
  if (navigation) {
    // Opening the dashboard without a session is how signing in starts, not a refusal to count.
    if (presented) deps.refused('ops_session');
    res.setHeader('Cache-Control', 'no-store');
    res.redirect(303, deps.browser.signIn);
    return;
  }
  if (presented) return deps.refuse('ops_session', 'Your dashboard session has ended; sign in again');
  deps.refuse('ops_token', 'Sign in, or send an ops bearer token or HTTP Basic credentials');
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

/** The user and password of `Basic base64(user:password)` credentials, if there are any. */
function basicCredentials(header: string): { user: string; password: string } | undefined {
  if (!/^Basic /i.test(header)) return undefined;
  const decoded = Buffer.from(header.slice(6).trim(), 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon < 0 ? undefined : { user: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

/** The seconds a throttled sign-in is told to wait (`details.retryAfter` of the throttle's error). */
export function retryAfterOf(err: AppError): number {
  return Number((err.details as { retryAfter?: number } | undefined)?.retryAfter ?? 60);
}
