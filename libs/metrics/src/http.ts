import { performance } from 'node:perf_hooks';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { Histogram, type Registry } from 'prom-client';

/** The label of a request no route matched (a 404, or a refusal before routing). */
export const UNMATCHED = 'unmatched';

/**
 * Seconds. The partner API's targets are in milliseconds (a cached read answers in ~1 ms), its
 * deadline is 15 s (the ops API's may be longer): the buckets span both.
 */
export const HTTP_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15, 30];

export interface HttpMetricsOptions {
  /**
   * The route template of a request no express route answered (the gateway forwards most
   * partner requests by prefix): undefined when it matches none. Must return a template, never
   * the request's own path (see `routeTemplates`).
   */
  routeOf?: (req: Request) => string | undefined;
}

declare module 'node:http' {
  interface IncomingMessage {
    /** When the metrics middleware saw the request (`performance.now()`). */
    metricsStart?: number;
    /**
     * The `baseUrl` at which the matched route was mounted, recorded when its handler starts
     * (`@parametric/http`'s `mountRoutes` declares and sets it): by the time an error is rendered
     * the routers have restored `baseUrl`.
     */
    routeBaseUrl?: string;
  }
}

type Observe = (value: number) => void;

/**
 * `http_request_duration_seconds{method,route,status}`, observed when the response finishes.
 * `route` is the TEMPLATE (`/api/policies/:id`), never the path: ids in labels would make one
 * series per policy. Nothing per organization is a label either: series are
 * routes x methods x statuses, whatever the number of partners.
 */
export function httpMetrics(registry: Registry, options: HttpMetricsOptions): RequestHandler {
  const histogram = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'Time from receiving a request to finishing its response, by method, route template and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: HTTP_BUCKETS,
    registers: [registry],
  });
  // route -> method -> status -> observe: no label object or hash is built per request.
  const children = new Map<string, Map<string, Map<number, Observe>>>();
  const observerOf = (route: string, method: string, status: number): Observe => {
    let byMethod = children.get(route);
    if (!byMethod) {
      byMethod = new Map();
      children.set(route, byMethod);
    }
    let byStatus = byMethod.get(method);
    if (!byStatus) {
      byStatus = new Map();
      byMethod.set(method, byStatus);
    }
    let observe = byStatus.get(status);
    if (!observe) {
      observe = histogram.labels({ method, route, status: String(status) }).observe;
      byStatus.set(status, observe);
    }
    return observe;
  };
  const routeOf = options.routeOf;

  // One listener shared by every response (`this` is the response): no closure per request.
  function finished(this: Response): void {
    const req = this.req;
    const start = req.metricsStart;
    if (start === undefined) return;
    const route = routeLabel(req) ?? routeOf?.(req) ?? UNMATCHED;
    observerOf(route, req.method, this.statusCode)((performance.now() - start) / 1000);
  }

  return (req: Request, res: Response, next: NextFunction): void => {
    req.metricsStart = performance.now();
    // `on`, not `once`: a response finishes once, and `once` would wrap the listener per request.
    res.on('finish', finished);
    next();
  };
}

/** Labels by route object and mount point, so finishing a request builds no string. */
const labels = new WeakMap<object, { base: string; label: string }>();

/** `baseUrl` + the matched express route's path, lower-cased (express matches any case). */
function routeLabel(req: Request): string | undefined {
  const route = req.route as { path?: unknown } | undefined;
  if (route === undefined) return undefined;
  const base = req.routeBaseUrl ?? req.baseUrl;
  const known = labels.get(route);
  if (known !== undefined && known.base === base) return known.label;
  const label = `${base.toLowerCase()}${String(route.path)}`;
  labels.set(route, { base, label });
  return label;
}

/**
 * A `routeOf` for requests answered by middleware rather than an express route (the gateway's
 * forwarding): matches the request against declared route contracts (`{id}` segments) under
 * `base`, and names it by the contract's template in express form (`/api/policies/:id`), the
 * same label the owning service uses. Undefined when no contract matches.
 */
export function routeTemplates(
  base: string,
  routes: ReadonlyArray<{ method: string; path: string }>,
): (req: Request) => string | undefined {
  const prefix = base.toLowerCase();
  // By method and first segment, literal segments before parameters (`/policies/quote` before `/policies/{id}`).
  const table = new Map<string, Array<{ pattern: RegExp; label: string; params: number }>>();
  for (const route of routes) {
    const segments = route.path.split('/').filter(Boolean);
    const key = `${route.method.toUpperCase()} ${(segments[0] ?? '').toLowerCase()}`;
    const pattern = new RegExp(
      `^${segments.map((s) => `/${/^\{.+\}$/.test(s) ? '[^/]+' : s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`).join('')}/?$`,
      'i',
    );
    const label = `${prefix}${segments.map((s) => `/${s.replace(/^\{(.+)\}$/, ':$1')}`).join('')}`;
    const params = segments.filter((s) => s.startsWith('{')).length;
    const list = table.get(key) ?? [];
    list.push({ pattern, label, params });
    list.sort((a, b) => a.params - b.params);
    table.set(key, list);
  }
  return (req) => {
    const url = req.originalUrl;
    const end = url.indexOf('?');
    const path = end === -1 ? url : url.slice(0, end);
    if (path.length <= prefix.length || path.slice(0, prefix.length).toLowerCase() !== prefix)
      return undefined;
    const rest = path.slice(prefix.length);
    if (rest[0] !== '/') return undefined;
    const slash = rest.indexOf('/', 1);
    const first = (slash === -1 ? rest.slice(1) : rest.slice(1, slash)).toLowerCase();
    const candidates = table.get(`${req.method} ${first}`);
    if (!candidates) return undefined;
    for (const candidate of candidates) if (candidate.pattern.test(rest)) return candidate.label;
    return undefined;
  };
}
