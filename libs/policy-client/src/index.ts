import { randomUUID } from 'node:crypto';
import { opsFarmerSchema, opsPolicySchema } from '@parametric/contracts';
import { AppError, signContext } from '@parametric/http';
import { currentTrace, outbound } from '@parametric/tracing';
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

/**
 * The policy service's ops look-up (`GET /ops/policies/{id}`, `/ops/policies/by-number/{n}`),
 * over HTTP with a signed ops context: services trust only contexts signed with the internal
 * secret. Other services read policies only through this client, never the policy collection.
 * A policy service that is down, slow or answers nonsense is `503 SERVICE_UNAVAILABLE`: the
 * caller refuses or retries, and never takes it for "no such policy".
 */
export function policyLookup(deps: ClientDeps): PolicyLookup {
  return (reference) =>
    getOps(
      deps,
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
  return (farmerId) =>
    getOps(deps, `/ops/farmers/${encodeURIComponent(farmerId)}`, opsFarmerSchema, 'farmer');
}

async function getOps<S extends z.ZodType>(
  deps: ClientDeps,
  path: string,
  schema: S,
  what: string,
): Promise<z.output<S> | null> {
  // The request or job this call is made for: its request id and trace go with it.
  const requestId = currentTrace()?.reqId ?? randomUUID();
  let res: Response;
  try {
    res = await outbound(`GET policy ${what}`, (traceparent) =>
      fetch(`${deps.policyUrl}${path}`, {
        headers: {
          accept: 'application/json',
          'x-request-id': requestId,
          ...(traceparent ? { traceparent } : {}),
          ...signContext({ role: 'OPS', requestId, issuedAt: Date.now() }, deps.signingSecret),
        },
        signal: AbortSignal.timeout(deps.timeoutMs),
      }),
    );
  } catch (err) {
    throw unavailable(`the policy service did not answer (${(err as Error).message})`);
  }
  // 400: an id or number that cannot exist (its format is wrong), so nothing has it.
  if (res.status === 404 || res.status === 400) {
    await res.body?.cancel();
    return null;
  }
  if (!res.ok) {
    await res.body?.cancel();
    throw unavailable(`the policy service answered ${res.status}`);
  }
  const body = (await res.json().catch(() => undefined)) as { data?: unknown } | undefined;
  const parsed = schema.safeParse(body?.data);
  if (!parsed.success) throw unavailable(`the policy service answered an unexpected ${what} shape`);
  return parsed.data;
}

function unavailable(reason: string): AppError {
  return new AppError(
    'SERVICE_UNAVAILABLE',
    `Policies cannot be read right now, try again shortly: ${reason}`,
  );
}
