import { isoOrNull } from '@parametric/contracts';
import { exponentOf } from '@parametric/money';
import type { DeterminationDoc, EvidenceDoc } from './model';

export const determinationLinks = (id: string) => ({
  self: `/determinations/${id}`,
  evidence: `/determinations/${id}/evidence`,
  settlementReport: `/determinations/${id}/settlement-report`,
});

/** An issued determination's signed part, or an error: a partner view of anything else is a bug. */
function signedOf(d: DeterminationDoc) {
  if (d.status !== 'ISSUED' || !d.signed || !d.canonicalPayload || !d.issuedAt) {
    throw new Error(`determination ${d._id} is not issued`);
  }
  return d.signed;
}

/** The determination's fields exactly (docs/determinations.md), as `determination.delivered` carries them. */
export function deliveredEventData(d: DeterminationDoc) {
  const signed = signedOf(d);
  const { evidenceHash: _signedOnly, ...fields } = signed;
  const { settlementReport: _notInEvent, ...links } = determinationLinks(d._id);
  return { ...fields, canonicalHash: d.canonicalHash as string, links };
}

/** Where the determination stands with its partner's settlement report (docs/determinations.md). */
export function settlementStatusOf(d: DeterminationDoc) {
  const tier1 = d.settlementMode === 'DETERMINATION';
  return {
    partnerSettlementStatus: d.partnerSettlementStatus ?? (tier1 ? 'NOT_REQUIRED' : 'NOT_APPLICABLE'),
    dueAt: isoOrNull(d.dueAt),
    verifiedByMicrocrop: false as const,
    verificationStatus: tier1 ? ('UNVERIFIED' as const) : ('NOT_APPLICABLE' as const),
  };
}

/** A determination in the partner list. */
export function determinationSummaryView(d: DeterminationDoc) {
  const signed = signedOf(d);
  const { evidenceHash: _detail, ...fields } = signed;
  return {
    ...fields,
    canonicalHash: d.canonicalHash as string,
    links: determinationLinks(d._id),
    issuedAt: (d.issuedAt as Date).toISOString(),
    ...settlementStatusOf(d),
  };
}

/** The full read: every signed field, the signature and the exact signed bytes. */
export function determinationView(d: DeterminationDoc) {
  return {
    ...determinationSummaryView(d),
    evidenceHash: signedOf(d).evidenceHash,
    signature: d.signature as string,
    signatureAlgorithm: 'Ed25519' as const,
    kid: d.kid as string,
    canonicalPayload: d.canonicalPayload as string,
  };
}

export function evidenceView(d: DeterminationDoc, e: EvidenceDoc) {
  return {
    determinationId: d._id,
    evidenceHash: e.evidenceHash,
    evidence: e.evidence,
    links: { determination: `/determinations/${d._id}` },
  };
}

/** What ops read: the ingestion always, the partner's view once issued. */
export function opsDeterminationView(d: DeterminationDoc) {
  return { ...(d.status === 'ISSUED' ? determinationView(d) : {}), ...opsIngestionView(d) };
}

/**
 * The ingestion alone: what an item of a batch became, for a caller that asked for no more
 * (`Prefer: return=minimal`); the signed payload and its bytes are most of a full view.
 */
export function opsIngestionView(d: DeterminationDoc) {
  return {
    determinationId: d._id,
    status: d.status,
    unattributedReason: d.unattributedReason ?? null,
    idempotencyKey: d.idempotencyKey,
    organizationId: d.organizationId ?? null,
    receivedAt: d.receivedAt.toISOString(),
    policyId: d.policyId ?? null,
    policyNumber: d.policyNumber ?? null,
    kind: d.kind,
    methodologyVersion: d.methodologyVersion,
    triggered: d.triggered,
    damagePercentBp: d.damagePercentBp,
    assessedAt: d.assessedAt.toISOString(),
    owed: owedOf(d),
  };
}

/** What is owed in the policy's currency, Tier 2 included; null when it cannot be said. */
function owedOf(d: DeterminationDoc) {
  const exponent = d.currency ? exponentOf(d.currency) : undefined;
  if (d.status !== 'ISSUED' || !d.currency || d.owedMinor == null || exponent === undefined) return null;
  return { amountMinor: d.owedMinor, currency: d.currency, exponent };
}
