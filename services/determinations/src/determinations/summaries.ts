import type { PartnerSettlementStatus } from '@parametric/contracts';
import { outboxJob, policySummaryJobId } from '@parametric/queue';

/**
 * The revision of a damage-assessment summary follows the settlement status, which only moves
 * forward (PENDING → OVERDUE → REPORTED, or straight to REPORTED): the policy service keeps the
 * highest, so late or repeated jobs never roll a policy's view back.
 */
const REVISION: Record<PartnerSettlementStatus, number> = {
  PENDING: 1,
  NOT_REQUIRED: 1,
  NOT_APPLICABLE: 1,
  OVERDUE: 2,
  REPORTED: 3,
};

interface Summarised {
  _id: string;
  organizationId?: string | null;
  policyId?: string | null;
  triggered: boolean;
  damagePercentBp: number;
  assessedAt: Date;
  issuedAt?: Date | null;
  partnerSettlementStatus?: PartnerSettlementStatus | null;
  dueAt?: Date | null;
}

/** The `policy-summaries` job telling the policy service what its read shows of a determination. */
export function damageSummaryJob(d: Summarised) {
  if (!d.organizationId || !d.policyId || !d.issuedAt || !d.partnerSettlementStatus) {
    throw new Error(`determination ${d._id} is not issued`);
  }
  const summary = {
    kind: 'DAMAGE_ASSESSMENT' as const,
    policyId: d.policyId,
    organizationId: d.organizationId,
    determinationId: d._id,
    revision: REVISION[d.partnerSettlementStatus],
    triggered: d.triggered,
    damagePercentBp: d.damagePercentBp,
    assessedAt: d.assessedAt.toISOString(),
    issuedAt: d.issuedAt.toISOString(),
    partnerSettlementStatus: d.partnerSettlementStatus,
    dueAt: d.dueAt ? d.dueAt.toISOString() : null,
  };
  return outboxJob('policy-summaries', summary, policySummaryJobId(summary));
}
