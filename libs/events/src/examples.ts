import { randomUUID } from 'node:crypto';
import type { EventData, EventName } from './catalog';

/**
 * One valid `data` per catalog event, shaped the way the owning service sends it: what a partner's
 * test event carries (`POST /organizations/me/webhook/test`, docs/webhooks.md, "Test events") and
 * what the catalog's tests check against the schemas. The organization is the caller's; every
 * other id is new and refers to nothing, and the policy number and references say TEST, so a
 * receiver that looks them up finds nothing rather than a real policy.
 */
export function exampleData(organizationId: string): { [N in EventName]: EventData<N> } {
  const determinationId = randomUUID();
  return {
    'policy.activated': {
      policyId: randomUUID(),
      onChainPolicyId: '42',
      policyNumber: 'TEST-POLICY-000000',
      farmerId: randomUUID(),
      sumInsured: 50000,
      txHash: `0x${'0'.repeat(64)}`,
    },
    'determination.delivered': {
      determinationId,
      policyId: randomUUID(),
      policyNumber: 'TEST-POLICY-000000',
      kind: 'CROP_DAMAGE',
      methodologyVersion: 'ndvi-v2',
      triggered: true,
      damagePercentBp: 3500,
      assessedAt: '2024-05-01T10:00:00.000Z',
      canonicalHash: 'a'.repeat(64),
      settlementMode: 'DETERMINATION',
      settledByMicrocrop: false,
      amountOwed: {
        amountMinor: '1750000',
        amount: '17500.00',
        currency: 'KES',
        exponent: 2,
        damagePercentBp: 3500,
        basis: 'sumInsured x damagePercentBp / 10000, truncated to the minor unit',
      },
      links: {
        self: `/determinations/${determinationId}`,
        evidence: `/determinations/${determinationId}/evidence`,
      },
    },
    'determination.settlement_report_recorded': {
      determinationId,
      policyId: randomUUID(),
      policyNumber: 'TEST-POLICY-000000',
      settlementMode: 'DETERMINATION',
      settledByMicrocrop: false,
      verifiedByMicrocrop: false,
      verificationStatus: 'UNVERIFIED',
      partnerSettlementStatus: 'REPORTED',
      report: {
        id: randomUUID(),
        partnerReference: 'TEST-REFERENCE',
        outcome: 'SETTLED_FULL',
        method: 'MOBILE_MONEY',
        settledAmountMinor: '1750000',
        settlementCurrency: 'KES',
        settledAt: '2024-05-03T08:00:00.000Z',
        reportedAt: '2024-05-03T09:00:00.000Z',
        supersedesReportId: null,
      },
      correction: false,
      links: {
        determination: `/determinations/${determinationId}`,
        settlementReport: `/determinations/${determinationId}/settlement-report`,
      },
      note: 'Partner-attested; not verified by the service.',
    },
    'determination.settlement_report_overdue': {
      determinationId,
      policyId: randomUUID(),
      policyNumber: 'TEST-POLICY-000000',
      settlementMode: 'DETERMINATION',
      settledByMicrocrop: false,
      partnerSettlementStatus: 'OVERDUE',
      dueAt: '2024-05-31T10:00:00.000Z',
      determinedAt: '2024-05-01T10:00:00.000Z',
      links: { determination: `/determinations/${determinationId}` },
      note: 'No settlement report was received by the due date.',
    },
    'payout.completed': {
      payoutId: randomUUID(),
      policyId: randomUUID(),
      amountUSDC: '135.461538',
      amountKES: '17500.00',
      mobileMoneyRef: 'TESTREF000',
    },
    'payout.failed': {
      payoutId: randomUUID(),
      policyId: randomUUID(),
      amountUSDC: '135.461538',
      reason: 'MOBILE_MONEY_REJECTED',
    },
    'kyb.verified': { organizationId, kybStatus: 'VERIFIED' },
    'kyb.rejected': {
      organizationId,
      kybStatus: 'REJECTED',
      notes: 'Test event: no KYB decision was made',
    },
  };
}
