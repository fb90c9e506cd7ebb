import { randomUUID } from 'node:crypto';
import { opsPolicySchema } from '@parametric/contracts';
import { AppError, signContext } from '@parametric/http';
import type { z } from 'zod';

/** A policy of any organization, as the policy service's ops look-up returns it. */
export type OpsPolicy = z.output<typeof opsPolicySchema>;

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
export function policyLookup(deps: {
  policyUrl: string;
  signingSecret: string;
  timeoutMs: number;
}): PolicyLookup {
  return async (reference) => {
    const path =
      'policyId' in reference
        ? `/ops/policies/${encodeURIComponent(reference.policyId)}`
        : `/ops/policies/by-number/${encodeURIComponent(reference.policyNumber)}`;
    const requestId = randomUUID();
    let res: Response;
    try {
      res = await fetch(`${deps.policyUrl}${path}`, {
        headers: {
          accept: 'application/json',
          'x-request-id': requestId,
          ...signContext({ role: 'OPS', requestId, issuedAt: Date.now() }, deps.signingSecret),
        },
        signal: AbortSignal.timeout(deps.timeoutMs),
      });
    } catch (err) {
      throw unavailable(`the policy service did not answer (${(err as Error).message})`);
    }
    // 400: an id or number that cannot exist (its format is wrong), so no policy has it.
    if (res.status === 404 || res.status === 400) {
      await res.body?.cancel();
      return null;
    }
    if (!res.ok) {
      await res.body?.cancel();
      throw unavailable(`the policy service answered ${res.status}`);
    }
    const body = (await res.json().catch(() => undefined)) as { data?: unknown } | undefined;
    const parsed = opsPolicySchema.safeParse(body?.data);
    if (!parsed.success) throw unavailable('the policy service answered an unexpected policy shape');
    return parsed.data;
  };
}

function unavailable(reason: string): AppError {
  return new AppError(
    'SERVICE_UNAVAILABLE',
    `Policies cannot be read right now, try again shortly: ${reason}`,
  );
}
