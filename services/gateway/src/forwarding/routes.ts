import { OPS_ROUTES } from '@parametric/contracts';
import { AppError, type OpsCapability, signContext } from '@parametric/http';
import type { Logger } from '@parametric/logger';
import { outbound } from '@parametric/tracing';
import { type NextFunction, type Request, type Response, Router } from 'express';
import { principalOf } from '../auth/principal';
import type { UpstreamReply, Upstreams } from './upstreams';

export type ServiceName = 'policy' | 'payments' | 'determinations' | 'webhooks';

/** Partner routes owned by other services (docs/architecture.md, "The services"), by path under `/api`. */
export const FORWARDED_ROUTES: ReadonlyArray<{ path: RegExp; service: ServiceName }> = [
  { path: /^\/organizations\/me\/webhook(\/|$)/, service: 'webhooks' },
  { path: /^\/(farmers|plots|herds|policies)(\/|$)/, service: 'policy' },
  { path: /^\/(payments|payouts)(\/|$)/, service: 'payments' },
  { path: /^\/determinations(\/|$)/, service: 'determinations' },
  // Sandbox organizations' test determinations (docs/api.md, "Sandbox").
  { path: /^\/sandbox\/determinations\/?$/, service: 'determinations' },
];

export interface ForwardingDeps {
  serviceUrls: Partial<Record<ServiceName, string>>;
  signingSecret: string;
  timeoutMs: number;
  logger: Logger;
  upstreams: Upstreams;
  /**
   * Called once a request that may change the organization's webhook URL has been forwarded
   * (whatever the answer: a timed-out change may still have been made), so gateways stop
   * showing the URL they cached (webhook-url.ts).
   */
  webhookUrlChanged?: (organizationId: string) => Promise<void>;
}

/** The one partner request that sets the webhook URL (the webhooks service owns it). */
const SETS_WEBHOOK_URL = /^\/organizations\/me\/webhook\/?$/;

const PASSED_BACK_HEADERS = ['retry-after', 'location', 'idempotent-replayed', 'preference-applied'];

/**
 * The caller's own request headers a service reads (declared in its route contracts, which
 * validate them): `Idempotency-Key` of a partner's purchase, `Prefer` of an ops batch. These, and
 * only these, are forwarded as sent; a route that does not declare one ignores it.
 */
const FORWARDED_REQUEST_HEADERS = ['idempotency-key', 'prefer'];

/**
 * Forwards an authenticated, rate-limited partner request to the owning service with the
 * organization context signed (services trust nothing else). A service that is not
 * configured, refuses the connection, does not answer in time or answers something other
 * than JSON is `503 SERVICE_UNAVAILABLE` (a 502 means the chain or the payment provider).
 */
export function forwardingRoutes(deps: ForwardingDeps) {
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    const match = FORWARDED_ROUTES.find((r) => r.path.test(req.path));
    if (!match) return next();
    const requestId = String(req.id);
    const principal = principalOf(req);
    const { organization } = principal;
    const context = {
      organizationId: organization._id,
      role: principal.role,
      ...(principal.kind === 'user' ? { userId: principal.user._id } : {}),
      requestId,
      // The receiving service checks it against its own system clock (libs/http internal-context.ts).
      issuedAt: Date.now(),
      organization: {
        countryCode: organization.countryCode,
        kybStatus: organization.kybStatus,
        serviceTier: organization.serviceTier,
        isActive: organization.isActive,
        // Signed for a sandbox organization only: a live one's context stays as it was, so a
        // service not yet upgraded (its context schema is strict) still accepts every live request
        // while a deployment rolls (docs/decisions.md, "Sandbox organizations").
        ...(organization.environment === 'sandbox' ? { environment: 'sandbox' as const } : {}),
      },
    };
    const setsWebhookUrl =
      match.service === 'webhooks' && req.method === 'PUT' && SETS_WEBHOOK_URL.test(req.path);
    try {
      await forward(req, res, deps.upstreams, {
        service: match.service,
        base: deps.serviceUrls[match.service],
        path: `/api${req.url}`,
        headers: signContext(context, deps.signingSecret),
        timeoutMs: deps.timeoutMs,
      });
    } finally {
      if (setsWebhookUrl) await deps.webhookUrlChanged?.(organization._id);
    }
  };
}

/** A route's path template (`/organizations/{id}/capacity`) as the expression that matches it. */
const templatePattern = (path: string) =>
  new RegExp(`^${path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}$`);

/**
 * Ops routes owned by other services (docs/ops.md), by path under `/ops`: every route their
 * contracts declare, so a route added there is forwarded without a line here.
 */
