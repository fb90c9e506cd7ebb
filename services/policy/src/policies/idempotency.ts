import { createHash, randomUUID } from 'node:crypto';
import type { PurchaseBody } from '@parametric/contracts';
import { AppError } from '@parametric/http';
import type { TenantPolicyData } from '../repositories';
import type { CapacityDoc } from '../underwriting/model';
import type { PolicyDoc } from './model';

type Tenant = Pick<TenantPolicyData, 'policies' | 'capacity'>;

/** A purchase's `Idempotency-Key` and the fingerprint of its body. */
export interface Keyed {
  key: string;
  fingerprint: string;
}

/** JSON with object keys sorted at every level, so the same input always hashes the same. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/**
 * The hash of the canonical parsed body (after the contract's trimming, defaults and
 * stripping): two bodies that buy the same thing have the same fingerprint, whatever their key
 * order or whitespace.
 */
export function fingerprintOf(body: PurchaseBody): string {
  return createHash('sha256').update(canonicalJson(body)).digest('hex');
}

export function keyedPurchase(key: string | undefined, body: PurchaseBody): Keyed | undefined {
  return key === undefined ? undefined : { key, fingerprint: fingerprintOf(body) };
}

function keyReusedWithOtherBody(): AppError {
  return AppError.conflict(
    'This Idempotency-Key was already used for a purchase with a different body: send a new key for a new purchase, or repeat the original body to read what it bought',
    [{ field: 'Idempotency-Key', message: 'already used with a different request body' }],
  );
}

/** The policy the key bought, if any; 409 when it was bought with another body. */
export async function policyOfKey(tenant: Tenant, keyed: Keyed): Promise<PolicyDoc | null> {
  const policy = await tenant.policies.findOne({ idempotencyKey: keyed.key }).lean<PolicyDoc>();
  if (policy && policy.idempotencyFingerprint !== keyed.fingerprint) throw keyReusedWithOtherBody();
  return policy;
}

/** The reservation a purchase creates its policy on: its own, or one a same-key request made. */
export interface Claim {
  claimId: string;
  /** Made by this request (false: found, made by another request with the key). */
  mine: boolean;
}

/**
 * Claims the key and reserves `amountMinor` in one conditional update of the capacity document:
 * it applies only when the remaining capacity allows it and no reservation holds the key. When
 * one does (a request with the same key is in flight, or one crashed between reserving and
 * writing its policy), that reservation is used and nothing more is reserved. Null when the
 * remaining capacity is too small.
 */
export async function claimKeyedReservation(
  tenant: Tenant,
  keyed: Keyed,
  amountMinor: bigint,
  now: Date,
): Promise<Claim | 'NO_CAPACITY'> {
  const claimId = randomUUID();
  const reserved = await tenant.capacity.findOneAndUpdate(
    {
      $expr: { $lte: [{ $add: ['$reservedMinor', amountMinor] }, '$amountMinor'] },
      'keyedReservations.key': { $ne: keyed.key },
    },
    {
      $inc: { reservedMinor: amountMinor },
      $push: {
        keyedReservations: {
          claimId,
          key: keyed.key,
          fingerprint: keyed.fingerprint,
          amountMinor: amountMinor.toString(),
          reservedAt: now,
        },
      },
    },
  );
  if (reserved) return { claimId, mine: true };
  const capacity = (await tenant.capacity.get()) as CapacityDoc | null;
  const held = capacity?.keyedReservations?.find((r) => r.key === keyed.key);
  if (!held) return 'NO_CAPACITY';
  if (held.fingerprint !== keyed.fingerprint) throw keyReusedWithOtherBody();
  if (held.amountMinor !== amountMinor.toString()) {
    // Same body, another price: what it prices on (the herd's value) changed while the first
    // request with this key was under way. Its reservation is not this amount.
    throw AppError.conflict(
      'A purchase with this Idempotency-Key is still being completed on other terms: retry it shortly',
    );
  }
  return { claimId: held.claimId, mine: false };
}

/** The policy on the claim exists: the reservation is the policy's now, the claim entry goes. */
export async function settleClaim(tenant: Tenant, claimId: string): Promise<void> {
  await tenant.capacity.updateOne({}, { $pull: { keyedReservations: { claimId } } });
}

/**
 * Gives back a claimed reservation that no policy can use (another claim's policy won the key).
 * One conditional update (the entry must still be there), so it is given back at most once.
 */
export async function releaseClaim(tenant: Tenant, claimId: string, amountMinor: bigint): Promise<void> {
  await tenant.capacity.updateOne(
    { 'keyedReservations.claimId': claimId },
    { $inc: { reservedMinor: -amountMinor }, $pull: { keyedReservations: { claimId } } },
  );
}
