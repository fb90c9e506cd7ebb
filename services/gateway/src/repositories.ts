import { acrossOrganizations, organizationDocument } from '@parametric/mongo';
import type { Connection } from 'mongoose';
import { apiKeyModel } from './api-keys/model';
import { organizationModel } from './organizations/model';

/**
 * The gateway's data, two ways in: bound to one organization (partner handlers, and ops
 * actions on one organization), or across organizations (registration creating a tenant,
 * authentication finding a key by its hash, the outbox relay).
 */
export function gatewayRepositories(connection: Connection) {
  const organizations = organizationModel(connection);
  const apiKeys = apiKeyModel(connection);
  return {
    init: () => Promise.all([organizations.init(), apiKeys.init()]),
    forOrganization: (organizationId: string) => ({
      organizationId,
      organization: organizationDocument(organizations, organizationId),
      apiKey: organizationDocument(apiKeys, organizationId),
    }),
    acrossOrganizations: () => ({
      organizations: acrossOrganizations(organizations),
      apiKeys: acrossOrganizations(apiKeys),
    }),
  };
}

export type GatewayRepositories = ReturnType<typeof gatewayRepositories>;
export type TenantGatewayData = ReturnType<GatewayRepositories['forOrganization']>;
