import { getPlot, registerPlot as registerPlotRoute } from '@parametric/contracts';
import { type Binding, created, implement, ok } from '@parametric/http';
import type { PartnerContext } from '../context';
import { readPlot, registerPlot } from './domain';

/** `POST /plots`, `GET /plots/{id}` (contracts: libs/contracts/src/policy/farmers.ts). */
export const plotRoutes: Binding<PartnerContext>[] = [
  implement(registerPlotRoute, async ({ body }, { tenant }) => created(await registerPlot(tenant, body))),
  implement(getPlot, async ({ params }, { tenant }) => ok(await readPlot(tenant, params.id))),
];
