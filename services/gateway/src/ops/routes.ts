import {
  idParams,
  opsActivate,
  opsDeactivate,
  opsGetOrganization,
  opsRotateApiKey,
  opsSetKyb,
  opsSetServiceTier,
} from '@parametric/contracts';
import { type Binding, implement, ok, parseInput } from '@parametric/http';
import type { NextFunction, Request, Response } from 'express';
import type { ApiKeys } from '../api-keys/domain';
import type { GatewayRepositories } from '../repositories';
import {
  opsOrganizationView,
  recordKybDecision,
  requireOrganization,
  setActive,
  setServiceTier,
} from './domain';

export interface OpsContext {
  repositories: GatewayRepositories;
  apiKeys: ApiKeys;
  /** Called after a write that recorded an event, so the relay picks it up at once. */
  onEventRecorded: () => void;
  /**
   * The organization's webhook URL from the webhooks service (forwarding/webhook-url.ts), the
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
  implement(opsRotateApiKey, async ({ params }, { repositories, apiKeys }) => {
    const tenant = repositories.forOrganization(params.id);
    await requireOrganization(tenant);
    return ok(await apiKeys.rotate(tenant, 'ops'));
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
