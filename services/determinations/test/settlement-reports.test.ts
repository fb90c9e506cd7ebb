import { EVENT_CATALOG } from '@parametric/events';
import { eventually } from '@parametric/test-harness';
import {
  type ActivePolicy,
  activeCropPolicy,
  activeTier2CropPolicy,
  assessment,
  type DeterminationsPlatform,
  startDeterminationsPlatform,
} from './support';

let p: DeterminationsPlatform;
let policy: ActivePolicy;

beforeAll(async () => {
  p = await startDeterminationsPlatform();
  // A large cover, so the determinations of every test together stay below the sum insured:
  // none is capped (docs/determinations.md, the cap).
  policy = await activeCropPolicy(p, { sumInsured: 5_000_000 });
  await p.connectWebhook(policy.org.apiKey);
}, 120_000);

afterAll(async () => {
  await p?.stop();
});

/** A new triggered determination at 0.25% of 5,000,000.00 KES: 12,500.00 owed. */
async function issued(overrides: Record<string, unknown> = {}): Promise<string> {
  const reply = await p.gateway.ops('POST', '/determinations', {
    body: assessment({ policyId: policy.policyId }, { damagePercentBp: 25, ...overrides }),
  });
  if (reply.status !== 201) throw new Error(JSON.stringify(reply.body));
  return reply.body.data.determination.determinationId;
}

let refs = 0;
const report = (
  overrides: Record<string, unknown> = {},
): Record<string, unknown> & { partnerReference: string; settledAt: string; notes?: string } => ({
  partnerReference: `COOP-PAY-${++refs}`,
  outcome: 'SETTLED_FULL',
  method: 'MOBILE_MONEY',
  settledAmountMinor: '1250000',
  settlementCurrency: 'KES',
  // Now: after the determination was issued (an earlier settledAt is refused, issue 22 row 10).
  settledAt: new Date().toISOString(),
  ...overrides,
});
const post = (id: string, body: unknown, key = policy.org.apiKey) =>
  p.gateway.api('POST', `/determinations/${id}/settlement-report`, { key, body });
const list = (id: string, key = policy.org.apiKey) =>
  p.gateway.api('GET', `/determinations/${id}/settlement-report`, { key });
const recordedEvents = (id: string) =>
  p.receiver.received.filter(
    (d) =>
      d.verified &&
      d.event === 'determination.settlement_report_recorded' &&
      (d.body as { data: { determinationId: string } }).data.determinationId === id,
  );

