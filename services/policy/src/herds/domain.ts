import type { herdBody } from '@parametric/contracts';
import { AppError } from '@parametric/http';
import type { z } from 'zod';
import { requireFarmer } from '../farmers/domain';
import type { TenantPolicyData } from '../repositories';
import { type HerdDoc, herdView } from './model';

type Tenant = Pick<TenantPolicyData, 'farmers' | 'herds'>;

/** A herd of one of the organization's farmers (another organization's farmer is 404). */
export async function registerHerd(tenant: Tenant, input: z.output<typeof herdBody>) {
  await requireFarmer(tenant, input.farmerId);
  const herd = await tenant.herds.create(input);
  return herdView(herd.toObject() as HerdDoc);
}

export async function readHerd(tenant: Tenant, herdId: string) {
  const herd = await tenant.herds.findById(herdId).lean<HerdDoc>();
  if (!herd) throw AppError.notFound('Herd');
  return herdView(herd);
}
