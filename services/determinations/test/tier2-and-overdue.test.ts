import { payoutOriginationJobId } from '@parametric/queue';
import { eventually } from '@parametric/test-harness';
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
  // Reports fall due a second after issue; the sweep runs every second.
  p = await startDeterminationsPlatform({
    DETERMINATION_REPORT_DUE_SECONDS: '1',
    DETERMINATION_OVERDUE_SWEEP_SECONDS: '1',
  });
  payouts = new Queue('payout-originations', {
    connection: { url: p.config.REDIS_URL },
    prefix: p.config.REDIS_PREFIX,
  });
}, 120_000);

afterAll(async () => {
  await payouts?.close();
  await p?.stop();
});

describe('Tier 2 payout origination', () => {
  it('enqueues exactly one payout per triggered determination; ops read what it owes in the policy currency’s minor units', async () => {
    const tier2 = await activeTier2CropPolicy(p, 50_000);
    const body = assessment({ policyId: tier2.policyId }, { damagePercentBp: 3_333 });
    const first = await p.gateway.ops('POST', '/determinations', { body });
    await p.gateway.ops('POST', '/determinations', { body });
    const id = first.body.data.determination.determinationId;
    await p.determinations.drainOutbox();
    const job = await eventually(
      async () => {
        const j = await payouts.getJob(payoutOriginationJobId(id));
        expect(j).toBeDefined();
        return j;
      },
      { message: 'the payout job' },
    );
    // The payments service reads the amount from the determination itself (its ops view).
    expect(job?.data).toEqual({
      determinationId: id,
      policyId: tier2.policyId,
      organizationId: tier2.org.id,
    });
    const ops = await p.gateway.ops('GET', `/determinations/${id}`);
    expect(ops.body.data.owed).toEqual({ amountMinor: '1666500', currency: 'KES', exponent: 2 }); // 50,000.00 × 33.33%
    expect(await payouts.getJobCountByTypes('waiting', 'delayed', 'active', 'completed', 'failed')).toBe(1);
  });

  it('originates nothing for an untriggered Tier 2 determination, nor for any Tier 1 one', async () => {
    const before = await payouts.getJobCountByTypes('waiting', 'delayed', 'active', 'completed', 'failed');
    const tier2 = await activeTier2CropPolicy(p);
    const tier1 = await activeCropPolicy(p);
    const untriggered = await p.gateway.ops('POST', '/determinations', {
      body: assessment({ policyId: tier2.policyId }, { triggered: false, damagePercentBp: 0 }),
    });
    const tier1Det = await p.gateway.ops('POST', '/determinations', {
      body: assessment({ policyId: tier1.policyId }),
    });
    expect([untriggered.status, tier1Det.status]).toEqual([201, 201]);
    await p.determinations.drainOutbox();
    expect(await payouts.getJobCountByTypes('waiting', 'delayed', 'active', 'completed', 'failed')).toBe(
      before,
    );
  });
});

describe('overdue settlement reports', () => {
  it('marks a Tier 1 determination with no report OVERDUE once, then REPORTED when a report comes', async () => {
    const policy = await activeCropPolicy(p);
    await p.connectWebhook(policy.org.apiKey);
    const reply = await p.gateway.ops('POST', '/determinations', {
      body: assessment({ policyId: policy.policyId }),
    });
    const id = reply.body.data.determination.determinationId;
    const overdue = await p.receiver.waitFor(
      (d) => d.verified && d.event === 'determination.settlement_report_overdue',
      15_000,
    );
    const data = (overdue.body as { data: Record<string, unknown> }).data;
    const read = (await p.gateway.api('GET', `/determinations/${id}`, { key: policy.org.apiKey })).body.data;
    expect(read.partnerSettlementStatus).toBe('OVERDUE');
    expect(data).toMatchObject({
      determinationId: id,
      policyId: policy.policyId,
      policyNumber: policy.policyNumber,
      settlementMode: 'DETERMINATION',
      settledByMicrocrop: false,
      partnerSettlementStatus: 'OVERDUE',
      dueAt: read.dueAt,
      determinedAt: read.issuedAt,
    });
    expect(String(data.note)).toMatch(/No settlement report was received/);

    const late = await p.gateway.api('POST', `/determinations/${id}/settlement-report`, {
      key: policy.org.apiKey,
      body: {
        partnerReference: 'LATE-1',
        outcome: 'SETTLED_FULL',
        method: 'BANK_TRANSFER',
        settledAmountMinor: read.amountOwed.amountMinor,
        settlementCurrency: 'KES',
        settledAt: new Date().toISOString(),
      },
    });
    expect(late.status).toBe(201);
    await p.receiver.waitFor((d) => d.verified && d.event === 'determination.settlement_report_recorded');
    expect(
      (await p.gateway.api('GET', `/determinations/${id}`, { key: policy.org.apiKey })).body.data
        .partnerSettlementStatus,
    ).toBe('REPORTED');
    // More sweeps run while we wait; still exactly one overdue event.
    await p.determinations.drainOutbox();
    const overdueEvents = p.receiver.received.filter(
      (d) =>
        d.verified &&
        d.event === 'determination.settlement_report_overdue' &&
        (d.body as { data: { determinationId: string } }).data.determinationId === id,
    );
    expect(overdueEvents).toHaveLength(1);
  });
});
