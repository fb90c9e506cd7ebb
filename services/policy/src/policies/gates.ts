import { AppError, type InternalContext } from '@parametric/http';
import type { FarmerDoc } from '../farmers/model';
import type { HerdDoc } from '../herds/model';
import type { TenantPolicyData } from '../repositories';
import type { CapacityDoc, LicenceDoc } from '../underwriting/model';

/** The organization as the gateway signed it for this request (it owns organizations). */
export type OrganizationSnapshot = NonNullable<InternalContext['organization']>;

type Tenant = Pick<TenantPolicyData, 'farmers' | 'plots' | 'herds' | 'licences' | 'capacity'>;

export function requireKybVerified(organization: OrganizationSnapshot): void {
  if (organization.kybStatus !== 'VERIFIED') {
    throw AppError.forbidden('The organization must be KYB-verified to sell policies');
  }
}

/** A licence for the organization's market that is still valid `now` (no recorded expiry counts as lapsed). */
export async function requireCurrentLicence(tenant: Tenant, market: string, now: Date): Promise<void> {
  const licence = await tenant.licences
    .findOne({ market: market as LicenceDoc['market'] })
    .lean<LicenceDoc>();
  if (!licence) {
    throw new AppError('REGULATOR_LICENSE_REQUIRED', `No regulator licence on file for market ${market}`);
  }
  if (!licence.expiresAt || licence.expiresAt.getTime() <= now.getTime()) {
    throw new AppError(
      'REGULATOR_LICENSE_EXPIRED',
      `The regulator licence for market ${market} has lapsed or has no recorded expiry`,
    );
  }
}

/** Recorded capacity whose solvency attestation still holds `now`. */
export async function requireLiveCapacity(tenant: Tenant, now: Date): Promise<CapacityDoc> {
  const capacity = await tenant.capacity.get();
  if (!capacity) throw AppError.invalid('No underwriting capacity is recorded for the organization');
  if (capacity.solvencyAttestedUntil.getTime() <= now.getTime()) {
    throw AppError.invalid(
      'The solvency attestation has lapsed; no policies can be sold until it is renewed',
    );
  }
  return capacity;
}

/** One of the organization's farmers, KYC-approved. */
export async function requireInsurableFarmer(tenant: Tenant, farmerId: string): Promise<FarmerDoc> {
  const farmer = await tenant.farmers.findById(farmerId).lean<FarmerDoc>();
  if (!farmer) throw AppError.notFound('Farmer');
  if (farmer.kycStatus !== 'APPROVED') {
    throw AppError.invalid('The farmer must be KYC-approved to be insured', [
      { field: 'farmerId', message: `farmer KYC is ${farmer.kycStatus}` },
    ]);
  }
  return farmer;
}

/** Policies are sold in the market's currency, so the capacity backing them must be in it too. */
export function requireCapacityCurrency(capacity: CapacityDoc, currency: string | undefined): string {
  if (!currency || capacity.currency !== currency) {
    throw AppError.invalid(
      `Underwriting capacity is recorded in ${capacity.currency}, policies in this market are sold in ${currency}`,
    );
  }
  return currency;
}

export async function requireFarmersPlot(tenant: Tenant, farmerId: string, plotId: string): Promise<void> {
  if (!(await tenant.plots.exists({ _id: plotId, farmerId }))) throw AppError.notFound('Plot');
}

export async function requireFarmersHerd(tenant: Tenant, farmerId: string, herdId: string): Promise<HerdDoc> {
  const herd = await tenant.herds.findOne({ _id: herdId, farmerId }).lean<HerdDoc>();
  if (!herd) throw AppError.notFound('Herd');
  return herd;
}
