import { randomUUID } from 'node:crypto';
import type { PurchaseBody } from '@parametric/contracts';
import { connectMongoose } from '@parametric/test-harness';
import type { Connection } from 'mongoose';
import { DAY_MS } from '../../src/clock';
import { registerFarmer, setFarmerKyc } from '../../src/farmers/domain';
import { registerPlot } from '../../src/plots/domain';
import type { OrganizationSnapshot } from '../../src/policies/gates';
import { type PolicyRepositories, policyRepositories, type TenantPolicyData } from '../../src/repositories';
import { recordCapacity, recordLicence } from '../../src/underwriting/domain';
import { farmerBody, herdBody, plotBody } from '../support';

/** Domain tests call domain functions directly, on the run's MongoDB, each file on its own database. */
export interface DomainDb {
  repositories: PolicyRepositories;
  /** For looking at what is stored, bypassing the models. */
  connection: Connection;
  /** A new organization's tenant binding. */
  organization(): TenantPolicyData;
  close(): Promise<void>;
}

export async function domainDb(label: string): Promise<DomainDb> {
  const handle = await connectMongoose(label);
  const repositories = policyRepositories(handle.connection);
  await repositories.init();
  return {
    repositories,
    connection: handle.connection,
    organization: () => repositories.forOrganization(randomUUID()),
    close: () => handle.close(),
  };
}

/** The instant most tests happen at (the clock they inject). */
export const T0 = new Date('2026-11-22T10:00:00.000Z');

export const at = (base: Date, ms: number) => new Date(base.getTime() + ms);

export const KE_VERIFIED: OrganizationSnapshot = {
  countryCode: 'KE',
  kybStatus: 'VERIFIED',
  serviceTier: 'DETERMINATION',
  isActive: true,
};

// The same valid bodies the end-to-end tests send: one definition of each.
export const farmerInput = farmerBody;
export const plotInput = (farmerId: string) => plotBody(farmerId);
export const herdInput = (farmerId: string, estimatedValue: number) => herdBody(farmerId, { estimatedValue });

export type CropPurchase = Extract<PurchaseBody, { productType: 'CROP' }>;

export const cropBody = (
  o: { farmerId: string; plotId: string },
  overrides: Partial<CropPurchase> = {},
): CropPurchase => ({
  farmerId: o.farmerId,
  productType: 'CROP',
  plotId: o.plotId,
  sumInsured: 50_000,
  coverageType: 'DROUGHT',
  durationDays: 180,
  ...overrides,
});

/**
 * An organization that passes every purchase gate at `T0` (KE licence and solvency valid for a
 * year), with a KYC-approved farmer and its plot.
 */
export async function sellable(db: DomainDb, capacity = 1_000_000) {
  const tenant = db.organization();
  await recordLicence(tenant, { market: 'KE', licenceNumber: 'IRA-1', expiresAt: at(T0, 365 * DAY_MS) });
  await recordCapacity(tenant, {
    amount: capacity,
    currency: 'KES',
    solvencyAttestedUntil: at(T0, 365 * DAY_MS),
  });
  const farmer = await registerFarmer(tenant, farmerInput());
  await setFarmerKyc(db.repositories.acrossOrganizations().farmers, farmer.id, 'APPROVED');
  const plot = await registerPlot(tenant, plotInput(farmer.id));
  return { tenant, farmerId: farmer.id, plotId: plot.id };
}

/** What a call ended with: its value, or the AppError's code, message and details. */
export { outcome } from '@parametric/test-harness';
