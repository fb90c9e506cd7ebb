import {
  type DeterminationIngestInput,
  KIND_OF_PRODUCT,
  type UNATTRIBUTED_REASONS,
} from '@parametric/contracts';
import type { PolicyFound, PolicySnapshot } from './policies';

export type UnattributedReason = (typeof UNATTRIBUTED_REASONS)[number];

export type Attribution =
  | { attributed: true; policy: PolicySnapshot }
  | { attributed: false; reason: UnattributedReason; policy: PolicySnapshot | null };

/** Policies a determination may be issued for: in force, or whose cover has ended. */
const ATTRIBUTABLE_STATUSES = new Set(['ACTIVE', 'EXPIRED']);

/**
 * Which policy an assessment belongs to, if any (docs/determinations.md, "From index to amount
 * owed"): the policy must exist (by id or number; both given must name the same one), be ACTIVE
 * or EXPIRED, be of the product the kind assesses, and its cover must overlap the observation
 * period. `found` answers from the policies looked up for the whole batch.
 */
export function attribute(input: DeterminationIngestInput, found: PolicyFound): Attribution {
  const policy = found(
    input.policyId !== undefined
      ? { policyId: input.policyId }
      : { policyNumber: input.policyNumber as string },
  );
  if (!policy) return { attributed: false, reason: 'POLICY_NOT_FOUND', policy: null };
  if (input.policyNumber !== undefined && input.policyNumber !== policy.policyNumber) {
    return { attributed: false, reason: 'POLICY_REFERENCE_MISMATCH', policy };
  }
  if (!ATTRIBUTABLE_STATUSES.has(policy.status))
    return { attributed: false, reason: 'POLICY_NOT_IN_FORCE', policy };
  if (KIND_OF_PRODUCT[policy.productType] !== input.kind)
    return { attributed: false, reason: 'KIND_MISMATCH', policy };
  if (!coverOverlaps(policy, input.evidence.periodStart, input.evidence.periodEnd)) {
    return { attributed: false, reason: 'OUTSIDE_COVER', policy };
  }
  return { attributed: true, policy };
}

/** Closed intervals: an observation period touching the cover's first or last instant counts. */
function coverOverlaps(policy: PolicySnapshot, periodStart: string, periodEnd: string): boolean {
  if (!policy.coverStartsAt || !policy.coverEndsAt) return false;
  return (
    Date.parse(periodStart) <= Date.parse(policy.coverEndsAt) &&
    Date.parse(periodEnd) >= Date.parse(policy.coverStartsAt)
  );
}
