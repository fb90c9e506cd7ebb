import type { Logger } from '@parametric/logger';
import { type Producer, policyActivationJobId, type Sweep, type TaskOf } from '@parametric/queue';
import { type Clock, systemClock } from '../clock';
import type { TenantPolicyData } from '../repositories';
import { releaseCapacity } from '../underwriting/domain';
import { type PolicyDoc, type PolicyModel, releasableAfterCover } from './model';

/** An organization's capacity, bound to it (`forOrganization`). */
export type CapacityOf = (organizationId: string) => Pick<TenantPolicyData, 'capacity'>;

export interface SweepOptions {
  /** Across organizations (`acrossOrganizations`): see below. */
  policies: PolicyModel;
  activations: Producer<'policy-activations'>;
  /** Where a released policy's sum insured goes back: its own organization's capacity. */
  capacityOf: CapacityOf;
  /** How long after cover ends determinations may still arrive (CLAIMS_WINDOW_SECONDS). */
  claimsWindowMs: number;
  intervalMs: number;
  logger: Logger;
  clock?: Clock;
}

// The sweeps run across every organization by design (they are the platform's own jobs, not a
// tenant's request): the service hands them the model through `acrossOrganizations`.

/** Marks every ACTIVE policy whose cover has ended EXPIRED; returns how many. */
export async function expirePolicies(policies: PolicyModel, at: Date): Promise<number> {
  const result = await policies.updateMany(
    { status: 'ACTIVE', coverEndsAt: { $lte: at } },
    { $set: { status: 'EXPIRED', expiredAt: at } },
  );
  return result.modifiedCount;
}

/**
 * Makes sure every paid policy still waiting for activation has its job (a no-op for those
 * whose job is waiting or delayed): covers a Redis that lost its data, or a job that failed
 * on errors BullMQ gave up retrying.
 */
export async function requeueActivations(
  policies: PolicyModel,
  activations: Producer<'policy-activations'>,
): Promise<number> {
  const waiting = await policies
    .find(
      { activationRequestedAt: { $type: 'date' }, status: 'PENDING', premiumReference: { $type: 'string' } },
      { organizationId: 1, premiumReference: 1 },
    )
    .limit(1000)
    .lean<Pick<PolicyDoc, '_id' | 'organizationId' | 'premiumReference'>[]>();
  let added = 0;
  for (const p of waiting) {
    if (!p.premiumReference) continue;
    const outcome = await activations.ensure(
      { policyId: p._id, organizationId: p.organizationId, paymentId: p.premiumReference },
      { jobId: policyActivationJobId(p._id) },
    );
    if (outcome === 'added') added++;
  }
  return added;
}

/** A policy whose reservation a release sweep gave back. */
export interface ReleasedPolicy {
  policyId: string;
  organizationId: string;
  sumInsuredMinor: bigint;
  /** False when the organization had no capacity document to give it back to (logged). */
  capacityFound: boolean;
}

/** At most this many releases per sweep run; the next run takes the rest. */
const RELEASE_BATCH = 500;

/**
 * Gives back the capacity reserved by each policy `releasableAfterCover` at `now` (expired,
 * claims window over, no Tier 1 report pending), exactly once per policy even with several
 * sweepers running at the same time:
 *
 * 1. claim the policy: one conditional write sets `capacityReleasedAt` only while it is null
 *    and the policy is still releasable (so a PENDING report recorded meanwhile also stops it);
 *    of two sweepers, one gets the document back, the other nothing;
 * 2. the claimant `$inc`s its organization's `reservedMinor` by `-sumInsuredMinor`.
 *
 * MongoDB here has no multi-document transactions, so the two writes can be separated by a
 * crash. Claiming first makes that err on the safe side: the policy is marked released but the
 * capacity stays reserved, so the organization can sell less than it could, never more than
 * its capacity. No sweep retries it (that could give the amount back twice); ops see
 * `capacityReleasedAt` on `GET /ops/policies/{id}` and the organization's `reserved` on
 * `GET /ops/organizations/{id}/underwriting`, and the release is logged per policy.
 */
export async function releaseCapacityAfterCover(
  policies: PolicyModel,
  capacityOf: CapacityOf,
  now: Date,
  claimsWindowMs: number,
): Promise<ReleasedPolicy[]> {
  const releasable = releasableAfterCover(now, claimsWindowMs);
  const candidates = await policies
    .find(releasable, { _id: 1 })
    .limit(RELEASE_BATCH)
    .lean<Pick<PolicyDoc, '_id'>[]>();
  const released: ReleasedPolicy[] = [];
  for (const { _id } of candidates) {
    const claimed = await policies
      .findOneAndUpdate(
        { _id, ...releasable },
        { $set: { capacityReleasedAt: now } },
        { returnDocument: 'after', projection: { organizationId: 1, sumInsuredMinor: 1 } },
      )
      .lean<Pick<PolicyDoc, '_id' | 'organizationId' | 'sumInsuredMinor'>>();
    if (!claimed) continue; // another sweeper claimed it, or a report became due meanwhile
    // A crash here leaves the capacity reserved: the safe side (see above).
    const capacityFound = await releaseCapacity(capacityOf(claimed.organizationId), claimed.sumInsuredMinor);
    released.push({
      policyId: claimed._id,
      organizationId: claimed.organizationId,
      sumInsuredMinor: claimed.sumInsuredMinor,
      capacityFound,
    });
  }
  return released;
}

/**
 * The policy sweeps, each run every `intervalMs` (scheduled and kept by `startSweeps` of
 * libs/queue, through the service's declaration): expiry, lost activations, capacity after the
 * claims window.
 */
export function policySweeps(options: SweepOptions): Record<TaskOf<'policy-sweeps'>, Sweep> {
  const { policies, logger, intervalMs } = options;
  const now = options.clock ?? systemClock;
  return {
    'expire-policies': {
      everyMs: intervalMs,
      run: async () => {
        const expired = await expirePolicies(policies, now());
        if (expired > 0) logger.info({ expired }, 'policies past their cover end expired');
      },
    },
    'requeue-activations': {
      everyMs: intervalMs,
      run: async () => {
        const added = await requeueActivations(policies, options.activations);
        if (added > 0) logger.warn({ added }, 'activation jobs re-queued for paid policies');
      },
    },
    'release-capacity': {
      everyMs: intervalMs,
      run: async () => {
        const released = await releaseCapacityAfterCover(
          policies,
          options.capacityOf,
          now(),
          options.claimsWindowMs,
        );
        for (const { sumInsuredMinor, capacityFound, ...policy } of released) {
          const fields = { ...policy, sumInsuredMinor: sumInsuredMinor.toString() };
          if (capacityFound) logger.info(fields, 'capacity released after the claims window');
          else logger.error(fields, 'capacity released, but the organization has no capacity record');
        }
      },
    },
  };
}
