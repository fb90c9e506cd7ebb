import { createHmac, randomBytes } from 'node:crypto';
import { AppError } from '@parametric/http';
import type { Request, Response } from 'express';
import type { Clock } from '../clock';

/**
 * An operator's session in a browser on the queue dashboard (issue 25; docs/ops.md, "Queue
 * dashboard"; docs/decisions.md, "The queue dashboard's sign-in"): the access token and the
 * rotating refresh token that an operator's sign-in returns, each in an HttpOnly, SameSite=Strict
 * cookie scoped to the dashboard's path, so no script and no other site ever sends or reads them.
 */

/** What an operator's sign-in and refresh answer (the contracts' `tokensSchema`). */
export interface SessionTokens {
  accessToken: string;
  expiresIn: number;
  refreshToken: string;
  refreshExpiresIn: number;
}

export const ACCESS_COOKIE = 'ops_queues_access';
export const REFRESH_COOKIE = 'ops_queues_refresh';

export interface SessionCookies {
  /** The path the cookies are scoped to (the dashboard's, `/ops/queues`). */
  path: string;
  read(req: Request): { access?: string; refresh?: string };
  set(req: Request, res: Response, tokens: SessionTokens): void;
  clear(req: Request, res: Response): void;
}

/**
 * The dashboard's two cookies. `Secure` in production whatever the request says (the ops port is
 * reached through TLS there, or through `kubectl port-forward` to localhost, which browsers treat
 * as secure), and elsewhere when the request came over https, directly or as a proxy in front
 * says (`X-Forwarded-Proto`: believing it can only add `Secure`, never take it away).
 */
export function sessionCookies(options: { path: string; production: boolean }): SessionCookies {
  const secure = (req: Request) => cookieIsSecure(req, options.production);
  const attributes = (req: Request, maxAgeSeconds: number) =>
    `Path=${options.path}; Max-Age=${maxAgeSeconds}; HttpOnly; SameSite=Strict${secure(req) ? '; Secure' : ''}`;
  // Replaces what this response already set for the two cookies (a refresh, then a clear).
  const write = (res: Response, cookies: string[]) => {
    const already = res.getHeader('Set-Cookie');
    const earlier = (
      Array.isArray(already) ? already : already === undefined ? [] : [String(already)]
    ).filter((cookie) => !cookie.startsWith(`${ACCESS_COOKIE}=`) && !cookie.startsWith(`${REFRESH_COOKIE}=`));
    res.setHeader('Set-Cookie', [...earlier, ...cookies]);
  };
  return {
    path: options.path,
    read(req) {
      const jar = parseCookies(req.headers.cookie ?? '');
      return {
        ...(jar[ACCESS_COOKIE] ? { access: jar[ACCESS_COOKIE] } : {}),
        ...(jar[REFRESH_COOKIE] ? { refresh: jar[REFRESH_COOKIE] } : {}),
      };
    },
    set(req, res, tokens) {
      // The access cookie lapses with its token, so a browser then sends only the refresh cookie.
      write(res, [
        `${ACCESS_COOKIE}=${tokens.accessToken}; ${attributes(req, tokens.expiresIn)}`,
        `${REFRESH_COOKIE}=${tokens.refreshToken}; ${attributes(req, tokens.refreshExpiresIn)}`,
      ]);
    },
    clear(req, res) {
      write(res, [`${ACCESS_COOKIE}=; ${attributes(req, 0)}`, `${REFRESH_COOKIE}=; ${attributes(req, 0)}`]);
    },
  };
}

/**
 * Whether a cookie set in answer to `req` is `Secure`: always in production, and elsewhere when
 * the request came over https, directly or as a proxy in front says (`X-Forwarded-Proto`:
 * believing it can only add `Secure`, never take it away).
 */
export function cookieIsSecure(req: Request, production: boolean): boolean {
  return (
    production ||
    req.secure ||
    String(req.headers['x-forwarded-proto'] ?? '')
      .split(',')[0]
      ?.trim()
      .toLowerCase() === 'https'
  );
}

/** `name=value` pairs of a Cookie header; tokens are cookie-safe, so values are taken as they are. */
export function parseCookies(header: string): Record<string, string> {
  const jar: Record<string, string> = {};
  for (const pair of header.split(';')) {
    const eq = pair.indexOf('=');
    if (eq < 0) continue;
    const name = pair.slice(0, eq).trim();
    // The first of two cookies of one name wins, as browsers order the more specific path first.
    if (name !== '' && !(name in jar)) jar[name] = pair.slice(eq + 1).trim();
  }
  return jar;
}

/**
 * How long the answer of one refresh is kept for other requests that present the same refresh
 * token: the dashboard's page fires several fetches at once, and each would otherwise spend the
 * token, the second one as a reuse that revokes the whole session (sessions/core.ts).
 */
const REFRESH_GRACE_MS = 10_000;
const MAX_REFRESHES_KEPT = 1_000;

export interface OperatorSessionDeps<O> {
  operators: {
    resolve(token: string): Promise<O | undefined>;
    refresh(refreshToken: string): Promise<SessionTokens>;
  };
  cookies: SessionCookies;
  clock: Clock;
}

/**
 * The operator of a request's session cookies: the access token while it holds; else the refresh
 * token, spent once (concurrent requests of one browser share that one refresh) for new cookies.
 * `undefined` when neither works: the operator deactivated, the session revoked or expired.
 */
export function operatorSessions<O>(deps: OperatorSessionDeps<O>) {
  const key = randomBytes(32);
  const refreshes = new Map<string, { answer: Promise<SessionTokens | undefined>; until: number }>();
  const refreshOnce = (refreshToken: string): Promise<SessionTokens | undefined> => {
    const now = deps.clock().getTime();
    for (const [id, kept] of refreshes) if (kept.until <= now) refreshes.delete(id);
    // Kept under a keyed hash: the map never holds a live refresh token as a key.
    const id = createHmac('sha256', key).update(refreshToken).digest('base64url');
    const kept = refreshes.get(id);
    if (kept) return kept.answer;
    const answer = deps.operators.refresh(refreshToken).catch((err: unknown) => {
      if (err instanceof AppError && err.code === 'UNAUTHORIZED') return undefined;
      refreshes.delete(id);
      throw err;
    });
    if (refreshes.size >= MAX_REFRESHES_KEPT) refreshes.delete(refreshes.keys().next().value as string);
    refreshes.set(id, { answer, until: now + REFRESH_GRACE_MS });
    return answer;
  };
  return {
    async resolve(req: Request, res: Response): Promise<O | undefined> {
      const { access, refresh } = deps.cookies.read(req);
      if (access !== undefined) {
        const operator = await deps.operators.resolve(access);
        if (operator) return operator;
      }
      if (refresh === undefined) return undefined;
      const tokens = await refreshOnce(refresh);
      if (!tokens) return undefined;
      deps.cookies.set(req, res, tokens);
      return deps.operators.resolve(tokens.accessToken);
    },
  };
}
