import { opsGetFarmer, opsSetFarmerKyc } from '@parametric/contracts';
import { type Binding, implement, ok } from '@parametric/http';
import type { OpsContext } from '../context';
import { readAnyFarmer, setFarmerKyc } from './domain';

/** Ops routes (reached through the gateway's ops API, docs/ops.md). */
export const farmerOpsRoutes: Binding<OpsContext>[] = [
  implement(opsGetFarmer, async ({ params }, { repositories }) =>
    ok(await readAnyFarmer(repositories.acrossOrganizations().farmers, params.id)),
  ),
  // The farmer id alone names the farmer, whichever organization it belongs to.
  implement(opsSetFarmerKyc, async ({ params, body }, { repositories }) =>
    ok(await setFarmerKyc(repositories.acrossOrganizations().farmers, params.id, body.status)),
  ),
];
