import { AppError, signContext } from '@parametric/http';
import type { Logger } from '@parametric/logger';
import { type NextFunction, type Request, type Response, Router } from 'express';
import { principalOf } from '../auth/principal';

export type ServiceName = 'policy' | 'payments' | 'determinations' | 'webhooks';

/** Partner routes owned by other services (ARCHITECTURE.md), by path under `/api`. */
export const FORWARDED_ROUTES: ReadonlyArray<{ path: RegExp; service: ServiceName }> = [
  { path: /^\/organizations\/me\/webhook(\/|$)/, service: 'webhooks' },
  { path: /^\/(farmers|plots|herds|policies)(\/|$)/, service: 'policy' },
  { path: /^\/(payments|payouts)(\/|$)/, service: 'payments' },
  { path: /^\/determinations(\/|$)/, service: 'determinations' },
];

export interface ForwardingDeps {
  serviceUrls: Partial<Record<ServiceName, string>>;
  signingSecret: string;
  timeoutMs: number;
  logger: Logger;
}

const PASSED_BACK_HEADERS = ['retry-after', 'location'];

/**
 * Forwards an authenticated, rate-limited partner request to the owning service with the
 * organization context signed (services trust nothing else). A service that is not
 * configured, refuses the connection or does not answer in time is `503
 * SERVICE_UNAVAILABLE`; one that answers something other than JSON is `502`.
 */
export function forwardingRoutes(deps: ForwardingDeps): Router {
  const router = Router();
  router.use(async (req: Request, res: Response, next: NextFunction) => {
    const match = FORWARDED_ROUTES.find((r) => r.path.test(req.path));
    if (!match) return next();
    const base = deps.serviceUrls[match.service];
    if (!base) throw new AppError('SERVICE_UNAVAILABLE', `The ${match.service} service is not available`);

    const requestId = String(req.id);
    const headers: Record<string, string> = {
      accept: 'application/json',
      'x-request-id': requestId,
      ...signContext(
        {
          organizationId: principalOf(req).organization._id,
          role: 'ORG_ADMIN',
          requestId,
          issuedAt: Date.now(),
        },
        deps.signingSecret,
      ),
    };
    const hasBody = req.body !== undefined && !['GET', 'HEAD'].includes(req.method);
    if (hasBody) headers['content-type'] = 'application/json';

    let upstream: globalThis.Response;
    try {
      upstream = await fetch(`${base}/api${req.url}`, {
        method: req.method,
        headers,
        body: hasBody ? JSON.stringify(req.body) : undefined,
        redirect: 'manual',
        signal: AbortSignal.timeout(deps.timeoutMs),
      });
    } catch (err) {
      req.log.warn({ err, service: match.service }, 'forwarding failed');
      res.setHeader('Retry-After', '5');
      throw new AppError(
        'SERVICE_UNAVAILABLE',
        `The ${match.service} service is not available, try again shortly`,
      );
    }
    const text = await upstream.text();
    if (!(upstream.headers.get('content-type') ?? '').includes('application/json')) {
      req.log.error({ service: match.service, status: upstream.status }, 'service answered without JSON');
      throw new AppError(
        'SERVICE_UNAVAILABLE',
        `The ${match.service} service gave an invalid response`,
        undefined,
        502,
      );
    }
    for (const name of PASSED_BACK_HEADERS) {
      const value = upstream.headers.get(name);
      if (value) res.setHeader(name, value);
    }
    res.status(upstream.status).type('application/json').send(text);
  });
  return router;
}
