import {
  getApiKey,
  getOrganization,
  registerOrganization as registerOrganizationRoute,
  revokeApiKey as revokeApiKeyRoute,
  rotateApiKey,
  updateSettings as updateSettingsRoute,
} from '@parametric/contracts';
import { type Binding, created, implement, ok } from '@parametric/http';
import type { ApiKeys } from './api-keys/domain';
import type { Principal } from './auth/principal';
import type { Organizations } from './organizations/domain';
import type { TenantGatewayData } from './repositories';

export interface AnonymousContext {
  organizations: Organizations;
}

/** What an authenticated partner handler may touch: its own organization's data. */
export interface PartnerContext {
  principal: Principal;
  tenant: TenantGatewayData;
  organizations: Organizations;
  apiKeys: ApiKeys;
  webhookUrlOf: (organizationId: string) => Promise<string | null>;
}

/** `POST /auth/register-organization`: the one partner route without a key. */
export const registrationRoutes: Binding<AnonymousContext>[] = [
  implement(registerOrganizationRoute, async ({ body }, { organizations }) =>
    created(await organizations.register(body)),
  ),
];

/** The organization and its API key (their contracts: libs/contracts/src/gateway.ts). */
export const organizationRoutes: Binding<PartnerContext>[] = [
  implement(getOrganization, async (_input, { principal, organizations, webhookUrlOf }) =>
    ok(await organizations.read(principal.organization, webhookUrlOf)),
  ),
  implement(updateSettingsRoute, async ({ body }, { tenant, organizations }) =>
    ok(await organizations.updateSettings(tenant, body)),
  ),
  implement(getApiKey, async (_input, { tenant, apiKeys }) => ok(await apiKeys.metadata(tenant))),
  implement(rotateApiKey, async (_input, { tenant, apiKeys }) => ok(await apiKeys.rotate(tenant, 'rot'))),
  implement(revokeApiKeyRoute, async (_input, { tenant, principal, apiKeys }) =>
    // A dashboard admin revokes the organization's current key; the key itself, only itself.
    ok(await apiKeys.revoke(tenant, principal.kind === 'apiKey' ? principal.keyHash : undefined)),
  ),
];
