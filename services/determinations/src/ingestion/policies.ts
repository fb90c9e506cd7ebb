import type { OpsPolicy, PolicyReference, PolicyReferences } from '@parametric/policy-client';

/** What attribution and the amount owed need to know of a policy. */
export type PolicySnapshot = Pick<
  OpsPolicy,
  | 'id'
  | 'organizationId'
  | 'policyNumber'
  | 'status'
  | 'productType'
  | 'settlementMode'
  | 'currency'
  | 'exponent'
  | 'sumInsuredMinor'
  | 'coverStartsAt'
  | 'coverEndsAt'
  | 'environment'
>;

export type { PolicyReference, PolicyReferences };

/**
 * Finds the policies of any organization among the references, each once, in no particular
 * order (the policy client's `policyLookupMany`, or a fixture in domain tests). Throws (503)
 * when it cannot answer: never an empty answer for "unavailable".
 */
export type PolicyLookupMany = (references: PolicyReferences) => Promise<PolicySnapshot[]>;

/** The policy a reference names among those a look-up found; null when none. */
export type PolicyFound = (reference: PolicyReference) => PolicySnapshot | null;
