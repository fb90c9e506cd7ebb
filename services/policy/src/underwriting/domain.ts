import type { capacityBody, licenceBody } from '@parametric/contracts';
import { AppError } from '@parametric/http';
import { formatMinor, minorFromNumber } from '@parametric/money';
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

/** How many times a capacity write is tried again when a reservation moved under it. */
const CAPACITY_WRITE_ATTEMPTS = 5;

/**
 * Records capacity (exact minor units) and the solvency attestation, in one conditional write:
 * the capacity may not go below what policies already reserve (the remaining capacity never goes
 * negative), and the currency may change only while nothing is reserved (reservations are amounts
 * in the currency they were made in). The conditions are checked by MongoDB in the write itself,
 * so a purchase reserving at the same moment cannot slip under the new amount: either the
 * reservation's conditional `$inc` (`reserveCapacity`) sees the new amount, or this write sees
 * the reservation.
 */
export async function recordCapacity(tenant: Tenant, input: z.output<typeof capacityBody>) {
  const exponent = exponentOfCurrency(input.currency);
  const amountMinor = minorFromNumber(input.amount, exponent);
  for (let attempt = 1; ; attempt++) {
    try {
      // An upsert whose conditions only an existing document can fail: with no document it
      // inserts (nothing reserved yet); with one that fails them, the insert collides on `_id`.
      const capacity = await tenant.capacity.findOneAndUpdate(
        {
          $expr: {
            $and: [
              { $lte: ['$reservedMinor', amountMinor] },
              { $or: [{ $eq: ['$currency', input.currency] }, { $eq: ['$reservedMinor', 0] }] },
            ],
          },
        },
        {
          $set: { amountMinor, currency: input.currency, solvencyAttestedUntil: input.solvencyAttestedUntil },
        },
        { upsert: true, setDefaultsOnInsert: true },
      );
      return capacityView(capacity as CapacityDoc);
    } catch (err) {
      if ((err as { code?: unknown }).code !== 11000) throw err;
    }
    const existing = await tenant.capacity.get();
    if (existing && existing.reservedMinor > 0n && existing.currency !== input.currency) {
      throw AppError.invalid('Capacity already has reservations in another currency', [
        { field: 'currency', message: `must stay ${existing.currency} while policies reserve capacity` },
      ]);
    }
    if (existing && existing.reservedMinor > amountMinor) {
      const reserved = formatMinor(existing.reservedMinor, exponent);
      throw AppError.invalid(
        `Capacity cannot be set below the ${reserved} ${existing.currency} that policies already reserve`,
        [
          {
            field: 'amount',
            message: `must be at least ${reserved} (${existing.currency} already reserved by policies; the remaining capacity may not go below 0)`,
          },
        ],
      );
    }
    // The reservation that stood in the way was released meanwhile: write again.
    if (attempt >= CAPACITY_WRITE_ATTEMPTS) {
      throw new Error('capacity write kept colliding with reservations; giving up');
    }
  }
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
