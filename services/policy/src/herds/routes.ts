import { getHerd, registerHerd as registerHerdRoute } from '@parametric/contracts';
import { type Binding, created, implement, ok } from '@parametric/http';
import type { PartnerContext } from '../context';
import { readHerd, registerHerd } from './domain';

/** `POST /herds`, `GET /herds/{id}` (contracts: libs/contracts/src/policy/farmers.ts). */
export const herdRoutes: Binding<PartnerContext>[] = [
  implement(registerHerdRoute, async ({ body }, { tenant }) => created(await registerHerd(tenant, body))),
  implement(getHerd, async ({ params }, { tenant }) => ok(await readHerd(tenant, params.id))),
];