describe('POST /determinations/{id}/settlement-report', () => {
  it('records a new report (201), marks the determination REPORTED and sends the partner-attested event', async () => {
    const id = await issued();
    const signedBefore = (await p.gateway.api('GET', `/determinations/${id}`, { key: policy.org.apiKey }))
      .body.data;
    const body = report({ notes: 'Paid by M-Pesa B2C from the cooperative account' });
    const reply = await post(id, body);
    expect(reply.status).toBe(201);
    expect(reply.body.data).toMatchObject({
      replayed: false,
      determinationId: id,
      partnerSettlementStatus: 'REPORTED',
      verifiedByMicrocrop: false,
      verificationStatus: 'UNVERIFIED',
      report: {
        partnerReference: body.partnerReference,
        outcome: 'SETTLED_FULL',
        method: 'MOBILE_MONEY',
        settledAmountMinor: '1250000',
        settlementCurrency: 'KES',
        settledAt: body.settledAt,
        supersedesReportId: null,
        notes: body.notes,
      },
    });
    const [delivery] = await p.receiver.waitForCount(1, (d) => recordedEvents(id).includes(d));
    const data = (delivery?.body as { data: Record<string, unknown> } | undefined)?.data;
    expect(EVENT_CATALOG['determination.settlement_report_recorded'].safeParse(data).success).toBe(true);
    expect(data).toMatchObject({
      determinationId: id,
      policyId: policy.policyId,
      policyNumber: policy.policyNumber,
      settlementMode: 'DETERMINATION',
      settledByMicrocrop: false,
      verifiedByMicrocrop: false,
      verificationStatus: 'UNVERIFIED',
      partnerSettlementStatus: 'REPORTED',
      correction: false,
      report: { id: reply.body.data.report.id, supersedesReportId: null },
      links: {
        determination: `/determinations/${id}`,
        settlementReport: `/determinations/${id}/settlement-report`,
      },
    });
    expect(String(data?.note)).toMatch(/attested by the partner.*not verified/);
    const read = await p.gateway.api('GET', `/determinations/${id}`, { key: policy.org.apiKey });
    expect(read.body.data.partnerSettlementStatus).toBe('REPORTED');
    // The settlement status moves beside the signed record, which never changes.
    for (const field of ['canonicalPayload', 'canonicalHash', 'signature', 'kid', 'amountOwed']) {
      expect(read.body.data[field]).toEqual(signedBefore[field]);
    }
  });

  it('answers a replay with 200 and the stored report, writing and emitting nothing; another body is 409', async () => {
    const id = await issued();
    const body = report();
    const first = await post(id, body);
    const again = await post(id, body);
    expect(again.status).toBe(200);
    expect(again.body.data.replayed).toBe(true);
    expect(again.body.data.report).toEqual(first.body.data.report);
    const changed = await post(id, { ...body, method: 'CASH' });
    expect(changed.status).toBe(409);
    expect(changed.body.error.code).toBe('CONFLICT');
    expect(await p.db.collection('settlement_reports').countDocuments({ determinationId: id })).toBe(1);
    await p.determinations.drainOutbox();
    await eventually(() => expect(recordedEvents(id)).toHaveLength(1), { message: 'the one event' });
  });

  it('makes one report and one event of parallel identical posts', async () => {
    const id = await issued();
    const body = report();
    const replies = await Promise.all(Array.from({ length: 8 }, () => post(id, body)));
    expect(replies.map((r) => r.status).sort()).toEqual([200, 200, 200, 200, 200, 200, 200, 201]);
    expect(new Set(replies.map((r) => r.body.data.report.id)).size).toBe(1);
    expect(await p.db.collection('settlement_reports').countDocuments({ determinationId: id })).toBe(1);
    await p.determinations.drainOutbox();
    await eventually(() => expect(recordedEvents(id)).toHaveLength(1), { message: 'the one event' });
    const stored = await p.db.collection('determinations').findOne({ _id: id as never });
    expect(stored?.outbox).toEqual([]);
  });

  it.each([
    ['above the amount owed', { settledAmountMinor: '1250001' }, 'settledAmountMinor'],
    ['in another currency', { settlementCurrency: 'USD' }, 'settlementCurrency'],
    ['settled in the future', { settledAt: '2099-01-01T00:00:00Z' }, 'settledAt'],
    // Issue 22, row 10: a settlement before the determination existed is not one.
    [
      'settled in 1970, before the determination was issued',
      { settledAt: '1970-01-01T00:00:00Z' },
      'settledAt',
    ],
    ['SETTLED_FULL below the amount owed', { settledAmountMinor: '1000000' }, 'settledAmountMinor'],
    ['SETTLED_PARTIAL of the whole amount', { outcome: 'SETTLED_PARTIAL' }, 'settledAmountMinor'],
    ['NOT_SETTLED with an amount', { outcome: 'NOT_SETTLED' }, 'settledAmountMinor'],
    ['an amount as a number', { settledAmountMinor: 1250000 }, 'settledAmountMinor'],
    ['a decimal amount', { settledAmountMinor: '12500.00' }, 'settledAmountMinor'],
    ['an unknown method', { method: 'CHEQUE' }, 'method'],
    ['an unknown field', { verifiedByMicrocrop: true }, 'verifiedByMicrocrop'],
    ['no partner reference', { partnerReference: '' }, 'partnerReference'],
  ])('refuses a report %s with 400 naming the field, and writes nothing', async (_what, overrides, field) => {
    const id = await issued();
    const reply = await post(id, report(overrides));
    expect(reply.status).toBe(400);
    expect(reply.body.error.code).toBe('INVALID_INPUT');
    expect(reply.body.error.details).toEqual(expect.arrayContaining([expect.objectContaining({ field })]));
    expect(await p.db.collection('settlement_reports').countDocuments({ determinationId: id })).toBe(0);
    expect((await list(id)).body.data.partnerSettlementStatus).toBe('PENDING');
  });

  it('accepts partial and unsettled outcomes with consistent amounts', async () => {
    const partial = await post(
      await issued(),
      report({ outcome: 'SETTLED_PARTIAL', settledAmountMinor: '600000' }),
    );
    const none = await post(
      await issued(),
      report({ outcome: 'NOT_SETTLED', method: 'OTHER', settledAmountMinor: '0' }),
    );
    expect([partial.status, none.status]).toEqual([201, 201]);
  });

  it('refuses a report on an untriggered determination with 400', async () => {
    const id = await issued({ triggered: false, damagePercentBp: 0 });
    const reply = await post(id, report({ outcome: 'NOT_SETTLED', settledAmountMinor: '0' }));
    expect(reply.status).toBe(400);
    expect(reply.body.error.message).toMatch(/not triggered/);
  });

  // Issue 22, row 9: it used to be accepted, flipping NOT_REQUIRED to REPORTED with an event.
  it('refuses a report on a triggered determination of 0 bp (nothing owed) with 400, changing nothing', async () => {
    const id = await issued({ damagePercentBp: 0 });
    const read = await p.gateway.api('GET', `/determinations/${id}`, { key: policy.org.apiKey });
    expect(read.body.data).toMatchObject({
      triggered: true,
      damagePercentBp: 0,
      amountOwed: { amountMinor: '0' },
      partnerSettlementStatus: 'NOT_REQUIRED',
    });
    const reply = await post(
      id,
      report({ outcome: 'NOT_SETTLED', method: 'OTHER', settledAmountMinor: '0' }),
    );
    expect([reply.status, reply.body.error.code]).toEqual([400, 'INVALID_INPUT']);
    expect(reply.body.error.message).toBe(
      'Nothing is owed on this determination (0 KES): there is nothing to settle or report',
    );
    expect((await list(id)).body.data).toMatchObject({
      current: null,
      reports: [],
      partnerSettlementStatus: 'NOT_REQUIRED',
    });
    expect(await p.db.collection('settlement_reports').countDocuments({ determinationId: id })).toBe(0);
    const stored = await p.db.collection('determinations').findOne({ _id: id as never });
    const events = [
      ...(stored?.outbox ?? []),
      ...(stored?.outboxRelayed ?? []).map((k: { entry: unknown }) => k.entry),
    ];
    expect(
      events
        .map((e: { event?: string }) => e?.event)
        .filter((e) => e?.startsWith('determination.settlement')),
    ).toEqual([]);
  });

  it('answers 404 for an unknown id and for another organization’s determination alike', async () => {
    const id = await issued();
    const stranger = await p.gateway.register();
    const theirs = await post(id, report(), stranger.apiKey);
    const unknown = await post('00000000-0000-4000-8000-000000000000', report());
    expect([theirs.status, unknown.status]).toEqual([404, 404]);
    expect(theirs.body).toEqual(unknown.body);
    expect((await list(id, stranger.apiKey)).status).toBe(404);
    expect(await p.db.collection('settlement_reports').countDocuments({ determinationId: id })).toBe(0);
  });
});

