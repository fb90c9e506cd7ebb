import type { OpsPolicy, PolicyReference } from '@parametric/policy-client';

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
>;

export type { PolicyReference };

/** Finds a policy of any organization (the policy client, or a fixture in domain tests). */
export type PolicyLookup = (reference: PolicyReference) => Promise<PolicySnapshot | null>;
