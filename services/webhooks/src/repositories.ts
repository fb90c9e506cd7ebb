import { acrossOrganizations, organizationDocument, scopedTo } from '@parametric/mongo';
import type { Connection } from 'mongoose';
import { type AttemptModel, attemptModel } from './deliveries/attempts';
import { type DeliveryModel, deliveryModel } from './deliveries/model';
import { type EndpointModel, endpointModel } from './endpoints/model';

/** Every model of the service (its `migrate` command creates their indexes). */
export const webhookModels = (connection: Connection) => [
  endpointModel(connection),
  deliveryModel(connection),
  attemptModel(connection),
];

/**
 * The webhooks service's data, two ways in: bound to one organization (what partner request
 * handlers get), or across organizations (the event consumer, the deliverer and the
 * reconciler: the platform's own work).
 */
export function webhookRepositories(connection: Connection) {
  const endpoints = endpointModel(connection);
  const deliveries = deliveryModel(connection);
  const attempts = attemptModel(connection);
  return {
    init: () => Promise.all([endpoints.init(), deliveries.init(), attempts.init()]),
    forOrganization: (organizationId: string) => ({
      /** Whose data this is: what an event's data names (a test event's `organizationId`). */
      organizationId,
      endpoint: organizationDocument(endpoints, organizationId),
      deliveries: scopedTo(deliveries, organizationId),
      attempts: scopedTo(attempts, organizationId),
    }),
    acrossOrganizations: (): {
      endpoints: EndpointModel;
      deliveries: DeliveryModel;
      attempts: AttemptModel;
    } => ({
      endpoints: acrossOrganizations(endpoints),
      deliveries: acrossOrganizations(deliveries),
      attempts: acrossOrganizations(attempts),
    }),
  };
}

export type WebhookRepositories = ReturnType<typeof webhookRepositories>;
export type TenantWebhooks = ReturnType<WebhookRepositories['forOrganization']>;