describe('corrections', () => {
  it('chains through supersedesReportId: the new report is current, the old one stays listed', async () => {
    const id = await issued();
    const first = (await post(id, report({ outcome: 'SETTLED_PARTIAL', settledAmountMinor: '600000' }))).body
      .data.report;
    const fix = await post(id, report({ supersedesReportId: first.id }));
    expect(fix.status).toBe(201);
    const second = fix.body.data.report;
    expect(second.supersedesReportId).toBe(first.id);

    const reports = (await list(id)).body.data;
    expect(reports).toMatchObject({
      determinationId: id,
      current: { id: second.id },
      partnerSettlementStatus: 'REPORTED',
      verifiedByMicrocrop: false,
      verificationStatus: 'UNVERIFIED',
    });
    expect(reports.reports.map((r: { id: string }) => r.id)).toEqual([second.id, first.id]);
    expect(reports.reports[1].supersededByReportId).toBe(second.id);

    const events = await p.receiver.waitForCount(2, (d) => recordedEvents(id).includes(d));
    const correction = events
      .map(
        (d) =>
          (d.body as { data: { correction: boolean; report: { id: string; supersedesReportId: string } } })
            .data,
      )
      .find((e) => e.correction);
    expect(correction?.report).toMatchObject({ id: second.id, supersedesReportId: first.id });
  });

  it('refuses a correction of a report that is no longer current, and a second report without one (409)', async () => {
    const id = await issued();
    const first = (await post(id, report())).body.data.report;
    const second = (await post(id, report({ supersedesReportId: first.id }))).body.data.report;
    const stale = await post(id, report({ supersedesReportId: first.id }));
    expect(stale.status).toBe(409);
    expect(stale.body.error.details).toEqual([expect.objectContaining({ field: 'supersedesReportId' })]);
    const unchained = await post(id, report());
    expect(unchained.status).toBe(409);
    const stranger = await post(id, report({ supersedesReportId: '00000000-0000-4000-8000-000000000000' }));
    expect(stranger.status).toBe(409);
    expect((await list(id)).body.data.current.id).toBe(second.id);
    expect(await p.db.collection('settlement_reports').countDocuments({ determinationId: id })).toBe(2);
  });

  it('lets only one of two parallel corrections of the same report become current', async () => {
    const id = await issued();
    const first = (await post(id, report())).body.data.report;
    const replies = await Promise.all([
      post(id, report({ supersedesReportId: first.id, method: 'BANK_TRANSFER' })),
      post(id, report({ supersedesReportId: first.id, method: 'CASH' })),
    ]);
    expect(replies.map((r) => r.status).sort()).toEqual([201, 409]);
    const winner = replies.find((r) => r.status === 201)?.body.data.report;
    const reports = (await list(id)).body.data;
    expect(reports.current.id).toBe(winner.id);
    expect(reports.reports).toHaveLength(2);
  });
});

