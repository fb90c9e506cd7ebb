import { randomUUID } from 'node:crypto';
import { connectMongoose, type MongooseHandle } from '@parametric/test-harness';
import type { DeterminationDoc } from '../../src/determinations/model';
import { type IngestDeps, ingestDetermination } from '../../src/ingestion/domain';
import type { PolicySnapshot } from '../../src/ingestion/policies';
import { markOverdue } from '../../src/overdue/sweep';
import { recordSettlementReport } from '../../src/reports/domain';
import { reportStoreOf } from '../../src/reports/store';
import { determinationRepositories } from '../../src/repositories';
import { generateSigningKeyPem, loadSigningKeys } from '../../src/signing/keys';
import { policySnapshot } from '../domain/fixtures';
import { assessment } from '../support';

const DAY = 86_400_000;
const T0 = new Date('2026-11-01T08:00:00.000Z');

let mongo: MongooseHandle;
let repositories: ReturnType<typeof determinationRepositories>;

beforeAll(async () => {
  mongo = await connectMongoose('determinations-overdue');
  repositories = determinationRepositories(mongo.connection);
  await repositories.init();
});

afterAll(async () => {
  await mongo.close();
});

const policyOf = (
  organizationId: string,
  settlementMode: PolicySnapshot['settlementMode'] = 'DETERMINATION',
) =>
  policySnapshot({
    organizationId,
    settlementMode,
    policyNumber: `KE-202611-${randomUUID().slice(0, 6).toUpperCase()}`,
    coverStartsAt: new Date(T0.getTime() - 30 * DAY).toISOString(),
    coverEndsAt: new Date(T0.getTime() + 150 * DAY).toISOString(),
  });

/** Issues a determination at T0 for a fresh policy of `organizationId`. */
async function issueAt(
  organizationId: string,
  overrides: Record<string, unknown> = {},
  settlementMode: PolicySnapshot['settlementMode'] = 'DETERMINATION',
) {
  const policy = policyOf(organizationId, settlementMode);
  const deps: IngestDeps = {
    data: repositories.acrossOrganizations(),
    lookupPolicies: async () => [policy],
    keys: loadSigningKeys(generateSigningKeyPem()),
    reportDueSeconds: 30 * 86_400,
    now: () => T0,
  };
  const body = assessment(
    { policyId: policy.id },
    { assessedAt: new Date(T0.getTime() - 3_600_000).toISOString(), ...overrides },
  );
  const evidence = {
    ...body.evidence,
    periodStart: new Date(T0.getTime() - 10 * DAY).toISOString(),
    periodEnd: T0.toISOString(),
  };
  const { determination } = await ingestDetermination({ ...body, evidence } as never, deps);
  return determination;
}

const overdueEventsOf = async (id: string) => {
  const d = await repositories.acrossOrganizations().determinations.findById(id).lean<DeterminationDoc>();
  return (d?.outbox ?? []).filter((e) => e.event === 'determination.settlement_report_overdue');
};

describe('the overdue sweep (domain, time injected)', () => {
  it('marks nothing before the due date, and a determination once at it', async () => {
    const org = randomUUID();
    const d = await issueAt(org);
    expect(d.dueAt?.toISOString()).toBe(new Date(T0.getTime() + 30 * DAY).toISOString());
    const data = repositories.acrossOrganizations();
    expect(await markOverdue(data, new Date(T0.getTime() + 30 * DAY - 1))).toBe(0);
    expect(await markOverdue(data, new Date(T0.getTime() + 30 * DAY))).toBe(1);
    expect(await markOverdue(data, new Date(T0.getTime() + 31 * DAY))).toBe(0);
    const events = await overdueEventsOf(d._id);
    expect(events).toHaveLength(1);
    expect(events[0]?.data).toMatchObject({ determinationId: d._id, partnerSettlementStatus: 'OVERDUE' });
  });

  it('emits once when two sweepers run at the same time', async () => {
    const org = randomUUID();
    const ds = await Promise.all(Array.from({ length: 5 }, () => issueAt(org)));
    const due = new Date(T0.getTime() + 40 * DAY);
    const data = repositories.acrossOrganizations();
    const [a, b] = await Promise.all([markOverdue(data, due), markOverdue(data, due)]);
    expect(a + b).toBe(5);
    for (const d of ds) expect(await overdueEventsOf(d._id)).toHaveLength(1);
  });

  it('leaves reported, untriggered and Tier 2 determinations alone', async () => {
    const org = randomUUID();
    const reported = await issueAt(org);
    await recordSettlementReport(
      reportStoreOf(repositories.forOrganization(org)),
      reported._id,
      {
        partnerReference: 'R-1',
        outcome: 'SETTLED_FULL',
        method: 'CASH',
        settledAmountMinor: '1250000',
        settlementCurrency: 'KES',
        settledAt: T0.toISOString(),
      },
      T0,
    );
    const untriggered = await issueAt(org, { triggered: false, damagePercentBp: 0 });
    expect(untriggered.partnerSettlementStatus).toBe('NOT_REQUIRED');
    const tier2 = await issueAt(org, {}, 'DETERMINATION_AND_SETTLEMENT');
    expect(tier2.partnerSettlementStatus).toBe('NOT_APPLICABLE');
    await markOverdue(repositories.acrossOrganizations(), new Date(T0.getTime() + 60 * DAY));
    expect(await overdueEventsOf(reported._id)).toHaveLength(0);
    expect(await overdueEventsOf(untriggered._id)).toHaveLength(0);
    expect(await overdueEventsOf(tier2._id)).toHaveLength(0);
    const stored = await repositories
      .acrossOrganizations()
      .determinations.findById(reported._id)
      .lean<DeterminationDoc>();
    expect(stored?.partnerSettlementStatus).toBe('REPORTED');
  });
});