export const FORWARDED_OPS_ROUTES: ReadonlyArray<{ path: RegExp; service: ServiceName }> = (
  Object.entries(OPS_ROUTES) as [keyof typeof OPS_ROUTES, (typeof OPS_ROUTES)[keyof typeof OPS_ROUTES]][]
).flatMap(([service, routes]) =>
  service === 'gateway' ? [] : routes.map((route) => ({ path: templatePattern(route.path), service })),
);

/**
 * Forwards an ops request (the caller and the route's capability already checked) with a signed
 * ops context naming the caller's role and capabilities, which the service checks again.
 */
export function opsForwardingRoutes(deps: ForwardingDeps): Router {
  const router = Router();
  router.use(async (req: Request, res: Response, next: NextFunction) => {
    const match = FORWARDED_OPS_ROUTES.find((r) => r.path.test(req.path));
    if (!match) return next();
    const caller = req.caller;
    if (!caller) throw new Error('authenticateOps must run before ops forwarding');
    await forward(req, res, deps.upstreams, {
      service: match.service,
      base: deps.serviceUrls[match.service],
      path: `/ops${req.url}`,
      headers: signedOpsContext(caller, String(req.id), deps.signingSecret),
      timeoutMs: deps.timeoutMs,
    });
  });
  return router;
}

/** The service that serves an ops path (under `/ops`), if another does. */
export function opsServiceOf(path: string): ServiceName | undefined {
  return FORWARDED_OPS_ROUTES.find((r) => r.path.test(path))?.service;
}

/**
 * Asks a service's ops route on the gateway's own account (an approved action carried out, the
 * capacity a four-eyes check compares with): the caller's role and capabilities signed, as a
 * forwarded request's are. A service that is not configured or cannot be reached throws
 * `503 SERVICE_UNAVAILABLE`; any answer is returned as it came.
 */
export async function askOpsService(
  deps: ForwardingDeps,
  request: {
    service: ServiceName;
    method: string;
    /** Under `/ops`, query included. */
    path: string;
    body?: unknown;
    caller: { role: string; capabilities: readonly OpsCapability[] };
    requestId: string;
  },
): Promise<UpstreamReply> {
  const base = deps.serviceUrls[request.service];
  const unavailable = () =>
    new AppError('SERVICE_UNAVAILABLE', `The ${request.service} service is not available, try again shortly`);
  if (!base) throw unavailable();
  try {
    return await requestService(deps.upstreams, {
      service: request.service,
      base,
      path: `/ops${request.path}`,
      method: request.method,
      requestId: request.requestId,
      headers: signedOpsContext(request.caller, request.requestId, deps.signingSecret),
      body: request.body,
      timeoutMs: deps.timeoutMs,
    });
  } catch (err) {
    deps.logger.warn({ err, service: request.service }, 'ops request to a service failed');
    throw unavailable();
  }
}

/** The signed ops context of a caller: its role and capabilities, which the service checks again. */
function signedOpsContext(
  caller: { role: string; capabilities: readonly string[] },
  requestId: string,
  secret: string,
): Record<string, string> {
  const context = {
    role: caller.role,
    capabilities: [...caller.capabilities] as OpsCapability[],
    requestId,
    // The receiving service checks it against its own system clock (libs/http internal-context.ts).
    issuedAt: Date.now(),
  };
  return signContext(context, secret);
}

/**
 * One request to a service, for a forwarded request and for the gateway's own ops calls alike:
 * `accept: application/json`, the request id, the signed context (`headers`, with any partner
 * header the caller passes on), a JSON content type when there is a body, and our `traceparent`
 * (the partner's trace id at most, with our span as parent). No redirect is followed (undici's
 * request never does): a 3xx comes back with its Location.
 */
function requestService(
  upstreams: Upstreams,
  target: {
    service: ServiceName;
    base: string;
    path: string;
    method: string;
    requestId: string;
    headers: Record<string, string | string[]>;
    body?: unknown;
    timeoutMs: number;
  },
): Promise<UpstreamReply> {
  const headers: Record<string, string | string[]> = {
    accept: 'application/json',
    'x-request-id': target.requestId,
    ...target.headers,
  };
  if (target.body !== undefined) headers['content-type'] = 'application/json';
  return outbound(`${target.method} ${target.service}`, (traceparent) =>
    upstreams.request(target.base, target.path, {
      method: target.method,
      headers: traceparent ? { ...headers, traceparent } : headers,
      body: target.body === undefined ? undefined : JSON.stringify(target.body),
      timeoutMs: target.timeoutMs,
    }),
  );
}

