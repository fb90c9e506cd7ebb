import { AppError } from '@parametric/http';
import type { Payload } from '@parametric/queue';
import type { TenantPolicyData } from '../repositories';
import type { DamageAssessmentDoc, PolicyDoc } from './model';

type Tenant = Pick<TenantPolicyData, 'policies'>;

export type DamageAssessmentSummary = Extract<Payload<'policy-summaries'>, { kind: 'DAMAGE_ASSESSMENT' }>;

/** What a summary did: added a determination, replaced an older revision, or was older itself. */
export type SummaryOutcome = 'recorded' | 'replaced' | 'stale';

/**
 * Keeps the determination's summary on the policy, at its highest revision. Summaries may come
 * late, twice, out of order and concurrently (several workers), so every write is one
 * conditional update of the policy document, and the condition is what decides:
 *
 * 1. replace the entry of this determination if it holds a lower revision (`$elemMatch` picks
 *    the entry, positional `$` replaces exactly that one);
 * 2. otherwise add the entry if the policy has none for this determination (`$push`
 *    conditional on its absence, so two first deliveries cannot both add one);
 * 3. if neither matched, the entry holds this revision or a newer one (stale: nothing to do),
 *    unless another worker added a lower revision between 1 and 2: then go round again.
 *
 * The tenant binding scopes every write to the organization the summary names: another
 * organization's policy is not found, like an unknown one (404 AppError).
 */
export async function recordDamageAssessment(
  tenant: Tenant,
  summary: Omit<DamageAssessmentSummary, 'kind' | 'organizationId'>,
): Promise<SummaryOutcome> {
  const { policyId, determinationId, revision } = summary;
  const entry: DamageAssessmentDoc = {
    determinationId,
    revision,
    triggered: summary.triggered,
    damagePercentBp: summary.damagePercentBp,
    assessedAt: new Date(summary.assessedAt),
    issuedAt: new Date(summary.issuedAt),
    partnerSettlementStatus: summary.partnerSettlementStatus,
    dueAt: summary.dueAt === null ? null : new Date(summary.dueAt),
  };
  // Each round that changes nothing means another worker added an entry meanwhile, and entries
  // are never removed: the second round always decides. The third is a margin.
  for (let round = 0; round < 3; round++) {
    const newer = await tenant.policies.updateOne(
      { _id: policyId, damageAssessments: { $elemMatch: { determinationId, revision: { $lt: revision } } } },
      { $set: { 'damageAssessments.$': entry } },
    );
    if (newer.matchedCount === 1) return 'replaced';
    const first = await tenant.policies.updateOne(
      { _id: policyId, 'damageAssessments.determinationId': { $ne: determinationId } },
      { $push: { damageAssessments: entry } },
    );
    if (first.matchedCount === 1) return 'recorded';
    const policy = await tenant.policies
      .findById(policyId)
      .select({ damageAssessments: 1 })
      .lean<Pick<PolicyDoc, 'damageAssessments'>>();
    if (!policy) throw AppError.notFound('Policy');
    const held = policy.damageAssessments.find((d) => d.determinationId === determinationId);
    if (held && held.revision >= revision) return 'stale';
  }
  throw new Error(
    `damage assessment ${determinationId} r${revision}: the policy kept changing under the write`,
  );
}

/** The policy read's `damageAssessments`: newest assessment first, each linking to its determination. */
export function damageAssessmentsView(entries: readonly DamageAssessmentDoc[] | undefined) {
  return [...(entries ?? [])]
    .sort(
      (a, b) =>
        b.assessedAt.getTime() - a.assessedAt.getTime() ||
        b.issuedAt.getTime() - a.issuedAt.getTime() ||
        a.determinationId.localeCompare(b.determinationId),
    )
    .map((d) => ({
      determinationId: d.determinationId,
      triggered: d.triggered,
      damagePercentBp: d.damagePercentBp,
      assessedAt: d.assessedAt.toISOString(),
      issuedAt: d.issuedAt.toISOString(),
      partnerSettlementStatus: d.partnerSettlementStatus,
      dueAt: d.dueAt ? d.dueAt.toISOString() : null,
      links: { determination: `/determinations/${d.determinationId}` },
    }));
}
