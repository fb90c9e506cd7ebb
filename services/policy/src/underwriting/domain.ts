import type { capacityBody, licenceBody } from '@parametric/contracts';
import { AppError } from '@parametric/http';
import { minorFromNumber } from '@parametric/money';
import type { z } from 'zod';
import type { TenantPolicyData } from '../repositories';
import { type CapacityDoc, capacityView, exponentOfCurrency, type LicenceDoc, licenceView } from './model';

type Tenant = Pick<TenantPolicyData, 'licences' | 'capacity'>;

/** Records the organization's licence for a market, replacing the previous one. */
export async function recordLicence(tenant: Tenant, input: z.output<typeof licenceBody>) {
  const licence = await tenant.licences.findOneAndUpdate(
    { market: input.market },
    { $set: { licenceNumber: input.licenceNumber, expiresAt: input.expiresAt ?? null } },
    { upsert: true },
  );
  return licenceView(licence as LicenceDoc);
}

/**
 * Records capacity (exact minor units) and the solvency attestation. The currency may change
 * only while nothing is reserved: reservations are amounts in the currency they were made in.
 */
export async function recordCapacity(tenant: Tenant, input: z.output<typeof capacityBody>) {
  const amountMinor = minorFromNumber(input.amount, exponentOfCurrency(input.currency));
  const existing = await tenant.capacity.get();
  if (existing && existing.currency !== input.currency && existing.reservedMinor > 0n) {
    throw AppError.invalid('Capacity already has reservations in another currency', [
      { field: 'currency', message: `must stay ${existing.currency} while policies reserve capacity` },
    ]);
  }
  const capacity = await tenant.capacity.upsert({
    $set: { amountMinor, currency: input.currency, solvencyAttestedUntil: input.solvencyAttestedUntil },
  });
  return capacityView(capacity as CapacityDoc);
}

/** The organization's licences (by market) and capacity, as ops read them. */
export async function underwritingOf(tenant: Tenant) {
  const [licences, capacity] = await Promise.all([
    tenant.licences.find().sort({ market: 1 }).lean<LicenceDoc[]>(),
    tenant.capacity.get(),
  ]);
  return { licences: licences.map(licenceView), capacity: capacity ? capacityView(capacity) : null };
}

/**
 * Reserves `amountMinor` of the organization's capacity in one conditional `$inc`, so that
 * concurrent purchases can never together reserve more than the capacity. Returns false when
 * the remaining capacity is too small.
 */
export async function reserveCapacity(
  tenant: Pick<Tenant, 'capacity'>,
  amountMinor: bigint,
): Promise<boolean> {
  const reserved = await tenant.capacity.findOneAndUpdate(
    { $expr: { $lte: [{ $add: ['$reservedMinor', amountMinor] }, '$amountMinor'] } },
    { $inc: { reservedMinor: amountMinor } },
  );
  return reserved !== null;
}

/**
 * Gives back a reservation: of a policy that was never created, or of one whose claims window
 * is over (the release sweep). False when the organization has no capacity document.
 */
export async function releaseCapacity(
  tenant: Pick<Tenant, 'capacity'>,
  amountMinor: bigint,
): Promise<boolean> {
  const result = await tenant.capacity.updateOne({}, { $inc: { reservedMinor: -amountMinor } });
  return result.matchedCount === 1;
}
