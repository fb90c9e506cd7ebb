import type { NextFunction, Request, RequestHandler, Response } from 'express';

/**
 * What runs on a partner request before its body is read, by path under `/api`: registration's
 * own per-address limit; the per-address limit of everything else served without a caller (the
 * sign-in routes, the signing keys, the documents, `OPTIONS`), so every answer under `/api`
 * carries `X-RateLimit-*`; and for everything else the caller's resolution, the rate limits and
 * the capability check.
 */
export interface BeforeBodyStages {
  registration: RequestHandler;
  /** The per-client-address limit of requests without a caller. */
  anonymous: RequestHandler;
  /** Paths served without a key or token (docs, the sign-in routes…). */
  isAnonymousPath(path: string): boolean;
  /** Authentication, `requirePrincipal`, the capability check, in order. */
  caller: RequestHandler[];
}

const API = /^\/api(?=\/|\?|$)/i;
const REGISTRATION = /^\/auth\/register-organization\/?$/i;

/**
 * One middleware, not a tree of routers: express's router leaves every router it exits on the
 * next turn of the event loop (setImmediate), which cost the hot path a fifth of its CPU when
 * these stages were routers. The handlers see `req.url` relative to `/api`, as they would
 * mounted there, and the URL is restored before the request moves on.
 */
export function beforeBody(stages: BeforeBodyStages): RequestHandler {
  return (req: Request, res: Response, next: NextFunction): void => {
    if (!API.test(req.url)) {
      next();
      return;
    }
    const url = req.url;
    const inner = url.slice(4) || '/';
    const at = inner.indexOf('?');
    const path = at === -1 ? inner : inner.slice(0, at);
    // `OPTIONS` is answered from the route declarations alone, whoever asks: counted per address.
    const chain =
      req.method === 'OPTIONS'
        ? [stages.anonymous]
        : REGISTRATION.test(path)
          ? [stages.registration]
          : stages.isAnonymousPath(path)
            ? [stages.anonymous]
            : stages.caller;
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
