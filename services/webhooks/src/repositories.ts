import { acrossOrganizations, organizationDocument, scopedTo } from '@parametric/mongo';
import type { Connection } from 'mongoose';
import { type DeliveryModel, deliveryModel } from './deliveries/model';
import { type EndpointModel, endpointModel } from './endpoints/model';

/**
 * The webhooks service's data, two ways in: bound to one organization (what partner request
 * handlers get), or across organizations (the event consumer, the deliverer and the
 * reconciler: the platform's own work).
 */
export function webhookRepositories(connection: Connection) {
  const endpoints = endpointModel(connection);
  const deliveries = deliveryModel(connection);
  return {
    init: () => Promise.all([endpoints.init(), deliveries.init()]),
    forOrganization: (organizationId: string) => ({
      endpoint: organizationDocument(endpoints, organizationId),
      deliveries: scopedTo(deliveries, organizationId),
    }),
    acrossOrganizations: (): { endpoints: EndpointModel; deliveries: DeliveryModel } => ({
      endpoints: acrossOrganizations(endpoints),
      deliveries: acrossOrganizations(deliveries),
    }),
  };
}

export type WebhookRepositories = ReturnType<typeof webhookRepositories>;
export type TenantWebhooks = ReturnType<WebhookRepositories['forOrganization']>;
