import { randomUUID } from 'node:crypto';
import { createLogger } from '@parametric/logger';
import { createProducer, type Payload, type Producer, policySummaryJobId } from '@parametric/queue';
import { captureLogs, connectRedis, eventually } from '@parametric/test-harness';
import { Queue } from 'bullmq';
import {
  cropPurchase,
  type PolicyPlatform,
  type SellableOrg,
  sellableOrg,
  startPolicyPlatform,
} from './support';

type Summary = Extract<Payload<'policy-summaries'>, { kind: 'DAMAGE_ASSESSMENT' }>;

describe('damageAssessments on the policy read, from the policy-summaries queue', () => {
  const logs = captureLogs();
  const redis = connectRedis();
  let p: PolicyPlatform;
  let summaries: Producer<'policy-summaries'>;
  let inspect: Queue;

  beforeAll(async () => {
    p = await startPolicyPlatform(
      {},
      {},
      createLogger({ name: 'policy-test', level: 'info', destination: logs.destination }),
    );
    summaries = createProducer('policy-summaries', {
      connection: p.config.REDIS_URL,
      prefix: p.config.REDIS_PREFIX,
    });
    inspect = new Queue('policy-summaries', { connection: redis, prefix: p.config.REDIS_PREFIX });
  });
  afterAll(async () => {
    await Promise.all([summaries.close(), inspect.close()]);
    await p.stop();
    await redis.quit();
  });

  const buy = async (org: SellableOrg) => {
    const reply = await p.gateway.api('POST', '/policies/purchase', {
      key: org.apiKey,
      body: cropPurchase(org),
    });
    if (reply.status !== 201) throw new Error(`purchase failed: ${JSON.stringify(reply.body)}`);
    return reply.body.data.policy.id as string;
  };
  const summary = (organizationId: string, policyId: string, overrides: Partial<Summary> = {}): Summary => ({
    kind: 'DAMAGE_ASSESSMENT',
    policyId,
    organizationId,
    determinationId: randomUUID(),
    revision: 1,
    triggered: true,
    damagePercentBp: 4200,
    assessedAt: '2026-12-01T00:00:00.000Z',
    issuedAt: '2026-12-03T09:30:00.000Z',
    partnerSettlementStatus: 'PENDING',
    dueAt: '2027-01-02T09:30:00.000Z',
    ...overrides,
  });
  /** Enqueues as the determinations service does (one job id per revision) and waits for its end. */
  const deliver = async (s: Payload<'policy-summaries'>, jobId = policySummaryJobId(s)) => {
    const job = await summaries.add(s, { jobId });
    return eventually(async () => {
      const state = await inspect.getJobState(job.id as string);
      expect(['completed', 'failed']).toContain(state);
      const finished = await inspect.getJob(job.id as string);
      if (!finished) throw new Error(`job ${job.id} is gone`);
      return finished;
    });
  };
  const read = (org: SellableOrg, policyId: string) =>
    p.gateway.api('GET', `/policies/${policyId}`, { key: org.apiKey });

  it('shows each payout once, at its highest revision, whatever order the payments service’s summaries come in', async () => {
    const org = await sellableOrg(p);
    const policyId = await buy(org);
    const payoutId = randomUUID();
    const base = {
      kind: 'PAYOUT' as const,
      policyId,
      organizationId: org.id,
      determinationId: randomUUID(),
      payoutId,
      amount: '12500.00',
      currency: 'KES',
      reason: null,
    };
    const completed = {
      ...base,
      revision: 3,
      status: 'COMPLETED' as const,
      mobileMoneyRef: 'SGK7ABCDE1',
      updatedAt: '2026-12-04T10:00:00.000Z',
    };
    const processing = {
      ...base,
      revision: 2,
      status: 'PROCESSING' as const,
      mobileMoneyRef: null,
      updatedAt: '2026-12-04T09:59:00.000Z',
    };
    await deliver({ ...completed, determinationId: base.determinationId }, `payout-${payoutId}-3`);
    await deliver(processing, `payout-${payoutId}-2`);
    const reply = await read(org, policyId);
    expect(reply.body.data.payouts).toEqual([
      {
        payoutId,
        determinationId: base.determinationId,
        status: 'COMPLETED',
        amount: '12500.00',
        currency: 'KES',
        mobileMoneyRef: 'SGK7ABCDE1',
        reason: null,
        updatedAt: '2026-12-04T10:00:00.000Z',
        links: { payout: `/payouts/${payoutId}` },
      },
    ]);
  });

  it('shows each determination once, at its highest revision, newest assessment first, linking to it', async () => {
    const org = await sellableOrg(p);
    const policyId = await buy(org);
    const flooded = summary(org.id, policyId);
    const reported = { ...flooded, revision: 2, partnerSettlementStatus: 'REPORTED' as const };
    const calm = summary(org.id, policyId, {
      assessedAt: '2026-12-20T00:00:00.000Z',
      issuedAt: '2026-12-21T00:00:00.000Z',
      triggered: false,
      damagePercentBp: 0,
      partnerSettlementStatus: 'NOT_REQUIRED',
      dueAt: null,
    });

    // Revision 2 overtakes revision 1; revision 1 comes late; revision 2 comes again (re-sent
    // after its first job was cleaned up, so under another job id).
    expect(await (await deliver(reported)).getState()).toBe('completed');
    await deliver(flooded);
    await deliver(calm);
    await deliver(reported, `${policySummaryJobId(reported)}-resent`);

    const reply = await read(org, policyId);
    expect(reply.status).toBe(200);
    expect(reply.body.data.payouts).toEqual([]);
    expect(reply.body.data.damageAssessments).toEqual([
      {
        determinationId: calm.determinationId,
        triggered: false,
        damagePercentBp: 0,
        assessedAt: '2026-12-20T00:00:00.000Z',
        issuedAt: '2026-12-21T00:00:00.000Z',
        partnerSettlementStatus: 'NOT_REQUIRED',
        dueAt: null,
        links: { determination: `/determinations/${calm.determinationId}` },
      },
      {
        determinationId: flooded.determinationId,
        triggered: true,
        damagePercentBp: 4200,
        assessedAt: '2026-12-01T00:00:00.000Z',
        issuedAt: '2026-12-03T09:30:00.000Z',
        partnerSettlementStatus: 'REPORTED',
        dueAt: '2027-01-02T09:30:00.000Z',
        links: { determination: `/determinations/${flooded.determinationId}` },
      },
    ]);
  });

  it("changes nothing when a summary names another organization's policy: the job fails at once and ops are told", async () => {
    const a = await sellableOrg(p);
    const b = await sellableOrg(p);
    const bPolicy = await buy(b);
    const before = (await read(b, bPolicy)).body;

    const crossing = await deliver(summary(a.id, bPolicy));
    const unknown = await deliver(summary(a.id, randomUUID()));
    for (const job of [crossing, unknown]) {
      expect(await job.getState()).toBe('failed');
      expect(job.attemptsMade).toBe(1);
      expect(job.failedReason).toMatch(/not found in organization/);
    }

    expect((await read(b, bPolicy)).body).toEqual(before);
    expect((await read(a, bPolicy)).status).toBe(404);
    const errors = logs.records().filter((r) => r.level === 50 && r.organizationId === a.id);
    expect(errors.map((r) => [r.msg, r.policyId])).toEqual(
      expect.arrayContaining([
        ['policy summary names no policy of its organization: needs ops attention', bPolicy],
        ['policy summary names no policy of its organization: needs ops attention', unknown.data.policyId],
      ]),
    );
    expect(errors).toHaveLength(2);
  });
});
