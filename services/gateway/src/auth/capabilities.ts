import { PARTNER_ROUTES } from '@parametric/contracts';
import {
  AppError,
  assertCapability,
  CAPABILITIES,
  type Capability,
  type RouteContract,
} from '@parametric/http';
import type { NextFunction, Request, Response } from 'express';

const DOT_SEGMENT = /(^|\/)(\.|%2e){1,2}(\/|$)/i;

interface Guard {
  method: string;
  pattern: RegExp;
  capability: Capability;
  /** Literal segments win over parameters (`/policies/purchase` before `/policies/{id}`). */
  params: number;
  /** The path's first segment, unless it is a parameter. */
  first?: string;
}

/**
 * Every route that needs a caller (served here or forwarded) as a method + path pattern and its
 * capability, one of `known`: the partner API's, or the ops API's (OPS_CAPABILITIES).
 */
export function capabilityGuards(
  routes: readonly RouteContract[],
  known: readonly string[] = CAPABILITIES,
): Guard[] {
  return routes
    .filter((route) => route.auth !== 'none')
    .map((route) => {
      if (!route.capability || !known.includes(route.capability)) {
        throw new Error(`${route.operationId} declares no known capability`);
      }
      const source = route.path
        .split('/')
        .map((segment) =>
          /^\{.+\}$/.test(segment) ? '[^/]+' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'),
        )
        .join('/');
      return {
        method: route.method.toUpperCase(),
        pattern: new RegExp(`^${source}/?$`),
        capability: route.capability as Capability,
        params: (route.path.match(/\{/g) ?? []).length,
        first: /^\/([^/{}]+)(\/|$)/.exec(route.path)?.[1],
      };
    })
    .sort((a, b) => a.params - b.params);
}

/**
 * The guards a request may match, by method and first path segment (as the patterns match it,
 * case and all), in the guards' order: a request tests the few of its own resource, not every
 * route's pattern. A guard whose path starts with a parameter would fit any first segment, so
 * then every guard of the method is a candidate.
 */
function guardIndex(guards: readonly Guard[]): (method: string, path: string) => Guard[] | undefined {
  const firstOf = (path: string) => {
    const end = path.indexOf('/', 1);
    return end === -1 ? path.slice(1) : path.slice(1, end);
  };
  const byMethod = new Map<string, Guard[]>();
  const byFirst = new Map<string, Guard[]>();
  let anyFirst = false;
  for (const guard of guards) {
    byMethod.set(guard.method, [...(byMethod.get(guard.method) ?? []), guard]);
    if (guard.first === undefined) anyFirst = true;
    const key = `${guard.method} ${guard.first}`;
    byFirst.set(key, [...(byFirst.get(key) ?? []), guard]);
  }
  if (anyFirst) return (method) => byMethod.get(method);
  return (method, path) => byFirst.get(`${method} ${firstOf(path)}`);
}

/**
 * The capability check for every partner (or ops) route, in one place before the gateway's own
 * handlers and forwarding: `403 FORBIDDEN` naming the capability the caller's role lacks
 * (`assertCapability`, which `mountRoutes` runs again in the gateway's own routes and in every
 * service). On the partner API a path that is no partner route is `404` for a caller with a
 * narrower role than `ORG_ADMIN`, so nothing undeclared is reachable with a dashboard token. The
 * ops API passes `narrowerThan: null`: what it serves besides its contracts (the queue dashboard,
 * metrics) checks its own capability or needs none beyond a caller.
 */
export function requireCapability(
  guards: Guard[] = capabilityGuards(Object.values(PARTNER_ROUTES).flat()),
  narrowerThan: readonly string[] | null = CAPABILITIES,
) {
  const candidatesOf = guardIndex(guards);
  return (req: Request, _res: Response, next: NextFunction): void => {
    // The path checked must be the path served: URL parsers on the way (fetch, proxies) resolve
    // `.`/`..` segments (also percent-encoded ones), which would let a checked path land on
    // another route.
    if (DOT_SEGMENT.test(req.path)) {
      next(AppError.invalid('Path segments "." and ".." are not allowed'));
      return;
    }
    const path = req.path;
    const method = req.method === 'HEAD' ? 'GET' : req.method;
    const guard = candidatesOf(method, path)?.find((g) => g.pattern.test(path));
    const caller = req.caller;
    // Only a route that needs none (ops sign-in) is reached without a caller.
    if (!caller) {
      if (guard) throw new Error('authentication must run before the capability check');
      next();
      return;
    }
    if (!guard) {
      const narrower = narrowerThan !== null && caller.capabilities.length < narrowerThan.length;
      next(narrower ? new AppError('NOT_FOUND', `No route for ${req.method} ${req.path}`) : undefined);
      return;
    }
    assertCapability(caller, guard.capability);
    next();
  };
}
