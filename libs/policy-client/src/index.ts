import { opsFarmerSchema, opsPolicySchema } from '@parametric/contracts';
import { type InternalClientOptions, internalGet } from '@parametric/http';
import type { z } from 'zod';

/** A policy of any organization, as the policy service's ops look-up returns it. */
export type OpsPolicy = z.output<typeof opsPolicySchema>;
/** A farmer of any organization (the phone a Tier 2 payout goes to). */
export type OpsFarmer = z.output<typeof opsFarmerSchema>;

interface ClientDeps {
  policyUrl: string;
  signingSecret: string;
  timeoutMs: number;
}

export type PolicyReference = { policyId: string } | { policyNumber: string };

/** Finds a policy of any organization; null when the policy service knows none. */
export type PolicyLookup = (reference: PolicyReference) => Promise<OpsPolicy | null>;

const clientOf = (deps: ClientDeps): InternalClientOptions => ({
  baseUrl: deps.policyUrl,
  signingSecret: deps.signingSecret,
  timeoutMs: deps.timeoutMs,
  service: 'policy',
  resource: 'Policies',
});

/**
 * The policy service's ops look-up (`GET /ops/policies/{id}`, `/ops/policies/by-number/{n}`),
 * over HTTP with a signed ops context (`internalGet`). Other services read policies only through
 * this client, never the policy collection. A policy service that is down, slow or answers
 * nonsense is `503 SERVICE_UNAVAILABLE`: the caller refuses or retries, and never takes it for
 * "no such policy".
 */
export function policyLookup(deps: ClientDeps): PolicyLookup {
  const client = clientOf(deps);
  return (reference) =>
    internalGet(
      client,
      'policyId' in reference
        ? `/ops/policies/${encodeURIComponent(reference.policyId)}`
        : `/ops/policies/by-number/${encodeURIComponent(reference.policyNumber)}`,
      opsPolicySchema,
      'policy',
    );
}

/** Finds a farmer of any organization; null when the policy service knows none. */
export type FarmerLookup = (farmerId: string) => Promise<OpsFarmer | null>;

export function farmerLookup(deps: ClientDeps): FarmerLookup {
  const client = clientOf(deps);
  return (farmerId) =>
    internalGet(client, `/ops/farmers/${encodeURIComponent(farmerId)}`, opsFarmerSchema, 'farmer');
}
