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
  const { field, key, entry } = damageAssessmentEntry(summary);
  return keepNewest(tenant, summary.policyId, field, key, entry);
}

function damageAssessmentEntry(summary: Omit<DamageAssessmentSummary, 'kind' | 'organizationId'>): Kept {
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
  return { field: 'damageAssessments', key: 'determinationId', entry };
}

export type PayoutSummary = Extract<Payload<'policy-summaries'>, { kind: 'PAYOUT' }>;

/** Keeps the payout's summary on the policy (`payouts`, docs/api.md), at its highest revision. */
export async function recordPayout(
  tenant: Tenant,
  summary: Omit<PayoutSummary, 'kind' | 'organizationId'>,
): Promise<SummaryOutcome> {
  const { field, key, entry } = payoutEntry(summary);
  return keepNewest(tenant, summary.policyId, field, key, entry);
}

function payoutEntry(summary: Omit<PayoutSummary, 'kind' | 'organizationId'>): Kept {
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
  return { field: 'payouts', key: 'payoutId', entry };
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

export type PolicySummary = Payload<'policy-summaries'>;

/** The one write of the policies collection a batch of summaries needs (the driver's `bulkWrite`). */
export interface PolicyBulkWrites {
  bulkWrite(
    operations: Array<{ updateOne: { filter: Record<string, unknown>; update: Record<string, unknown> } }>,
    options: { ordered: false },
  ): Promise<{ matchedCount: number }>;
}

/** What became of one summary of a batch: its outcome, or why it could not be recorded. */
export type BatchResult = { ok: true; outcome: SummaryOutcome } | { ok: false; error: unknown };

/**
 * Records summaries taken together (the worker's jobs in hand), usually with one round trip for
 * all. A summary at revision 1 is almost always the first of its determination or payout: it
 * becomes the conditional `$push` of `keepNewest` (added only where the policy has no entry for
 * it). A later revision (a settlement report, a payout's next status) almost always follows the
 * entry its revision 1 left: it becomes the conditional replacement of `keepNewest` (only an
 * entry of a lower revision is replaced). Each kind goes in one unordered bulk write (the two in
 * parallel), each write scoped to the organization the summary names. When every write of a kind
 * matched, each of its summaries was recorded or replaced as guessed. Otherwise some summary of
 * that kind is a repeat, arrived out of order, or names no policy of its organization, and the
 * bulk result does not say which: each summary of that kind is then decided alone by
 * `keepNewest`, exactly as a single summary is (see `oneByOne` for how the entries the bulk write
 * wrote are told apart). A batch whose write fails outright (MongoDB unreachable) fails whole:
 * every summary is retried, and recording one again changes nothing.
 *
 * Within a batch, copies of one determination's (or payout's) summary count once: the highest
 * revision is written and the others are `stale` (or share its error).
 */
export async function recordSummaries(
  writes: PolicyBulkWrites,
  tenantOf: (organizationId: string) => Tenant,
  summaries: readonly PolicySummary[],
  now: Date = new Date(),
): Promise<BatchResult[]> {
  const items = summaries.map((summary) => {
    const kept = summary.kind === 'PAYOUT' ? payoutEntry(summary) : damageAssessmentEntry(summary);
    const id = (kept.entry as Record<string, unknown>)[kept.key] as string;
    return { summary, kept, id, slot: `${summary.organizationId} ${summary.policyId} ${kept.field} ${id}` };
  });
  type Item = (typeof items)[number];
  // One writer per determination (or payout) of a policy: the highest revision, the first of equals.
  const writer = new Map<string, Item>();
  for (const item of items) {
    const held = writer.get(item.slot);
    if (!held || held.kept.entry.revision < item.kept.entry.revision) writer.set(item.slot, item);
  }
  const unique = [...writer.values()];

  let unreachable: unknown;
  const writeTogether = async (group: Item[]): Promise<Map<Item, BatchResult> | undefined> => {
    try {
      const result = await writes.bulkWrite(group.map(conditionalWrite(now)), { ordered: false });
      if (result.matchedCount === group.length)
        return new Map(
          group.map((item) => [
            item,
            { ok: true, outcome: item.kept.entry.revision === 1 ? 'recorded' : 'replaced' },
          ]),
        );
      return await oneByOne(group, tenantOf, result.matchedCount);
    } catch (err) {
      // Per-document write errors: the other writes were applied; decide each alone. Anything
      // else (MongoDB unreachable): nothing is known, every summary of the batch fails (retried).
      const bulk = err as { writeErrors?: unknown; result?: { matchedCount?: number } } | null;
      if (bulk?.writeErrors === undefined) {
        unreachable = err;
        return undefined;
      }
      return oneByOne(group, tenantOf, bulk.result?.matchedCount ?? -1);
    }
  };
  const groups = await Promise.all(
    [
      unique.filter((item) => item.kept.entry.revision === 1),
      unique.filter((item) => item.kept.entry.revision !== 1),
    ]
      .filter((group) => group.length > 0)
      .map(writeTogether),
  );
  if (groups.some((group) => group === undefined))
    return items.map(() => ({ ok: false, error: unreachable }));
  const decided = new Map(groups.flatMap((group) => [...(group as Map<Item, BatchResult>)]));
  return items.map((item) => {
    const held = writer.get(item.slot) as Item;
    const result = decided.get(held) as BatchResult;
    if (held === item || !result.ok) return result;
    return { ok: true, outcome: 'stale' };
  });
}

/**
 * A summary's guessed write (see `recordSummaries`): revision 1 the conditional `$push` of
 * `keepNewest`, a later revision its conditional replacement; each scoped to the organization
 * the summary names.
 */
function conditionalWrite(now: Date) {
  return ({ summary, kept, id }: { summary: PolicySummary; kept: Kept; id: string }) => ({
    updateOne:
      kept.entry.revision === 1
        ? {
            filter: {
              _id: summary.policyId,
              organizationId: summary.organizationId,
              [`${kept.field}.${kept.key}`]: { $ne: id },
            },
            // What the model's timestamps add to every update made through it.
            update: { $push: { [kept.field]: kept.entry }, $set: { updatedAt: now } },
          }
        : {
            filter: {
              _id: summary.policyId,
              organizationId: summary.organizationId,
              [kept.field]: { $elemMatch: { [kept.key]: id, revision: { $lt: kept.entry.revision } } },
            },
            update: { $set: { [`${kept.field}.$`]: kept.entry, updatedAt: now } },
          },
  });
}

/**
 * Each summary decided alone, after a bulk write that wrote `pushed` of them. Those find their
 * own entry in place (`stale`); when no other summary is stale, the stale ones are exactly
 * those the bulk write wrote, and are reported as recorded. (When some are stale and others were
 * recorded, which is which is not known: all are reported stale. Only the log line differs.)
 */
async function oneByOne<I extends { summary: PolicySummary; kept: Kept }>(
  items: readonly I[],
  tenantOf: (organizationId: string) => Tenant,
  pushed: number,
): Promise<Map<I, BatchResult>> {
  const settled = await Promise.allSettled(
    items.map(({ summary, kept }) =>
      keepNewest(tenantOf(summary.organizationId), summary.policyId, kept.field, kept.key, kept.entry),
    ),
  );
  const stale = settled.filter((s) => s.status === 'fulfilled' && s.value === 'stale').length;
  const found: SummaryOutcome = stale === pushed ? 'recorded' : 'stale';
  return new Map(
    items.map((item, i): [I, BatchResult] => {
      const s = settled[i] as PromiseSettledResult<SummaryOutcome>;
      if (s.status === 'rejected') return [item, { ok: false, error: s.reason }];
      return [item, { ok: true, outcome: s.value === 'stale' ? found : s.value }];
    }),
  );
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
