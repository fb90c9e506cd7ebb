import { PARTNER_ROUTES } from '@parametric/contracts';
import {
  AppError,
  assertCapability,
  CAPABILITIES,
  type Capability,
  type RouteContract,
} from '@parametric/http';
import type { NextFunction, Request, Response } from 'express';
import { principalOf } from './principal';

const DOT_SEGMENT = /(^|\/)(\.|%2e){1,2}(\/|$)/i;

interface Guard {
  method: string;
  pattern: RegExp;
  capability: Capability;
  /** Literal segments win over parameters (`/policies/purchase` before `/policies/{id}`). */
  params: number;
}

/** Every partner route (served here or forwarded) as a method + path pattern and its capability. */
export function capabilityGuards(routes: readonly RouteContract[]): Guard[] {
  return routes
    .filter((route) => route.auth === 'partner')
    .map((route) => {
      if (!route.capability || !(CAPABILITIES as readonly string[]).includes(route.capability)) {
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
      };
    })
    .sort((a, b) => a.params - b.params);
}

/**
 * The capability check for every partner route, in one place before the gateway's own handlers
 * and forwarding: `403 FORBIDDEN` naming the capability the caller's role lacks (`assertCapability`,
 * which `mountRoutes` runs again in the gateway's own routes and in every service). A path that
 * is no partner route is `404` for a caller with a narrower role than `ORG_ADMIN`, so nothing
 * undeclared is reachable with a dashboard token.
 */
export function requireCapability(guards: Guard[] = capabilityGuards(Object.values(PARTNER_ROUTES).flat())) {
  return (req: Request, _res: Response, next: NextFunction): void => {
    // The path checked must be the path served: URL parsers on the way (fetch, proxies) resolve
    // `.`/`..` segments (also percent-encoded ones), which would let a checked path land on
    // another route.
    if (DOT_SEGMENT.test(req.path)) {
      next(AppError.invalid('Path segments "." and ".." are not allowed'));
      return;
    }
    const principal = principalOf(req);
    const method = req.method === 'HEAD' ? 'GET' : req.method;
    const guard = guards.find((g) => g.method === method && g.pattern.test(req.path));
    if (!guard) {
      const narrower = principal.capabilities.length < CAPABILITIES.length;
      next(narrower ? new AppError('NOT_FOUND', `No route for ${req.method} ${req.path}`) : undefined);
      return;
    }
    assertCapability(principal, guard.capability);
    next();
  };
}
