import { parseExposition, type Sample, sampleValue } from '@parametric/metrics';
import { eventually } from '@parametric/test-harness';
import {
  type ActivePolicy,
  activeCropPolicy,
  assessment,
  type DeterminationsPlatform,
  startDeterminationsPlatform,
} from './support';

// The determinations service's domain metrics, moved by real ingestions and reports through the
// gateway: each change counted once, replays not at all.

let p: DeterminationsPlatform;
let policy: ActivePolicy;

beforeAll(async () => {
  p = await startDeterminationsPlatform();
  policy = await activeCropPolicy(p, { sumInsured: 50_000 });
  await p.connectWebhook(policy.org.apiKey);
}, 120_000);

afterAll(async () => {
  await p?.stop();
});

async function scrape(): Promise<Sample[]> {
  const res = await fetch(`${p.determinations.url}/metrics`);
  expect(res.status).toBe(200);
  return parseExposition(await res.text());
}

const ingest = (body: unknown) => p.gateway.ops('POST', '/determinations', { body });

it('counts an issued determination by tier and an unattributed one, once each (replays are not counted)', async () => {
  const before = await scrape();
  const issued = assessment({ policyId: policy.policyId });
  expect((await ingest(issued)).status).toBe(201);
  expect((await ingest(issued)).status).toBe(200);
  const stray = assessment({ policyId: '00000000-0000-4000-8000-000000000000' });
  expect((await ingest(stray)).status).toBe(201);
  expect((await ingest(stray)).status).toBe(200);

  const after = await scrape();
  const tier1 = { tier: 'DETERMINATION' };
  expect(sampleValue(after, 'determinations_issued_total', tier1)).toBe(
    sampleValue(before, 'determinations_issued_total', tier1) + 1,
  );
  const tier2 = { tier: 'DETERMINATION_AND_SETTLEMENT' };
  expect(sampleValue(after, 'determinations_issued_total', tier2)).toBe(
    sampleValue(before, 'determinations_issued_total', tier2),
  );
  expect(after.some((s) => s.name === 'determinations_issued_total' && s.labels.tier === tier2.tier)).toBe(
    true,
  );
  expect(sampleValue(after, 'determinations_unattributed_total')).toBe(
    sampleValue(before, 'determinations_unattributed_total') + 1,
  );

  // Its determination.delivered event left the outbox: the relay's lag was observed, and nothing
  // is left pending for the collection.
  await eventually(async () => {
    const now = await scrape();
    const collection = { collection: 'determinations' };
    expect(sampleValue(now, 'outbox_relay_lag_seconds_count', collection)).toBeGreaterThan(
      sampleValue(before, 'outbox_relay_lag_seconds_count', collection),
    );
    expect(
      now.some((s) => s.name === 'outbox_pending_documents' && s.labels.collection === 'determinations'),
    ).toBe(true);
  });
});

it('counts a settlement report made current once, not its replay', async () => {
  const reply = await ingest(assessment({ policyId: policy.policyId }));
  expect(reply.status).toBe(201);
  const id = reply.body.data.determination.determinationId;
  const before = await scrape();
  const body = {
    partnerReference: `COOP-METRICS-${id}`,
    outcome: 'SETTLED_FULL',
    method: 'MOBILE_MONEY',
    settledAmountMinor: '1250000',
    settlementCurrency: 'KES',
    // Settled after the determination was issued (just above): an earlier time is refused.
    settledAt: new Date().toISOString(),
  };
  const post = () =>
    p.gateway.api('POST', `/determinations/${id}/settlement-report`, { key: policy.org.apiKey, body });
  expect((await post()).status).toBe(201);
  expect((await post()).status).toBe(200);
  const after = await scrape();
  expect(sampleValue(after, 'settlement_reports_recorded_total')).toBe(
    sampleValue(before, 'settlement_reports_recorded_total') + 1,
  );
});

it('reports the determinations whose settlement report is overdue, counted at scrape time', async () => {
  const reply = await ingest(assessment({ policyId: policy.policyId }));
  const id = reply.body.data.determination.determinationId;
  const before = sampleValue(await scrape(), 'settlement_reports_overdue');
  // What the overdue sweep writes (its own tests drive it through time).
  await p.db
    .collection('determinations')
    .updateOne({ _id: id }, { $set: { partnerSettlementStatus: 'OVERDUE', overdueAt: new Date() } });
  expect(sampleValue(await scrape(), 'settlement_reports_overdue')).toBe(before + 1);
});
