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

/** For a crop purchase whether the farmer's plot exists; for a livestock one the farmer's herd. */
export type PlotOrHerd = boolean | HerdDoc | null;

/**
 * What the purchase gates look at, read in one round: the reads do not depend on each other,
 * so a purchase waits for one database round trip instead of four, and the gates then decide
 * in the spec's order from what was read (an early refusal costs the reads it did not need).
 */
export async function readGates(
  tenant: Tenant,
  market: string,
  subject: { farmerId: string } & ({ plotId: string } | { herdId: string }),
) {
  const [licence, capacity, farmer, plotOrHerd] = await Promise.all([
    tenant.licences.findOne({ market: market as LicenceDoc['market'] }).lean<LicenceDoc>(),
    tenant.capacity.get(),
    tenant.farmers.findById(subject.farmerId).lean<FarmerDoc>(),
    'plotId' in subject
      ? tenant.plots
          .exists({ _id: subject.plotId, farmerId: subject.farmerId })
          .then((found) => found !== null)
      : tenant.herds.findOne({ _id: subject.herdId, farmerId: subject.farmerId }).lean<HerdDoc>(),
  ]);
  return { licence, capacity, farmer, plotOrHerd: plotOrHerd as PlotOrHerd };
}

/** A licence for the organization's market that is still valid `now` (no recorded expiry counts as lapsed). */
export function requireCurrentLicence(licence: LicenceDoc | null, market: string, now: Date): void {
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
export function requireLiveCapacity(capacity: CapacityDoc | null, now: Date): CapacityDoc {
  if (!capacity) throw AppError.invalid('No underwriting capacity is recorded for the organization');
  if (capacity.solvencyAttestedUntil.getTime() <= now.getTime()) {
    throw AppError.invalid(
      'The solvency attestation has lapsed; no policies can be sold until it is renewed',
    );
  }
  return capacity;
}

/** One of the organization's farmers, KYC-approved. */
export function requireInsurableFarmer(farmer: FarmerDoc | null): FarmerDoc {
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

/** The farmer's plot (read by `readGates`: whether it exists for this farmer). */
export function requireFarmersPlot(found: PlotOrHerd): void {
  if (found !== true) throw AppError.notFound('Plot');
}

/** The farmer's herd (read by `readGates`). */
export function requireFarmersHerd(found: PlotOrHerd): HerdDoc {
  if (found === null || typeof found === 'boolean') throw AppError.notFound('Herd');
  return found;
}
