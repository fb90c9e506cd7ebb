import { AppError } from '@parametric/http';
import type { Payload } from '@parametric/queue';
import type { TenantPolicyData } from '../repositories';
import type { DamageAssessmentDoc, PayoutSummaryDoc, PolicyDoc } from './model';

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
  const entry: DamageAssessmentDoc = {
    determinationId: summary.determinationId,
    revision: summary.revision,
    triggered: summary.triggered,
    damagePercentBp: summary.damagePercentBp,
    assessedAt: new Date(summary.assessedAt),
    issuedAt: new Date(summary.issuedAt),
    partnerSettlementStatus: summary.partnerSettlementStatus,
    dueAt: summary.dueAt === null ? null : new Date(summary.dueAt),
  };
  return keepNewest(tenant, summary.policyId, 'damageAssessments', 'determinationId', entry);
}

export type PayoutSummary = Extract<Payload<'policy-summaries'>, { kind: 'PAYOUT' }>;

/** Keeps the payout's summary on the policy (`payouts`, docs/api.md), at its highest revision. */
export async function recordPayout(
  tenant: Tenant,
  summary: Omit<PayoutSummary, 'kind' | 'organizationId'>,
): Promise<SummaryOutcome> {
  const entry: PayoutSummaryDoc = {
    payoutId: summary.payoutId,
    determinationId: summary.determinationId,
    revision: summary.revision,
    status: summary.status,
    amount: summary.amount,
    currency: summary.currency,
    mobileMoneyRef: summary.mobileMoneyRef,
    reason: summary.reason,
    updatedAt: new Date(summary.updatedAt),
  };
  return keepNewest(tenant, summary.policyId, 'payouts', 'payoutId', entry);
}

/** Either summary array, by the field that identifies its entries. */
type Kept =
  | { field: 'damageAssessments'; key: 'determinationId'; entry: DamageAssessmentDoc }
  | { field: 'payouts'; key: 'payoutId'; entry: PayoutSummaryDoc };

async function keepNewest<K extends Kept>(
  tenant: Tenant,
  policyId: string,
  field: K['field'],
  key: K['key'],
  entry: K['entry'],
): Promise<SummaryOutcome> {
  const id = (entry as Record<string, unknown>)[key] as string;
  const { revision } = entry;
  // Each round that changes nothing means another worker added an entry meanwhile, and entries
  // are never removed: the second round always decides. The third is a margin.
  for (let round = 0; round < 3; round++) {
    const newer = await tenant.policies.updateOne(
      { _id: policyId, [field]: { $elemMatch: { [key]: id, revision: { $lt: revision } } } },
      { $set: { [`${field}.$`]: entry } },
    );
    if (newer.matchedCount === 1) return 'replaced';
    const first = await tenant.policies.updateOne(
      { _id: policyId, [`${field}.${key}`]: { $ne: id } },
      { $push: { [field]: entry } },
    );
    if (first.matchedCount === 1) return 'recorded';
    const policy = await tenant.policies
      .findById(policyId)
      .select({ [field]: 1 })
      .lean<PolicyDoc>();
    if (!policy) throw AppError.notFound('Policy');
    const entries = (policy[field] ?? []) as { revision: number }[];
    const held = entries.find((e) => (e as Record<string, unknown>)[key] === id);
    if (held && held.revision >= revision) return 'stale';
  }
  throw new Error(`${field} ${id} r${revision}: the policy kept changing under the write`);
}

/** The policy read's `payouts`: newest first. */
export function payoutsView(entries: readonly PayoutSummaryDoc[] | undefined) {
  return [...(entries ?? [])]
    .sort((a, b) => b.updatedAt.getTime() - a.updatedAt.getTime() || a.payoutId.localeCompare(b.payoutId))
    .map((p) => ({
      payoutId: p.payoutId,
      determinationId: p.determinationId,
      status: p.status,
      amount: p.amount,
      currency: p.currency,
      mobileMoneyRef: p.mobileMoneyRef ?? null,
      reason: p.reason ?? null,
      updatedAt: p.updatedAt.toISOString(),
      links: { payout: `/payouts/${p.payoutId}` },
    }));
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
