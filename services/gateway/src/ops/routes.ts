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
import type { Ops } from './domain';

export interface OpsContext {
  repositories: GatewayRepositories;
  ops: Ops;
  apiKeys: ApiKeys;
  /**
   * The organization's webhook URL from the webhooks service (forwarding/webhook-url.ts), the
   * lookup `GET /organizations/me` uses: one truth for partners and ops.
   */
  webhookUrlOf: (organizationId: string) => Promise<string | null>;
}

/** The ops interface (docs/ops.md): admin actions on one organization, which partners cannot take. */
export const opsRoutes: Binding<OpsContext>[] = [
  implement(opsGetOrganization, async ({ params }, { repositories, ops, webhookUrlOf }) => {
    const view = await ops.view(repositories.forOrganization(params.id));
    return ok({ ...view, webhookUrl: await webhookUrlOf(view.id) });
  }),
  implement(opsSetKyb, async ({ params, body }, { repositories, ops }) => {
    const tenant = repositories.forOrganization(params.id);
    const { organization } = await ops.recordKybDecision(tenant, body);
    return ok(await ops.view(tenant, organization));
  }),
  implement(opsSetServiceTier, async ({ params, body }, { repositories, ops }) => {
    const tenant = repositories.forOrganization(params.id);
    return ok(await ops.view(tenant, await ops.setServiceTier(tenant, body.serviceTier)));
  }),
  implement(opsDeactivate, async ({ params }, { repositories, ops }) => {
    const tenant = repositories.forOrganization(params.id);
    return ok(await ops.view(tenant, await ops.setActive(tenant, false)));
  }),
  implement(opsActivate, async ({ params }, { repositories, ops }) => {
    const tenant = repositories.forOrganization(params.id);
    return ok(await ops.view(tenant, await ops.setActive(tenant, true)));
  }),
  implement(opsRotateApiKey, async ({ params }, { repositories, ops, apiKeys }) => {
    const tenant = repositories.forOrganization(params.id);
    await ops.requireOrganization(tenant);
    return ok(await apiKeys.rotate(tenant, 'ops'));
  }),
];

/**
 * Underwriting lives in the policy service, which cannot tell whether an organization exists:
 * the gateway checks before forwarding, so an unknown organization is 404 here.
 */
export function requireKnownOrganization(repositories: GatewayRepositories, ops: Ops) {
  return async (req: Request, _res: Response, next: NextFunction) => {
    const { params } = parseInput({ params: idParams }, req) as { params: { id: string } };
    await ops.requireOrganization(repositories.forOrganization(params.id));
    next();
  };
}
