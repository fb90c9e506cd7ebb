import type { plotBody } from '@parametric/contracts';
import { AppError } from '@parametric/http';
import type { z } from 'zod';
import { requireFarmer } from '../farmers/domain';
import type { TenantPolicyData } from '../repositories';
import { type PlotDoc, plotView } from './model';

type Tenant = Pick<TenantPolicyData, 'farmers' | 'plots'>;

/** A plot of one of the organization's farmers (another organization's farmer is 404). */
export async function registerPlot(tenant: Tenant, input: z.output<typeof plotBody>) {
  await requireFarmer(tenant, input.farmerId);
  const plot = await tenant.plots.create(input);
  return plotView(plot.toObject() as PlotDoc);
}

export async function readPlot(tenant: Tenant, plotId: string) {
  const plot = await tenant.plots.findById(plotId).lean<PlotDoc>();
  if (!plot) throw AppError.notFound('Plot');
  return plotView(plot);
}
