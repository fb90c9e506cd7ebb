import { verifyDetermination } from '@parametric/determination-verify';
import { payoutOriginationJobId } from '@parametric/queue';
import { eventually } from '@parametric/test-harness';
import type { ReceivedDelivery } from '@parametric/webhook-receiver';
import { Queue } from 'bullmq';
import {
  activeCropPolicy,
  activeTier2CropPolicy,
  assessment,
  type DeterminationsPlatform,
  startDeterminationsPlatform,
} from './support';

let p: DeterminationsPlatform;
let payouts: Queue;

beforeAll(async () => {
  p = await startDeterminationsPlatform();
  payouts = new Queue('payout-originations', {
    connection: { url: p.config.REDIS_URL },
    prefix: p.config.REDIS_PREFIX,
  });
}, 120_000);

afterAll(async () => {
  await payouts?.close();
  await p?.stop();
});

const deliveredId = (d: ReceivedDelivery) =>
  d.verified && d.event === 'determination.delivered'
    ? (d.body as { data: { determinationId: string } }).data.determinationId
    : undefined;

describe('the amount owed is capped by the policy’s cover', () => {
  it('gives 10 parallel 6,000 bp determinations on a 20,000 KES policy exactly 20,000.00 KES between them, each signed and delivered', async () => {
    const policy = await activeCropPolicy(p, { sumInsured: 20_000 });
    await p.connectWebhook(policy.org.apiKey);
    const bodies = Array.from({ length: 10 }, () =>
      assessment({ policyId: policy.policyId }, { damagePercentBp: 6_000 }),
    );
    const replies = await Promise.all(
      bodies.map((body) => p.gateway.ops('POST', '/determinations', { body })),
    );
    expect(replies.map((r) => r.status)).toEqual(Array(10).fill(201));
    const ids: string[] = replies.map((r) => r.body.data.determination.determinationId);

    const jwks = (await p.gateway.api('GET', '/.well-known/jwks.json')).body;
    const records = await Promise.all(
      ids.map(async (id) => {
        const read = await p.gateway.api('GET', `/determinations/${id}`, { key: policy.org.apiKey });
        expect(read.status).toBe(200);
        // Signed with the capped amount, and verifiable by the partner with the published keys.
        expect(verifyDetermination(read.body.data, jwks)).toEqual({
          valid: true,
          kid: read.body.data.kid,
          sandbox: false,
        });
        return read.body.data;
      }),
    );
    const total = records.reduce((sum, r) => sum + BigInt(r.amountOwed.amountMinor), 0n);
    expect(total).toBe(2_000_000n);

    const full = records.filter((r) => r.amountOwed.amountMinor === '1200000');
    const partial = records.filter((r) => r.amountOwed.amountMinor === '800000');
    const exhausted = records.filter((r) => r.amountOwed.amountMinor === '0');
    expect([full.length, partial.length, exhausted.length]).toEqual([1, 1, 8]);
    // The first keeps the formula's wording; the others say why they owe less.
    expect(full[0].amountOwed.basis).toBe(
      'sumInsured 20000.00 KES × 6000 bp / 10000 = 12000.00 KES, truncated toward zero to the minor unit (0.01 KES)',
    );
    expect(partial[0].amountOwed).toMatchObject({ amount: '8000.00', damagePercentBp: 6_000 });
    expect(partial[0].amountOwed.basis).toContain(
      'capped at the remaining cover of 8000.00 KES (sum insured 20000.00 KES less 12000.00 KES owed by earlier determinations of this policy)',
    );
    expect(partial[0]).toMatchObject({ partnerSettlementStatus: 'PENDING' });
    for (const r of exhausted) {
      expect(r.amountOwed).toMatchObject({ amountMinor: '0', amount: '0.00', currency: 'KES', exponent: 2 });
      expect(r.amountOwed.basis).toContain('capped at the remaining cover of 0.00 KES');
      // Nothing owed, so no settlement report is expected of the partner.
      expect(r).toMatchObject({ triggered: true, partnerSettlementStatus: 'NOT_REQUIRED', dueAt: null });
    }

    // Every one of them, the exhausted ones included, reaches the partner as determination.delivered.
    await eventually(
      async () => {
        const delivered = new Set(p.receiver.received.map(deliveredId));
        expect(ids.filter((id) => !delivered.has(id))).toEqual([]);
      },
      { timeout: 20_000, message: 'determination.delivered for all ten' },
    );

    // Every ingestion again (same keys): the stored records, the cover untouched.
    const again = await Promise.all(bodies.map((body) => p.gateway.ops('POST', '/determinations', { body })));
    expect(again.map((r) => r.status)).toEqual(Array(10).fill(200));
    expect(again.map((r) => r.body.data.determination.determinationId)).toEqual(ids);
    const cover = await p.db.collection('policy_covers').findOne({ _id: policy.policyId } as never);
    expect(cover).toMatchObject({ sumInsuredMinor: '2000000', owedMinor: '2000000', seq: 2 });
  });

  it('originates one Tier 2 payout of the sum insured for two 100 % determinations; the second owes 0 and originates nothing', async () => {
    const tier2 = await activeTier2CropPolicy(p, 20_000);
    const first = await p.gateway.ops('POST', '/determinations', {
      body: assessment({ policyId: tier2.policyId }, { damagePercentBp: 10_000 }),
    });
    const second = await p.gateway.ops('POST', '/determinations', {
      body: assessment({ policyId: tier2.policyId }, { damagePercentBp: 10_000 }),
    });
    expect([first.status, second.status]).toEqual([201, 201]);
    const [firstId, secondId] = [first, second].map((r) => r.body.data.determination.determinationId);
    await p.determinations.drainOutbox();
    const job = await eventually(
      async () => {
        const j = await payouts.getJob(payoutOriginationJobId(firstId));
        expect(j).toBeDefined();
        return j;
      },
      { message: 'the payout job' },
    );
    expect(job?.data).toEqual({
      determinationId: firstId,
      policyId: tier2.policyId,
      organizationId: tier2.org.id,
    });
    // What the payout reads of each (the ops view): the whole cover, then nothing.
    const owed = async (id: string) => (await p.gateway.ops('GET', `/determinations/${id}`)).body.data.owed;
    expect(await owed(firstId)).toEqual({ amountMinor: '2000000', currency: 'KES', exponent: 2 });
    expect(await owed(secondId)).toEqual({ amountMinor: '0', currency: 'KES', exponent: 2 });
    expect(await payouts.getJob(payoutOriginationJobId(secondId))).toBeUndefined();
    const forPolicy = (
      await payouts.getJobs(['waiting', 'delayed', 'active', 'completed', 'failed', 'prioritized'])
    ).filter((j) => j.data.policyId === tier2.policyId);
    expect(forPolicy.map((j) => j.data.determinationId)).toEqual([firstId]);

    // Both are issued, signed and currency-neutral (Tier 2); the record keeps why the second owes nothing.
    const stored = await p.db
      .collection('determinations')
      .find({ _id: { $in: [firstId, secondId] } } as never)
      .toArray();
    const byId = new Map(stored.map((d) => [String(d._id), d]));
    expect(byId.get(firstId)).toMatchObject({
      status: 'ISSUED',
      owedMinor: '2000000',
      uncappedOwedMinor: '2000000',
      coverRemainingBeforeMinor: '2000000',
    });
    expect(byId.get(secondId)).toMatchObject({
      status: 'ISSUED',
      owedMinor: '0',
      uncappedOwedMinor: '2000000',
      coverRemainingBeforeMinor: '0',
      partnerSettlementStatus: 'NOT_APPLICABLE',
    });
    // The jobs each one caused (pending or relayed): no payout for the second.
    const queuesOf = (id: string) => {
      const d = byId.get(id);
      const pending: { queue: string }[] = d?.jobOutbox ?? [];
      const relayed: { entry: { queue: string } }[] = d?.jobOutboxRelayed ?? [];
      return [...pending, ...relayed.map((kept) => kept.entry)].map((j) => j.queue).sort();
    };
    expect(queuesOf(firstId)).toEqual(['payout-originations', 'policy-summaries']);
    expect(queuesOf(secondId)).toEqual(['policy-summaries']);
    expect(byId.get(secondId)?.signed).toMatchObject({
      amountOwed: null,
      amountOwedUnavailableReason: 'SETTLED_BY_SERVICE',
    });
  });
});
