import { randomUUID } from 'node:crypto';
import { AppError, signContext } from '@parametric/http';
import { z } from 'zod';

/** What attribution needs to know of a policy, as the policy service's ops look-up returns it. */
export const policySnapshotSchema = z.object({
  id: z.uuid(),
  organizationId: z.uuid(),
  policyNumber: z.string().min(1),
  status: z.string(),
  productType: z.enum(['CROP', 'LIVESTOCK']),
  settlementMode: z.enum(['DETERMINATION', 'DETERMINATION_AND_SETTLEMENT']),
  currency: z.string().regex(/^[A-Z]{3}$/),
  exponent: z.number().int().min(0),
  sumInsuredMinor: z.string().regex(/^\d+$/),
  coverStartsAt: z.iso.datetime({ offset: true }).nullable(),
  coverEndsAt: z.iso.datetime({ offset: true }).nullable(),
});
export type PolicySnapshot = z.infer<typeof policySnapshotSchema>;

export type PolicyReference = { policyId: string } | { policyNumber: string };

/** Finds a policy of any organization; null when the policy service knows none. */
export type PolicyLookup = (reference: PolicyReference) => Promise<PolicySnapshot | null>;

/**
 * The policy service's ops look-up, over HTTP with a signed ops context (services trust only
 * contexts signed with the internal secret). A policy service that is down, slow or answers
 * nonsense is `503`: the ingestion is refused and can be retried, never marked unattributed.
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
    // 400: a policy number that cannot exist (its format is wrong), so no policy has it.
    if (res.status === 404 || res.status === 400) {
      await res.body?.cancel();
      return null;
    }
    if (!res.ok) {
      await res.body?.cancel();
      throw unavailable(`the policy service answered ${res.status}`);
    }
    const body = (await res.json().catch(() => undefined)) as { data?: unknown } | undefined;
    const parsed = policySnapshotSchema.safeParse(body?.data);
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
