import { createHash, randomUUID } from 'node:crypto';
import {
  type DeterminationIngestInput,
  KIND_OF_PRODUCT,
  type sandboxDeterminationBody,
} from '@parametric/contracts';
import { AppError } from '@parametric/http';
import type { z } from 'zod';
import type { DeterminationDoc } from '../determinations/model';
import { type IngestDeps, ingestDetermination } from './domain';

export type SandboxDeterminationInput = z.output<typeof sandboxDeterminationBody>;

/** What the evidence of every test determination says it is. */
export const SANDBOX_EVIDENCE = {
  indexName: 'Sandbox test index',
  dataSource: 'sandbox',
  dataSourceVersion: '1',
  methodologyVersion: 'sandbox-test/1',
  notes: 'A sandbox test determination: asked for by the partner, not an assessment of any index',
} as const;

/**
 * A sandbox organization's test determination (issue 27; docs/api.md, "Sandbox"): an assessment
 * made up from the request for one of the organization's own policies, then ingested exactly as
 * the index pipeline's are (attribution, the amount owed from the cover, events, jobs), except
 * that it is signed with the sandbox keys and its report may fall due sooner (`dueInSeconds`).
 *
 * Refused before anything is written: a live organization (`404`, as if the route did not exist
 * for it), a deployment without sandbox keys (`404` too: there is no sandbox), another
 * organization's or an unknown policy (`404`), one not in force or a kind the policy does not take
 * (`400`: it would be kept UNATTRIBUTED and the partner would see nothing).
 */
export async function issueSandboxDetermination(
  caller: { organizationId: string; environment: 'live' | 'sandbox' },
  input: SandboxDeterminationInput,
  deps: IngestDeps,
): Promise<DeterminationDoc> {
  if (caller.environment !== 'sandbox') {
    throw new AppError(
      'NOT_FOUND',
      'Test determinations are for sandbox organizations only (register one with "environment": "sandbox")',
    );
  }
  if (!deps.sandboxKeys) {
    throw new AppError(
      'NOT_FOUND',
      'This deployment issues no sandbox determinations (no sandbox signing keys)',
    );
  }
  const [policy] = await deps.lookupPolicies({ policyIds: [input.policyId], policyNumbers: [] });
  if (!policy || policy.organizationId !== caller.organizationId) throw AppError.notFound('Policy');
  if (policy.status !== 'ACTIVE' && policy.status !== 'EXPIRED') {
    throw AppError.invalid(
      `The policy is ${policy.status}: only an ACTIVE or EXPIRED policy takes a determination`,
      [{ field: 'policyId', message: `is ${policy.status}, not ACTIVE or EXPIRED` }],
    );
  }
  const kind = KIND_OF_PRODUCT[policy.productType];
  if (input.kind !== undefined && input.kind !== kind) {
    throw AppError.invalid(`A ${policy.productType} policy takes ${kind} determinations`, [
      { field: 'kind', message: `must be ${kind} for this policy (or left out)` },
    ]);
  }
  const now = deps.now();
  // The observation period: the cover up to now, so attribution finds the policy in force.
  const coverStart = policy.coverStartsAt ?? now.toISOString();
  const coverEnd = policy.coverEndsAt ?? now.toISOString();
  const periodEnd = new Date(
    Math.max(Date.parse(coverStart), Math.min(Date.parse(coverEnd), now.getTime())),
  ).toISOString();
  const idempotencyKey = `sandbox-${randomUUID()}`;
  const assessment: DeterminationIngestInput = {
    idempotencyKey,
    policyId: policy.id,
    kind,
    methodologyVersion: SANDBOX_EVIDENCE.methodologyVersion,
    triggered: input.triggered,
    damagePercentBp: input.damagePercentBp,
    assessedAt: now.toISOString(),
    evidence: {
      indexName: SANDBOX_EVIDENCE.indexName,
      // Below the trigger when triggered, as a real index would be; thresholds are the test's.
      indexValue: input.triggered ? 0 : 1,
      triggerThreshold: 0.5,
      exitThreshold: 0,
      dataSource: SANDBOX_EVIDENCE.dataSource,
      dataSourceVersion: SANDBOX_EVIDENCE.dataSourceVersion,
      periodStart: coverStart,
      periodEnd,
      inputDataHashes: [
        { name: 'sandbox-request', sha256: createHash('sha256').update(idempotencyKey).digest('hex') },
      ],
      notes: SANDBOX_EVIDENCE.notes,
    },
  };
  // The policy is the caller's, so a sandbox one; the sandbox keys sign it even if it was sold
  // before policies recorded their environment (and so reads as live).
  const { determination } = await ingestDetermination(assessment, {
    ...deps,
    keys: deps.sandboxKeys,
    reportDueSeconds: input.dueInSeconds ?? deps.reportDueSeconds,
  });
  return determination;
}
