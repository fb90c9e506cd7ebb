import { AppError, type InternalContext } from '@parametric/http';
import type { FarmerDoc } from '../farmers/model';
import type { HerdDoc } from '../herds/model';
import type { TenantPolicyData } from '../repositories';
import type { CapacityDoc, LicenceDoc } from '../underwriting/model';

/** The organization as the gateway signed it for this request (it owns organizations). */
export type OrganizationSnapshot = NonNullable<InternalContext['organization']>;

type Tenant = Pick<TenantPolicyData, 'farmers' | 'plots' | 'herds' | 'licences' | 'capacity'>;

// Each refusal names the state found and what the partner (the insurer) does next, since it
// meets them in turn before its first sale. It names no ops route: partners cannot call them,
// and the ops API is ours (docs/decisions.md, "Partner lists").

export function requireKybVerified(organization: OrganizationSnapshot): void {
  if (organization.kybStatus !== 'VERIFIED') {
    throw AppError.forbidden(
      `Your organization's KYB is ${organization.kybStatus}: policies can be sold once it is VERIFIED; complete KYB verification with us`,
    );
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
    throw new AppError(
      'REGULATOR_LICENSE_REQUIRED',
      `No regulator licence for market ${market} is on file: send us your current ${market} licence (number and expiry date) before selling policies`,
    );
  }
  if (!licence.expiresAt || licence.expiresAt.getTime() <= now.getTime()) {
    throw new AppError(
      'REGULATOR_LICENSE_EXPIRED',
      `The regulator licence for market ${market} has lapsed or has no recorded expiry: send us your renewed licence with its expiry date`,
    );
  }
}

/** Recorded capacity whose solvency attestation still holds `now`. */
export function requireLiveCapacity(capacity: CapacityDoc | null, now: Date): CapacityDoc {
  if (!capacity) {
    throw AppError.invalid(
      'No underwriting capacity is recorded for your organization: send us your capacity (amount and currency) with a solvency attestation before selling policies',
    );
  }
  if (capacity.solvencyAttestedUntil.getTime() <= now.getTime()) {
    throw AppError.invalid(
      'Your solvency attestation has lapsed: no policies can be sold until you send us a renewed one',
    );
  }
  return capacity;
}

/** One of the organization's farmers, KYC-approved. */
export function requireInsurableFarmer(farmer: FarmerDoc | null): FarmerDoc {
  if (!farmer) throw AppError.notFound('Farmer');
  if (farmer.kycStatus !== 'APPROVED') {
    throw AppError.invalid(
      `The farmer's KYC is ${farmer.kycStatus}: the farmer can be insured once it is APPROVED; have the farmer's KYC approved`,
      [{ field: 'farmerId', message: `farmer KYC is ${farmer.kycStatus}` }],
    );
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
