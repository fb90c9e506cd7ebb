import { randomUUID } from 'node:crypto';
import type { PolicyDoc } from '../../src/policies/model';
import { purchasePolicy } from '../../src/policies/purchase';
import { readPolicy } from '../../src/policies/reads';
import {
  type DamageAssessmentSummary,
  recordDamageAssessment,
  recordSummaries,
} from '../../src/policies/summaries';
import { cropBody, type DomainDb, domainDb, KE_VERIFIED, outcome, sellable, T0 } from './fixtures';

type Summary = Omit<DamageAssessmentSummary, 'kind' | 'organizationId'>;

describe('damage assessment summaries (domain)', () => {
  let db: DomainDb;
  beforeAll(async () => {
    db = await domainDb('policy_summaries');
  });
  afterAll(async () => {
    await db.close();
  });

  const buy = async () => {
    const org = await sellable(db);
    const { policy } = await purchasePolicy(org.tenant, KE_VERIFIED, cropBody(org), T0);
    return { tenant: org.tenant, policyId: policy.id };
  };
  const summary = (policyId: string, overrides: Partial<Summary> = {}): Summary => ({
    policyId,
    determinationId: randomUUID(),
    revision: 1,
    triggered: true,
    damagePercentBp: 2500,
    assessedAt: '2026-12-01T00:00:00.000Z',
    issuedAt: '2026-12-02T08:00:00.000Z',
    partnerSettlementStatus: 'PENDING',
    dueAt: '2027-01-01T08:00:00.000Z',
    ...overrides,
  });
  const stored = async (tenant: Awaited<ReturnType<typeof buy>>['tenant'], policyId: string) =>
    (await tenant.policies.findById(policyId).lean<PolicyDoc>())?.damageAssessments;

  it('keeps one entry per determination at its highest revision, whatever order and however often revisions come', async () => {
    const { tenant, policyId } = await buy();
    const first = summary(policyId);
    const reported = { ...first, revision: 2, partnerSettlementStatus: 'REPORTED' as const };
    const overdue = { ...first, revision: 3, partnerSettlementStatus: 'OVERDUE' as const };

    expect(await recordDamageAssessment(tenant, reported)).toBe('recorded');
    expect(await recordDamageAssessment(tenant, reported)).toBe('stale'); // twice
    expect(await recordDamageAssessment(tenant, first)).toBe('stale'); // late
    expect(await stored(tenant, policyId)).toEqual([
      expect.objectContaining({
        determinationId: first.determinationId,
        revision: 2,
        partnerSettlementStatus: 'REPORTED',
      }),
    ]);
    expect(await recordDamageAssessment(tenant, overdue)).toBe('replaced');
    expect(await recordDamageAssessment(tenant, reported)).toBe('stale');
    expect(await stored(tenant, policyId)).toEqual([
      {
        determinationId: first.determinationId,
        revision: 3,
        triggered: true,
        damagePercentBp: 2500,
        assessedAt: new Date('2026-12-01T00:00:00.000Z'),
        issuedAt: new Date('2026-12-02T08:00:00.000Z'),
        partnerSettlementStatus: 'OVERDUE',
        dueAt: new Date('2027-01-01T08:00:00.000Z'),
      },
    ]);
  });

  it('ends at the highest revision when revisions of several determinations arrive concurrently, in any order', async () => {
    const { tenant, policyId } = await buy();
    const determinations = [summary(policyId), summary(policyId), summary(policyId)];
    const all = determinations.flatMap((d) =>
      [1, 2, 3, 4].map((revision) => ({ ...d, revision, damagePercentBp: revision * 100 })),
    );
    // Every revision twice, newest first then odd and even positions, all started at once.
    const jobs = [
      ...[...all].reverse(),
      ...all.filter((_, i) => i % 2 === 1),
      ...all.filter((_, i) => i % 2 === 0),
    ];
    const outcomes = await Promise.all(jobs.map((s) => recordDamageAssessment(tenant, s)));

    const entries = await stored(tenant, policyId);
    expect(entries?.map((e) => [e.determinationId, e.revision, e.damagePercentBp]).sort()).toEqual(
      determinations.map((d) => [d.determinationId, 4, 400]).sort(),
    );
    expect(outcomes.filter((o) => o === 'recorded')).toHaveLength(3);
  });

  it("changes nothing on another organization's policy, and says it is not found, as for an unknown one", async () => {
    const a = await buy();
    const b = await buy();
    const before = await b.tenant.policies.findById(b.policyId).lean<PolicyDoc>();
    // Bound to A (the organization the job names), naming B's policy.
    expect(await outcome(recordDamageAssessment(a.tenant, summary(b.policyId)))).toMatchObject({
      code: 'NOT_FOUND',
    });
    expect(await outcome(recordDamageAssessment(a.tenant, summary(randomUUID())))).toMatchObject({
      code: 'NOT_FOUND',
    });
    expect(await b.tenant.policies.findById(b.policyId).lean<PolicyDoc>()).toEqual(before);
  });

  describe('written together (the worker batches the jobs in hand)', () => {
    const batch = (summaries: DamageAssessmentSummary[]) =>
      recordSummaries(
        db.repositories.acrossOrganizations().policies.collection as never,
        db.repositories.forOrganization,
        summaries,
      );
    const of = (org: { tenant: { organizationId: string } }, s: Summary): DamageAssessmentSummary => ({
      kind: 'DAMAGE_ASSESSMENT',
      organizationId: org.tenant.organizationId,
      ...s,
    });

    it('stores what one summary at a time stores, and the policy shows it was updated', async () => {
      const alone = await buy();
      const together = await buy();
      const other = await buy();
      const s = summary(alone.policyId);
      await recordDamageAssessment(alone.tenant, s);
      const before = await together.tenant.policies.findById(together.policyId).lean<PolicyDoc>();

      const second = summary(other.policyId);
      const results = await batch([
        of(together, { ...s, policyId: together.policyId }),
        of(other, second),
        of(other, summary(other.policyId)),
      ]);

      expect(results).toEqual([1, 2, 3].map(() => ({ ok: true, outcome: 'recorded' })));
      expect(await stored(together.tenant, together.policyId)).toEqual(
        await stored(alone.tenant, alone.policyId),
      );
      expect(await stored(other.tenant, other.policyId)).toHaveLength(2);
      const after = await together.tenant.policies.findById(together.policyId).lean<PolicyDoc>();
      expect(after?.updatedAt.getTime()).toBeGreaterThan(before?.updatedAt.getTime() as number);
    });

    it('keeps the highest revision whatever the batch holds: newer revisions, repeats, copies of one determination', async () => {
      const { tenant, policyId } = await buy();
      const org = { tenant };
      const first = summary(policyId);
      const later = summary(policyId);
      await recordDamageAssessment(tenant, first);
      await recordDamageAssessment(tenant, { ...later, revision: 3 });

      const fresh = summary(policyId);
      const results = await batch([
        of(org, { ...first, revision: 2, partnerSettlementStatus: 'REPORTED' }), // newer
        of(org, { ...later, revision: 2 }), // older than held
        of(org, { ...fresh, revision: 1 }), // two copies of one new determination
        of(org, { ...fresh, revision: 2, damagePercentBp: 4000 }),
      ]);

      // (Outcomes are only logged. The older revision makes the batch decide each summary alone,
      // after the bulk write already replaced `first`'s entry: beside a stale summary, what the
      // bulk write did reads as either; the entries below are what counts.)
      expect(results).toEqual([
        { ok: true, outcome: expect.stringMatching(/^(replaced|stale)$/) },
        { ok: true, outcome: 'stale' },
        { ok: true, outcome: 'stale' },
        { ok: true, outcome: expect.stringMatching(/^(recorded|stale)$/) },
      ]);
      const entries = await stored(tenant, policyId);
      expect(entries?.map((e) => [e.determinationId, e.revision]).sort()).toEqual(
        [
          [first.determinationId, 2],
          [later.determinationId, 3],
          [fresh.determinationId, 2],
        ].sort(),
      );
      expect(entries?.find((e) => e.determinationId === fresh.determinationId)?.damagePercentBp).toBe(4000);
    });

    it('writes a batch of first summaries and later revisions of recorded ones in one bulk write per kind, none alone', async () => {
      const { tenant, policyId } = await buy();
      const org = { tenant };
      const held = [summary(policyId), summary(policyId)];
      for (const s of held) await recordDamageAssessment(tenant, s);
      const fresh = summary(policyId);
      const writes = db.repositories.acrossOrganizations().policies.collection;
      let bulkWrites = 0;
      let alone = 0;

      const results = await recordSummaries(
        {
          bulkWrite: (operations, options) => {
            bulkWrites++;
            return writes.bulkWrite(operations as never, options);
          },
        },
        (organizationId) => {
          alone++;
          return db.repositories.forOrganization(organizationId);
        },
        [
          of(org, { ...(held[0] as Summary), revision: 3, partnerSettlementStatus: 'REPORTED' }),
          of(org, fresh),
          of(org, { ...(held[1] as Summary), revision: 2, partnerSettlementStatus: 'OVERDUE' }),
        ],
      );

      expect(results).toEqual([
        { ok: true, outcome: 'replaced' },
        { ok: true, outcome: 'recorded' },
        { ok: true, outcome: 'replaced' },
      ]);
      expect({ bulkWrites, alone }).toEqual({ bulkWrites: 2, alone: 0 });
      const entries = await stored(tenant, policyId);
      expect(entries?.map((e) => [e.determinationId, e.revision, e.partnerSettlementStatus]).sort()).toEqual(
        [
          [held[0]?.determinationId, 3, 'REPORTED'],
          [held[1]?.determinationId, 2, 'OVERDUE'],
          [fresh.determinationId, 1, 'PENDING'],
        ].sort(),
      );
    });

    it('records a later revision that arrives before its first, deciding only it alone', async () => {
      const { tenant, policyId } = await buy();
      const early = summary(policyId);
      const firsts = [summary(policyId), summary(policyId)];
      const alone: string[] = [];
      const results = await recordSummaries(
        db.repositories.acrossOrganizations().policies.collection as never,
        (organizationId) => {
          alone.push(organizationId);
          return db.repositories.forOrganization(organizationId);
        },
        [
          of({ tenant }, firsts[0] as Summary),
          of({ tenant }, { ...early, revision: 3, partnerSettlementStatus: 'REPORTED' }),
          of({ tenant }, firsts[1] as Summary),
        ],
      );
      expect(results).toEqual([
        { ok: true, outcome: 'recorded' },
        { ok: true, outcome: 'recorded' },
        { ok: true, outcome: 'recorded' },
      ]);
      // Only the early revision was decided alone; the firsts' bulk write matched.
      expect(alone).toHaveLength(1);
      expect((await stored(tenant, policyId))?.map((e) => [e.determinationId, e.revision]).sort()).toEqual(
        [
          [firsts[0]?.determinationId, 1],
          [early.determinationId, 3],
          [firsts[1]?.determinationId, 1],
        ].sort(),
      );
    });

    it("fails only the summaries naming no policy of their organization, changing nothing on another organization's", async () => {
      const a = await buy();
      const b = await buy();
      const before = await b.tenant.policies.findById(b.policyId).lean<PolicyDoc>();
      const mine = summary(a.policyId);

      const results = await batch([
        of(a, summary(b.policyId)), // B's policy, named by a job of A
        of(a, mine),
        of(a, summary(randomUUID())),
      ]);

      expect(results[0]).toMatchObject({ ok: false, error: { code: 'NOT_FOUND' } });
      expect(results[1]).toEqual({ ok: true, outcome: 'recorded' });
      expect(results[2]).toMatchObject({ ok: false, error: { code: 'NOT_FOUND' } });
      expect(await b.tenant.policies.findById(b.policyId).lean<PolicyDoc>()).toEqual(before);
      expect((await stored(a.tenant, a.policyId))?.map((e) => e.determinationId)).toEqual([
        mine.determinationId,
      ]);
    });
  });

  it('shows partners the newest assessment first, each linking to its determination, without the revision', async () => {
    const { tenant, policyId } = await buy();
    const older = summary(policyId, {
      assessedAt: '2026-12-01T00:00:00.000Z',
      triggered: false,
      damagePercentBp: 0,
      partnerSettlementStatus: 'NOT_REQUIRED',
      dueAt: null,
    });
    const newer = summary(policyId, { assessedAt: '2027-02-01T00:00:00.000Z', revision: 2 });
    await recordDamageAssessment(tenant, older);
    await recordDamageAssessment(tenant, newer);

    const view = await readPolicy(tenant, policyId, T0);
    expect(view.payouts).toEqual([]);
    expect(view.damageAssessments).toEqual([
      {
        determinationId: newer.determinationId,
        triggered: true,
        damagePercentBp: 2500,
        assessedAt: '2027-02-01T00:00:00.000Z',
        issuedAt: '2026-12-02T08:00:00.000Z',
        partnerSettlementStatus: 'PENDING',
        dueAt: '2027-01-01T08:00:00.000Z',
        links: { determination: `/determinations/${newer.determinationId}` },
      },
      {
        determinationId: older.determinationId,
        triggered: false,
        damagePercentBp: 0,
        assessedAt: '2026-12-01T00:00:00.000Z',
        issuedAt: '2026-12-02T08:00:00.000Z',
        partnerSettlementStatus: 'NOT_REQUIRED',
        dueAt: null,
        links: { determination: `/determinations/${older.determinationId}` },
      },
    ]);
  });
});