/** Public partner routes another service serves: no key, no organization context. */
export const PUBLIC_ROUTES: ReadonlyArray<{ path: string; service: ServiceName; contentType: string }> = [
  { path: '/.well-known/jwks.json', service: 'determinations', contentType: 'application/jwk-set+json' },
];

/**
 * Forwards a public GET (the determination signing keys) as it is: no context is signed, and
 * the service's own content type and cache lifetime are passed back so partners may cache it.
 */
export function publicForwardingRoutes(deps: ForwardingDeps): Router {
  const router = Router();
  for (const route of PUBLIC_ROUTES) {
    router.get(route.path, async (req: Request, res: Response) => {
      const base = deps.serviceUrls[route.service];
      const unavailable = () => {
        res.setHeader('Retry-After', '5');
        return new AppError(
          'SERVICE_UNAVAILABLE',
          `The ${route.service} service is not available, try again shortly`,
        );
      };
      if (!base) throw unavailable();
      let upstream: UpstreamReply;
      try {
        upstream = await outbound(`GET ${route.service}`, (traceparent) =>
          deps.upstreams.request(base, `/api${route.path}`, {
            method: 'GET',
            headers: {
              accept: route.contentType,
              'x-request-id': String(req.id),
              ...(traceparent ? { traceparent } : {}),
            },
            timeoutMs: deps.timeoutMs,
          }),
        );
      } catch (err) {
        req.log.warn({ err, service: route.service }, 'forwarding failed');
        throw unavailable();
      }
      if (upstream.status !== 200 || !(upstream.header('content-type') ?? '').startsWith(route.contentType)) {
        req.log.error(
          { service: route.service, status: upstream.status },
          'public route answered unexpectedly',
        );
        throw unavailable();
      }
      const cacheControl = upstream.header('cache-control');
      if (cacheControl) res.setHeader('Cache-Control', cacheControl);
      res.status(200).type(route.contentType).send(upstream.text);
    });
  }
  return router;
}

/**
 * One forwarded request. Only what `requestService` sends and the partner headers a contract
 * declares (`FORWARDED_REQUEST_HEADERS`) travel with the body: nothing else a partner sets in
 * its own headers reaches the service.
 */
async function forward(
  req: Request,
  res: Response,
  upstreams: Upstreams,
  target: {
    service: ServiceName;
    base?: string;
    path: string;
    headers: Record<string, string>;
    timeoutMs: number;
  },
): Promise<void> {
  if (!target.base)
    throw new AppError('SERVICE_UNAVAILABLE', `The ${target.service} service is not available`);
  const headers: Record<string, string | string[]> = { ...target.headers };
  for (const name of FORWARDED_REQUEST_HEADERS) {
    // `headersDistinct` builds a list of every header the request has: only for one it sent.
    if (req.headers[name] === undefined) continue;
    // Each value as sent: a header sent twice reaches the service twice (and is refused there),
    // not joined into one value that could pass for a single key.
    const values = req.headersDistinct[name];
    if (values?.length) headers[name] = values.length === 1 ? (values[0] as string) : values;
  }
  const hasBody = req.body !== undefined && req.method !== 'GET' && req.method !== 'HEAD';

  let upstream: UpstreamReply;
  try {
    upstream = await requestService(upstreams, {
      service: target.service,
      base: target.base,
      path: target.path,
      method: req.method,
      requestId: String(req.id),
      headers,
      body: hasBody ? req.body : undefined,
      timeoutMs: target.timeoutMs,
    });
  } catch (err) {
    req.log.warn({ err, service: target.service }, 'forwarding failed');
    res.setHeader('Retry-After', '5');
    throw new AppError(
      'SERVICE_UNAVAILABLE',
      `The ${target.service} service is not available, try again shortly`,
    );
  }
  if (!(upstream.header('content-type') ?? '').includes('application/json')) {
    req.log.error({ service: target.service, status: upstream.status }, 'service answered without JSON');
    res.setHeader('Retry-After', '5');
    throw new AppError(
      'SERVICE_UNAVAILABLE',
      `The ${target.service} service gave an invalid response, try again shortly`,
    );
  }
  for (const name of PASSED_BACK_HEADERS) {
    const value = upstream.header(name);
    if (value) res.setHeader(name, value);
  }
  // The service's bytes as they came (it wrote them as UTF-8 JSON; the type says so, as before).
  res.status(upstream.status).type('application/json; charset=utf-8').send(upstream.body);
}
