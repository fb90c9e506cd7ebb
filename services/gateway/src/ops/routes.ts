import { timingSafeEqual } from 'node:crypto';
import {
  idParams,
  opsActivate,
  opsDeactivate,
  opsGetOrganization,
  opsRotateApiKey,
  opsSetKyb,
  opsSetServiceTier,
} from '@parametric/contracts';
import { AppError, type Binding, implement, ok, parseInput } from '@parametric/http';
import type { NextFunction, Request, Response } from 'express';
import { rotateCredentials } from '../api-keys/domain';
import type { GatewayRepositories } from '../repositories';
import {
  opsOrganizationView,
  recordKybDecision,
  requireOrganization,
  setActive,
  setServiceTier,
} from './domain';

/** `Authorization: Bearer <OPS_TOKEN>`, compared in constant time; `refused` hears each refusal. */
export function requireOpsToken(
  token: string,
  refused?: () => void,
  options: {
    /**
     * Paths (under the mount) a browser opens, the queue dashboard: there the token is also taken
     * as the password of HTTP Basic credentials (any user name), and a refusal asks the browser
     * for them, since a browser cannot send a bearer token.
     */
    browserPath?: string;
  } = {},
) {
  const expected = Buffer.from(token);
  return (req: Request, res: Response, next: NextFunction): void => {
    const header = req.headers.authorization ?? '';
    const browser = options.browserPath !== undefined && req.path.startsWith(options.browserPath);
    const given = Buffer.from(
      header.startsWith('Bearer ') ? header.slice(7) : browser ? basicPassword(header) : '',
    );
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      refused?.();
      if (browser) res.setHeader('WWW-Authenticate', 'Basic realm="ops", charset="UTF-8"');
      next(AppError.unauthorized('A valid ops bearer token is required'));
      return;
    }
    next();
  };
}

/** The password of `Basic base64(user:password)` credentials, or '' when there are none. */
function basicPassword(header: string): string {
  if (!header.startsWith('Basic ')) return '';
  const decoded = Buffer.from(header.slice(6), 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon < 0 ? '' : decoded.slice(colon + 1);
}

export interface OpsContext {
  repositories: GatewayRepositories;
  pepper: string;
  /** Called after a write that recorded an event, so the relay picks it up at once. */
  onEventRecorded: () => void;
  /**
   * The organization's webhook URL from the webhooks service (organizations/webhook-url.ts), the
   * lookup `GET /organizations/me` uses: one truth for partners and ops.
   */
  webhookUrlOf: (organizationId: string) => Promise<string | null>;
}

/** The ops interface (docs/ops.md): admin actions on one organization, which partners cannot take. */
export const opsRoutes: Binding<OpsContext>[] = [
  implement(opsGetOrganization, async ({ params }, { repositories, webhookUrlOf }) => {
    const view = await opsOrganizationView(repositories.forOrganization(params.id));
    return ok({ ...view, webhookUrl: await webhookUrlOf(view.id) });
  }),
  implement(opsSetKyb, async ({ params, body }, { repositories, onEventRecorded }) => {
    const tenant = repositories.forOrganization(params.id);
    const { organization, eventRecorded } = await recordKybDecision(tenant, body);
    if (eventRecorded) onEventRecorded();
    return ok(await opsOrganizationView(tenant, organization));
  }),
  implement(opsSetServiceTier, async ({ params, body }, { repositories }) => {
    const tenant = repositories.forOrganization(params.id);
    return ok(await opsOrganizationView(tenant, await setServiceTier(tenant, body.serviceTier)));
  }),
  implement(opsDeactivate, async ({ params }, { repositories }) => {
    const tenant = repositories.forOrganization(params.id);
    return ok(await opsOrganizationView(tenant, await setActive(tenant, false)));
  }),
  implement(opsActivate, async ({ params }, { repositories }) => {
    const tenant = repositories.forOrganization(params.id);
    return ok(await opsOrganizationView(tenant, await setActive(tenant, true)));
  }),
  implement(opsRotateApiKey, async ({ params }, { repositories, pepper }) => {
    const tenant = repositories.forOrganization(params.id);
    await requireOrganization(tenant);
    return ok(await rotateCredentials(tenant, pepper, 'ops'));
  }),
];

/**
 * Underwriting lives in the policy service, which cannot tell whether an organization exists:
 * the gateway checks before forwarding, so an unknown organization is 404 here.
 */
export function requireKnownOrganization(repositories: GatewayRepositories) {
  return async (req: Request, _res: Response, next: NextFunction) => {
    const { params } = parseInput({ params: idParams }, req) as { params: { id: string } };
    await requireOrganization(repositories.forOrganization(params.id));
    next();
  };
}
