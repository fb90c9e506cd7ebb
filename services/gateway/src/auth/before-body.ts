import type { NextFunction, Request, RequestHandler, Response } from 'express';

/**
 * What runs on a partner request before its body is read, by path under `/api`: the per-IP
 * limits of the routes without a caller, nothing more for the other public paths, and for
 * everything else the caller's resolution, the rate limits and the capability check.
 */
export interface BeforeBodyStages {
  registration: RequestHandler;
  signIn: RequestHandler;
  publicKeys: RequestHandler;
  /** Paths served without a key or token (docs, the sign-in routes…). */
  isAnonymousPath(path: string): boolean;
  /** Authentication, `requirePrincipal`, the capability check, in order. */
  caller: RequestHandler[];
}

const API = /^\/api(?=\/|\?|$)/i;
const REGISTRATION = /^\/auth\/register-organization\/?$/i;
const SIGN_IN = /^\/auth\/(login|refresh|logout|accept-invitation)\/?$/i;
const PUBLIC_KEYS = /^\/\.well-known(\/|$)/i;

/**
 * One middleware, not a tree of routers: express's router leaves every router it exits on the
 * next turn of the event loop (setImmediate), which cost the hot path a fifth of its CPU when
 * these stages were routers. The handlers see `req.url` relative to `/api`, as they would
 * mounted there, and the URL is restored before the request moves on.
 */
export function beforeBody(stages: BeforeBodyStages): RequestHandler {
  return (req: Request, res: Response, next: NextFunction): void => {
    if (req.method === 'OPTIONS' || !API.test(req.url)) {
      next();
      return;
    }
    const url = req.url;
    const inner = url.slice(4) || '/';
    const at = inner.indexOf('?');
    const path = at === -1 ? inner : inner.slice(0, at);
    const chain = REGISTRATION.test(path)
      ? [stages.registration]
      : SIGN_IN.test(path)
        ? [stages.signIn]
        : PUBLIC_KEYS.test(path)
          ? [stages.publicKeys]
          : stages.isAnonymousPath(path)
            ? []
            : stages.caller;
    if (chain.length === 0) {
      next();
      return;
    }
    const baseUrl = req.baseUrl;
    req.url = inner.startsWith('/') ? inner : `/${inner}`;
    req.baseUrl = `${baseUrl}${url.slice(0, 4)}`;
    const leave = (err?: unknown) => {
      req.url = url;
      req.baseUrl = baseUrl;
      next(err);
    };
    const run = (i: number): void => {
      const handler = chain[i];
      if (!handler) {
        leave();
        return;
      }
      try {
        const result = handler(req, res, (err?: unknown) => (err ? leave(err) : run(i + 1))) as unknown;
        if (result instanceof Promise) result.catch(leave);
      } catch (err) {
        leave(err);
      }
    };
    run(0);
  };
}
