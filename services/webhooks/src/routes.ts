import {
  getDelivery as getDeliveryRoute,
  getWebhook,
  listDeliveries as listDeliveriesRoute,
  retryDelivery as retryDeliveryRoute,
  rotateWebhookSecret,
  sendTestEvent as sendTestEventRoute,
  setWebhook,
} from '@parametric/contracts';
import { type Binding, implement, ok } from '@parametric/http';
import {
  getDelivery,
  listDeliveries,
  releaseWaiting,
  retryDelivery,
  sendTestEvent,
} from './deliveries/domain';
import type { Deliverer } from './delivery/deliverer';
import { rotateSigningSecret, type SecretKeys, setWebhookUrl, webhookConfig } from './endpoints/domain';
import type { TenantWebhooks } from './repositories';

/** What a partner request's handler may touch: the caller's own data, and the deliverer. */
export interface PartnerContext {
  tenant: TenantWebhooks;
  deliverer: Deliverer;
  keys: SecretKeys;
  /** After a change of the URL or the secret, before answering: every replica's cache forgets it. */
  endpointChanged(): Promise<void>;
}

/** Partner routes (behind the gateway's signed context), declared in libs/contracts/src/webhooks.ts. */
export const webhookRoutes: Binding<PartnerContext>[] = [
  implement(setWebhook, async ({ body }, { tenant, keys, endpointChanged, deliverer }) => {
    const config = await setWebhookUrl(tenant, body.url, keys);
    await endpointChanged();
    // The events recorded while there was no URL go to this one now (docs/webhooks.md).
    await releaseWaiting(tenant, deliverer);
    return ok(config);
  }),
  implement(getWebhook, async (_input, { tenant, keys }) => ok(await webhookConfig(tenant, keys))),
  implement(rotateWebhookSecret, async (_input, { tenant, keys, endpointChanged }) => {
    const rotated = await rotateSigningSecret(tenant, keys);
    await endpointChanged();
    return ok(rotated);
  }),
  implement(listDeliveriesRoute, async ({ query }, { tenant }) => ok(await listDeliveries(tenant, query))),
  implement(getDeliveryRoute, async ({ params }, { tenant }) => ok(await getDelivery(tenant, params.id))),
  implement(retryDeliveryRoute, async ({ params }, { tenant, deliverer }) =>
    ok(await retryDelivery(tenant, params.id, deliverer)),
  ),
  implement(sendTestEventRoute, async ({ body }, { tenant, deliverer }) => ({
    status: 202 as const,
    data: await sendTestEvent(tenant, body.event, deliverer),
  })),
];
