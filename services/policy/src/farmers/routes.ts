import {
  bulkImportFarmers as bulkImportRoute,
  getFarmer,
  listFarmerHerds,
  listFarmerPlots,
  listFarmers as listFarmersRoute,
  registerFarmer as registerFarmerRoute,
} from '@parametric/contracts';
import { type Binding, created, implement, ok, page } from '@parametric/http';
import type { PartnerContext } from '../context';
import {
  bulkImportFarmers,
  farmerHerds,
  farmerPlots,
  listFarmers,
  readFarmer,
  registerFarmer,
} from './domain';

/** Farmers (contracts: libs/contracts/src/policy/farmers.ts): each belongs to the calling organization. */
export const farmerRoutes: Binding<PartnerContext>[] = [
  implement(registerFarmerRoute, async ({ body }, { tenant, organization }) =>
    created(await registerFarmer(tenant, body, organization.environment)),
  ),
  implement(bulkImportRoute, async ({ body }, { tenant, organization }) =>
    ok(await bulkImportFarmers(tenant, body.farmers, organization.environment)),
  ),
  implement(listFarmersRoute, async ({ query }, { tenant }) => {
    const { items, at } = await listFarmers(tenant, query);
    return page(items, at);
  }),
  implement(getFarmer, async ({ params }, { tenant }) => ok(await readFarmer(tenant, params.id))),
  implement(listFarmerPlots, async ({ params, query }, { tenant }) => {
    const { items, total } = await farmerPlots(tenant, params.id, query);
    return page(items, { page: query.page, limit: query.limit, total });
  }),
  implement(listFarmerHerds, async ({ params, query }, { tenant }) => {
    const { items, total } = await farmerHerds(tenant, params.id, query);
    return page(items, { page: query.page, limit: query.limit, total });
  }),
];
