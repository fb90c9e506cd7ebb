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

/** parseurl's cache on a request (express reads `req.path` and `req.query` through it). */
type ParsedRequest = Request & { _parsedUrl?: unknown };

/**
 * One middleware, not a tree of routers: express's router leaves every router it exits on the
 * next turn of the event loop (setImmediate), which cost the hot path a fifth of its CPU when
 * these stages were routers. The handlers see `req.url` relative to `/api`, as they would
 * mounted there, and the URL is restored before the request moves on.
 */
export function beforeBody(stages: BeforeBodyStages): RequestHandler {
  const registration = inOrder([stages.registration]);
  const anonymous = inOrder([stages.anonymous]);
  const caller = inOrder(stages.caller);
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
        ? anonymous
        : REGISTRATION.test(path)
          ? registration
          : stages.isAnonymousPath(path)
            ? anonymous
            : caller;
    const baseUrl = req.baseUrl;
    // The parse of the full URL, put back with it: parseurl keeps one parse per request and
    // parses again whenever `req.url` is not the one it parsed, which the next path read after
    // the stages would otherwise do.
    const parsed = (req as ParsedRequest)._parsedUrl;
    req.url = inner.startsWith('/') ? inner : `/${inner}`;
    req.baseUrl = `${baseUrl}${url.slice(0, 4)}`;
    chain(req, res, (err?: unknown) => {
      req.url = url;
      req.baseUrl = baseUrl;
      (req as ParsedRequest)._parsedUrl = parsed;
      next(err);
    });
  };
}

/**
 * The handlers one after the other, as express would run them, with one continuation per
 * request rather than one per handler: an error (passed on, thrown, or an async handler's
 * rejection) goes to `done` and skips the rest.
 *
 * The continuation is assigned to a property, not bound to a name: the services run under tsx,
 * whose transform names every function bound to a `const` with an `Object.defineProperty` call
 * each time it is made (its `__name`), which was a visible share of this path's CPU.
 */
function inOrder(
  handlers: readonly RequestHandler[],
): (req: Request, res: Response, done: NextFunction) => void {
  return (req, res, done) => {
    const run: { i: number; step: NextFunction } = { i: 0, step: done };
    run.step = (err?: unknown): void => {
      if (err) {
        done(err);
        return;
      }
      const handler = handlers[run.i++];
      if (!handler) {
        done();
        return;
      }
      try {
        const result = handler(req, res, run.step) as unknown;
        if (result instanceof Promise) result.catch(done);
      } catch (err) {
        done(err);
      }
    };
    run.step();
  };
}
