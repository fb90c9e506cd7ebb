import type { NextFunction, Request, Response } from 'express';
import { expressPath, type RouteContract } from './contract';
import { AppError } from './errors';

/** `/policies/{id}` as a matcher of concrete paths. */
function matcher(path: string): RegExp {
  const pattern = expressPath(path)
    .split('/')
    .map((part) => (part.startsWith(':') ? '[^/]+' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('/');
  return new RegExp(`^${pattern}/?$`);
}

/**
 * `OPTIONS`: `204` with `Allow` listing the declared methods of the path, or `404 NOT_FOUND`
 * in the envelope when no route has that path (never express's `200 text/plain`). The API is
 * server-to-server, so no CORS headers are sent.
 */
export function answerOptions(routes: readonly RouteContract[]) {
  const paths = new Map<string, { match: RegExp; methods: Set<string> }>();
  for (const route of routes) {
    const entry = paths.get(route.path) ?? { match: matcher(route.path), methods: new Set<string>() };
    entry.methods.add(route.method.toUpperCase());
    if (route.method === 'get') entry.methods.add('HEAD');
    paths.set(route.path, entry);
  }
  return (req: Request, res: Response, next: NextFunction): void => {
    if (req.method !== 'OPTIONS') {
      next();
      return;
    }
    const methods = new Set<string>();
    for (const { match, methods: declared } of paths.values()) {
      if (match.test(req.path)) for (const m of declared) methods.add(m);
    }
    if (methods.size === 0) {
      next(new AppError('NOT_FOUND', `No route for ${req.method} ${req.path}`));
      return;
    }
    res.setHeader('Allow', [...methods, 'OPTIONS'].sort().join(', '));
    res.status(204).end();
  };
}
