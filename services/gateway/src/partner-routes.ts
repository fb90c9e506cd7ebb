import {
  getApiKey,
  getOrganization,
  registerOrganization as registerOrganizationRoute,
  revokeApiKey as revokeApiKeyRoute,
  rotateApiKey,
  updateSettings as updateSettingsRoute,
} from '@parametric/contracts';
import { type Binding, created, implement, ok } from '@parametric/http';
import { apiKeyMetadata, revokeApiKey, rotateCredentials } from './api-keys/domain';
import type { Principal } from './auth/principal';
import { readOrganization, registerOrganization, updateSettings } from './organizations/domain';
import type { GatewayRepositories, TenantGatewayData } from './repositories';

export interface AnonymousContext {
  repositories: GatewayRepositories;
  pepper: string;
}

/** What an authenticated partner handler may touch: its own organization's data. */
export interface PartnerContext {
  principal: Principal;
  tenant: TenantGatewayData;
  pepper: string;
  webhookUrlOf: (organizationId: string) => Promise<string | null>;
}

/** `POST /auth/register-organization`: the one partner route without a key. */
export const registrationRoutes: Binding<AnonymousContext>[] = [
  implement(registerOrganizationRoute, async ({ body }, { repositories, pepper }) =>
    created(await registerOrganization(repositories, body, pepper)),
  ),
];

/** The organization and its API key (spec 2.2, 2.10, 4). */
export const organizationRoutes: Binding<PartnerContext>[] = [
  implement(getOrganization, async (_input, { principal, webhookUrlOf }) =>
    ok(await readOrganization(principal.organization, webhookUrlOf)),
  ),
  implement(updateSettingsRoute, async ({ body }, { tenant }) => ok(await updateSettings(tenant, body))),
  implement(getApiKey, async (_input, { tenant }) => ok(await apiKeyMetadata(tenant))),
  implement(rotateApiKey, async (_input, { tenant, pepper }) =>
    ok(await rotateCredentials(tenant, pepper, 'rot')),
  ),
  implement(revokeApiKeyRoute, async (_input, { tenant, principal }) =>
    // A dashboard admin revokes the organization's current key; the key itself, only itself.
    ok(await revokeApiKey(tenant, principal.kind === 'apiKey' ? principal.keyHash : undefined)),
  ),
];