describe('Tier 2 (the service settles)', () => {
  it('refuses settlement reports with 403 NOT_PARTNER_SETTLED', async () => {
    const tier2 = await activeTier2CropPolicy(p);
    const det = await p.gateway.ops('POST', '/determinations', {
      body: assessment({ policyId: tier2.policyId }),
    });
    expect(det.body.data.determination).toMatchObject({
      amountOwed: null,
      amountOwedUnavailableReason: 'SETTLED_BY_SERVICE',
      settledByMicrocrop: true,
      partnerSettlementStatus: 'NOT_APPLICABLE',
    });
    const id = det.body.data.determination.determinationId;
    const reply = await post(id, report(), tier2.org.apiKey);
    expect(reply.status).toBe(403);
    expect(reply.body.error.code).toBe('NOT_PARTNER_SETTLED');
    expect(await p.db.collection('settlement_reports').countDocuments({ determinationId: id })).toBe(0);
  });
});

describe('the policy read (the policy service learns of determinations by queue)', () => {
  it('summarises each determination in damageAssessments and follows its settlement status', async () => {
    const id = await issued();
    const assessments = async () =>
      (await p.gateway.api('GET', `/policies/${policy.policyId}`, { key: policy.org.apiKey })).body.data
        .damageAssessments as { determinationId: string; partnerSettlementStatus: string }[];
    const summary = await eventually(
      async () => {
        const found = (await assessments()).find((a) => a.determinationId === id);
        expect(found).toBeDefined();
        return found;
      },
      { message: 'the damage assessment on the policy' },
    );
    const read = (await p.gateway.api('GET', `/determinations/${id}`, { key: policy.org.apiKey })).body.data;
    expect(summary).toMatchObject({
      determinationId: id,
      triggered: true,
      damagePercentBp: 25,
      assessedAt: read.assessedAt,
      issuedAt: read.issuedAt,
      partnerSettlementStatus: 'PENDING',
      dueAt: read.dueAt,
      links: { determination: `/determinations/${id}` },
    });
    await post(id, report());
    await eventually(
      async () =>
        expect((await assessments()).find((a) => a.determinationId === id)?.partnerSettlementStatus).toBe(
          'REPORTED',
        ),
      { message: 'the policy to show the report' },
    );
  });
});
