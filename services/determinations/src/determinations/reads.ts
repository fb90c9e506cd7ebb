import type {
  determinationsQuery,
  opsDeterminationsQuery,
  payableDeterminationsQuery,
} from '@parametric/contracts';
import { AppError } from '@parametric/http';
import type { z } from 'zod';
import type { AllDeterminations, TenantDeterminations } from '../repositories';
import { type DeterminationDoc, type EvidenceDoc, PAYABLE } from './model';
import { determinationSummaryView, determinationView, evidenceView, opsDeterminationView } from './views';

type Tenant = Pick<TenantDeterminations, 'determinations' | 'evidence'>;

/** Partners see issued determinations only; an unattributed one belongs to no organization. */
async function loadIssued(tenant: Tenant, id: string): Promise<DeterminationDoc> {
  const d = await tenant.determinations.findOne({ _id: id, status: 'ISSUED' }).lean();
  if (!d) throw AppError.notFound('Determination');
  return d as unknown as DeterminationDoc;
}

export async function readDetermination(tenant: Tenant, id: string) {
  return determinationView(await loadIssued(tenant, id));
}

export async function readEvidence(tenant: Tenant, id: string) {
  const d = await loadIssued(tenant, id);
  const e = await tenant.evidence.findById(id).lean();
  if (!e) throw new Error(`determination ${id} has no evidence`);
  return evidenceView(d, e as unknown as EvidenceDoc);
}

/** The organization's determinations, newest first. */
export async function listDeterminations(tenant: Tenant, query: z.output<typeof determinationsQuery>) {
  const filter: Record<string, unknown> = { status: 'ISSUED' };
  if (query.policyId !== undefined) filter.policyId = query.policyId;
  if (query.triggered !== undefined) filter.triggered = query.triggered;
  if (query.partnerSettlementStatus !== undefined)
    filter.partnerSettlementStatus = query.partnerSettlementStatus;
  const [items, total] = await Promise.all([
    tenant.determinations
      .find(filter)
      .sort({ issuedAt: -1, _id: -1 })
      .skip((query.page - 1) * query.limit)
      .limit(query.limit)
      .lean(),
    tenant.determinations.countDocuments(filter),
  ]);
  return { items: (items as unknown as DeterminationDoc[]).map(determinationSummaryView), total };
}

/** Ops: every determination, attributed or not, newest received first. */
export async function listAllDeterminations(
  data: Pick<AllDeterminations, 'determinations'>,
  query: z.output<typeof opsDeterminationsQuery>,
) {
  const filter: Record<string, unknown> = {};
  if (query.status !== undefined) filter.status = query.status;
  if (query.organizationId !== undefined) filter.organizationId = query.organizationId;
  if (query.policyId !== undefined) filter.policyId = query.policyId;
  if (query.kind !== undefined) filter.kind = query.kind;
  const [items, total] = await Promise.all([
    data.determinations
      .find(filter)
      .sort({ receivedAt: -1, _id: -1 })
      .skip((query.page - 1) * query.limit)
      .limit(query.limit)
      .lean<DeterminationDoc[]>(),
    data.determinations.countDocuments(filter),
  ]);
  return { items: items.map(opsDeterminationView), total };
}

export async function readAnyDetermination(data: Pick<AllDeterminations, 'determinations'>, id: string) {
  const d = await data.determinations.findById(id).lean<DeterminationDoc>();
  if (!d) throw AppError.notFound('Determination');
  return opsDeterminationView(d);
}

/**
 * What a Tier 2 payout is owed for: issued, triggered, `DETERMINATION_AND_SETTLEMENT`, a non-zero
 * amount owed. The payments service's origination sweep pages through them oldest first (by
 * `issuedAt`, then id) and originates the payout of any that has none.
 */
export async function listPayableDeterminations(
  data: Pick<AllDeterminations, 'determinations'>,
  query: z.output<typeof payableDeterminationsQuery>,
) {
  const filter: Record<string, unknown> = { ...PAYABLE };
  const issuedAt: Record<string, Date> = {};
  if (query.issuedBefore !== undefined) issuedAt.$lt = new Date(query.issuedBefore);
  if (query.issuedFrom !== undefined) {
    const from = new Date(query.issuedFrom);
    if (query.afterId !== undefined) {
      filter.$or = [{ issuedAt: { $gt: from } }, { issuedAt: from, _id: { $gt: query.afterId } }];
    } else {
      issuedAt.$gte = from;
    }
  }
  if (Object.keys(issuedAt).length > 0) filter.issuedAt = issuedAt;
  const items = await data.determinations
    .find(filter)
    .sort({ issuedAt: 1, _id: 1 })
    .limit(query.limit)
    .lean<DeterminationDoc[]>();
  return items.map(opsDeterminationView);
}
