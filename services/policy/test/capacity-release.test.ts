import { randomUUID } from 'node:crypto';
import { createProducer, type Payload, type Producer, policySummaryJobId } from '@parametric/queue';
import { eventually } from '@parametric/test-harness';
import type { PolicyDoc } from '../src/policies/model';
import {
  cropPurchase,
  type PolicyPlatform,
  type SellableOrg,
  sellableOrg,
  startPolicyPlatform,
} from './support';

const DAY_MS = 86_400_000;

describe('capacity after cover, on the running platform', () => {
  let p: PolicyPlatform;
  let summaries: Producer<'policy-summaries'>;
  beforeAll(async () => {
    // Sweeps every 200 ms, and a claims window of one second.
    p = await startPolicyPlatform({ SWEEP_INTERVAL_MS: '200', CLAIMS_WINDOW_SECONDS: '1' });
    summaries = createProducer('policy-summaries', {
      connection: p.config.REDIS_URL,
      prefix: p.config.REDIS_PREFIX,
    });
  });
  afterAll(async () => {
    await summaries.close();
    await p.stop();
  });

  const activePolicy = async (org: SellableOrg) => {
    const bought = await p.gateway.api('POST', '/policies/purchase', {
      key: org.apiKey,
      body: cropPurchase(org, { sumInsured: 100_000, durationDays: 30 }),
    });
    const id = bought.body.data.policy.id as string;
    const activated = await p.gateway.api('PUT', `/policies/${id}/activate`, { key: org.apiKey, body: {} });
    if (activated.status !== 200) throw new Error(`activation failed: ${JSON.stringify(activated.body)}`);
    return id;
  };
  /** Time passes for the policy: its 30-day cover ended ten days ago. */
  const coverEndedLongAgo = (id: string) =>
    p.db.collection<PolicyDoc>('policies').updateOne(
      { _id: id },
      {
        $set: {
          coverStartsAt: new Date(Date.now() - 40 * DAY_MS),
          coverEndsAt: new Date(Date.now() - 10 * DAY_MS),
        },
      },
    );
  const reserved = async (orgId: string) =>
    (await p.gateway.ops('GET', `/organizations/${orgId}/underwriting`)).body.data.capacity.reserved;
  const opsView = async (id: string) => (await p.gateway.ops('GET', `/policies/${id}`)).body.data;
  const pendingReport = (org: SellableOrg, policyId: string): Payload<'policy-summaries'> => ({
    kind: 'DAMAGE_ASSESSMENT',
    policyId,
    organizationId: org.id,
    determinationId: randomUUID(),
    revision: 1,
    triggered: true,
    damagePercentBp: 5000,
    assessedAt: new Date(Date.now() - 20 * DAY_MS).toISOString(),
    issuedAt: new Date(Date.now() - 5 * DAY_MS).toISOString(),
    partnerSettlementStatus: 'PENDING',
    dueAt: new Date(Date.now() + 25 * DAY_MS).toISOString(),
  });

  it('expires the policy, then gives its sum insured back once the claims window is over, unless a report is awaited', async () => {
    const org = await sellableOrg(p);
    const [free, awaited] = [await activePolicy(org), await activePolicy(org)];
    expect(await reserved(org.id)).toBe('200000.00');

    // A Tier 1 report is awaited for one of them (recorded before its cover is over).
    const report = pendingReport(org, awaited);
    await summaries.add(report, { jobId: policySummaryJobId(report) });
    await eventually(async () => {
      const policy = (await p.gateway.api('GET', `/policies/${awaited}`, { key: org.apiKey })).body.data;
      expect(policy.damageAssessments).toHaveLength(1);
    });
    await coverEndedLongAgo(awaited);
    await eventually(async () => expect((await opsView(awaited)).status).toBe('EXPIRED'));
    // Only now does the other one's cover end: the sweep that releases it also looked at the
    // awaited one, expired and past its claims window.
    await coverEndedLongAgo(free);

    const released = await eventually(async () => {
      const view = await opsView(free);
      expect(view.capacityReleasedAt).not.toBeNull();
      return view;
    });
    expect(released).toMatchObject({ status: 'EXPIRED', expiredAt: expect.any(String) });
    expect(await reserved(org.id)).toBe('100000.00');
    expect(await opsView(awaited)).toMatchObject({ status: 'EXPIRED', capacityReleasedAt: null });

    // The partner reports: nothing is awaited any more, and the next sweep releases it.
    const reported = { ...report, revision: 2, partnerSettlementStatus: 'REPORTED' as const };
    await summaries.add(reported, { jobId: policySummaryJobId(reported) });
    await eventually(async () => expect((await opsView(awaited)).capacityReleasedAt).not.toBeNull());
    expect(await reserved(org.id)).toBe('0.00');
  });
});
