import { ENVIRONMENTS, opsFarmerSchema, opsPolicySchema } from '@parametric/contracts';
import { type InternalClientOptions, internalGet, internalPost } from '@parametric/http';
import { z } from 'zod';

/**
 * The policy service's answer, `environment` read as `live` where it is missing: a policy
 * service older than the field (during a rolling deployment) still answers, as its policies
 * were read before the field existed.
 */
const policyAnswer = opsPolicySchema.extend({ environment: z.enum(ENVIRONMENTS).default('live') });

/** A policy of any organization, as the policy service's ops look-up returns it. */
export type OpsPolicy = z.output<typeof policyAnswer>;
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
      policyAnswer,
      'policy',
    );
}

export interface PolicyReferences {
  policyIds: readonly string[];
  policyNumbers: readonly string[];
}

/** The policies found among the references, each once, in no particular order. */
export type PolicyLookupMany = (references: PolicyReferences) => Promise<OpsPolicy[]>;

const foundPolicies = z.object({ policies: z.array(policyAnswer) });

/**
 * Many policies in one request (`POST /ops/policies/lookup`, at most 1,000 ids and as many
 * numbers): a batch of determinations looks its policies up once, not once per item. What names
 * no policy is missing from the answer; a policy service that cannot answer is `503
 * SERVICE_UNAVAILABLE`, never "none found".
 */
export function policyLookupMany(deps: ClientDeps): PolicyLookupMany {
  const client = clientOf(deps);
  return async ({ policyIds, policyNumbers }) => {
    if (policyIds.length === 0 && policyNumbers.length === 0) return [];
    const answer = await internalPost(
      client,
      '/ops/policies/lookup',
      { policyIds, policyNumbers },
      foundPolicies,
      'policies',
    );
    return answer.policies;
  };
}

/** Finds a farmer of any organization; null when the policy service knows none. */
export type FarmerLookup = (farmerId: string) => Promise<OpsFarmer | null>;

export function farmerLookup(deps: ClientDeps): FarmerLookup {
  const client = clientOf(deps);
  return (farmerId) =>
    internalGet(client, `/ops/farmers/${encodeURIComponent(farmerId)}`, opsFarmerSchema, 'farmer');
}
