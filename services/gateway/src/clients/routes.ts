import {
  opsCreateClient,
  opsListClients,
  opsRevokeClient,
  opsRotateClientSecret,
} from '@parametric/contracts';
import { type Binding, created, implement, ok, page } from '@parametric/http';
import type { OpsClients } from './domain';

/** What a client-management route may touch: the clients. */
export interface OpsClientRoutesContext {
  clients: OpsClients;
}

/** Machine client management (`ops.operator:manage`). */
export const opsClientRoutes: Binding<OpsClientRoutesContext>[] = [
  implement(opsCreateClient, async ({ body }, { clients }) => created(await clients.create(body))),
  implement(opsListClients, async ({ query }, { clients }) => {
    const { items, total } = await clients.list(query);
    return page(items, { page: query.page, limit: query.limit, total });
  }),
  implement(opsRotateClientSecret, async ({ params }, { clients }) =>
    ok(await clients.rotateSecret(params.id)),
  ),
  implement(opsRevokeClient, async ({ params }, { clients }) => ok(await clients.revoke(params.id))),
];
