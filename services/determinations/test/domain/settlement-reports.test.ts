import { randomUUID } from 'node:crypto';
import type { settlementReportBody } from '@parametric/contracts';
import { EVENT_CATALOG } from '@parametric/events';
import { AppError } from '@parametric/http';
import type { z } from 'zod';
import type { DeterminationDoc } from '../../src/determinations/model';
import {
  RECORDED_NOTE,
  recordSettlementReport,
  SETTLED_AT_SKEW_MS,
  settlementReportsOf,
} from '../../src/reports/domain';
import type { ReportStore } from '../../src/reports/store';
import { MemoryReports } from './memory-report-store';

/**
 * The settlement-report rules (src/reports/domain.ts) on their own: the production domain code,
 * time injected, against an in-memory store behind the interface the MongoDB store implements
 * (the platform tests in ../settlement-reports.test.ts prove that wiring).
 */

type Body = z.input<typeof settlementReportBody>;

const DAY = 86_400_000;
const ISSUED = new Date('2026-11-03T09:30:00.000Z');
const NOW = new Date(ISSUED.getTime() + 2 * DAY);
const ORG = randomUUID();

/** An issued Tier 1 determination of ORG: triggered at 25% of 50,000.00 KES, 12,500.00 owed. */
function issued(overrides: Partial<DeterminationDoc> = {}): DeterminationDoc {
  return {
    _id: randomUUID(),
    idempotencyKey: `chirps-${randomUUID()}`,
    fingerprint: 'f'.repeat(64),
    status: 'ISSUED',
    unattributedReason: null,
    organizationId: ORG,
    policyId: randomUUID(),
    policyNumber: 'KE-202611-A1B2C3',
    kind: 'CROP_DAMAGE',
    methodologyVersion: 'drought-index-v2.1',
    triggered: true,
    damagePercentBp: 2_500,
    assessedAt: new Date(ISSUED.getTime() - 3_600_000),
    receivedAt: ISSUED,
    issuedAt: ISSUED,
    settlementMode: 'DETERMINATION',
    currency: 'KES',
    owedMinor: '1250000',
    signed: null,
    canonicalPayload: null,
    canonicalHash: null,
    signature: null,
    kid: null,
    evidenceHash: null,
    partnerSettlementStatus: 'PENDING',
    dueAt: new Date(ISSUED.getTime() + 30 * DAY),
    currentReportId: null,
    reportedAt: null,
    overdueAt: null,
    outbox: [],
    outboxPending: false,
    jobOutbox: [],
    jobOutboxPending: false,
    ...overrides,
  } as DeterminationDoc;
}

let refs = 0;
const body = (overrides: Partial<Body> = {}): Body => ({
  partnerReference: `COOP-PAY-${++refs}`,
  outcome: 'SETTLED_FULL',
  method: 'MOBILE_MONEY',
  settledAmountMinor: '1250000',
  settlementCurrency: 'KES',
  settledAt: new Date(ISSUED.getTime() + DAY).toISOString(),
  ...overrides,
});

let memory: MemoryReports;
let store: ReportStore;
beforeEach(() => {
  memory = new MemoryReports();
  store = memory.forOrganization(ORG);
});

/** A determination in the store, and a way to post reports on it. */
function onDetermination(overrides: Partial<DeterminationDoc> = {}) {
  const d = issued(overrides);
  memory.add(d);
  return {
    id: d._id,
    post: (b: Body, now = NOW, onMade?: () => void) =>
      recordSettlementReport(store, d._id, b as z.output<typeof settlementReportBody>, now, onMade),
    stored: () => memory.determinations.get(d._id) as DeterminationDoc,
    events: () => memory.eventsOf(d._id),
    jobs: () => memory.jobsOf(d._id),
    reports: () => memory.reportsOn(d._id),
  };
}

/** The AppError a call is refused with (fails the test if it is not refused so). */
async function refusal(promise: Promise<unknown>): Promise<AppError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AppError);
  return err as AppError;
}

/** Refused with `code`, and nothing written: no report, no event, no job, status as it was. */
async function expectRefusedUntouched(
  d: ReturnType<typeof onDetermination>,
  call: Promise<unknown>,
  code: AppError['code'],
): Promise<AppError> {
  const before = structuredClone(d.stored());
  const reportsBefore = d.reports().length;
  const err = await refusal(call);
  expect(err.code).toBe(code);
  expect(d.stored()).toEqual(before);
  expect(d.reports()).toHaveLength(reportsBefore);
  return err;
}

describe('a new report', () => {
  it('is recorded, made current (REPORTED), with one partner-attested event and one policy summary', async () => {
    const d = onDetermination();
    let made = 0;
    const b = body({ notes: 'Paid from the cooperative paybill' });
    const result = await d.post(b, NOW, () => made++);
    expect(result.replayed).toBe(false);
    expect(result.report).toMatchObject({
      organizationId: ORG,
      determinationId: d.id,
      partnerReference: b.partnerReference,
      outcome: 'SETTLED_FULL',
      settledAmountMinor: '1250000',
      settledAt: new Date(b.settledAt),
      reportedAt: NOW,
      supersedesReportId: null,
      notes: b.notes,
      recorded: true,
    });
    expect(made).toBe(1);
    expect(d.stored()).toMatchObject({
      currentReportId: result.report._id,
      partnerSettlementStatus: 'REPORTED',
      reportedAt: NOW,
    });
    const [event, ...more] = d.events();
    expect(more).toEqual([]);
    expect(event?.event).toBe('determination.settlement_report_recorded');
    expect(EVENT_CATALOG['determination.settlement_report_recorded'].safeParse(event?.data).success).toBe(
      true,
    );
    expect(event?.data).toMatchObject({
      determinationId: d.id,
      settlementMode: 'DETERMINATION',
      settledByMicrocrop: false,
      verifiedByMicrocrop: false,
      verificationStatus: 'UNVERIFIED',
      partnerSettlementStatus: 'REPORTED',
      correction: false,
      report: { id: result.report._id, supersedesReportId: null },
      note: RECORDED_NOTE,
    });
    expect(
      d
        .jobs()
        .map((j) => [j.queue, (j.payload as { partnerSettlementStatus: string }).partnerSettlementStatus]),
    ).toEqual([['policy-summaries', 'REPORTED']]);
  });

  it('is accepted after the due date too: OVERDUE becomes REPORTED', async () => {
    const d = onDetermination({ partnerSettlementStatus: 'OVERDUE', overdueAt: NOW });
    await d.post(body(), new Date(ISSUED.getTime() + 40 * DAY));
    expect(d.stored().partnerSettlementStatus).toBe('REPORTED');
  });
});

describe('idempotency on (determination, partnerReference)', () => {
  it('answers the same body again with the stored report, replayed, writing and emitting nothing', async () => {
    const d = onDetermination();
    const b = body();
    const first = await d.post(b);
    let made = 0;
    const again = await d.post(b, new Date(NOW.getTime() + 60_000), () => made++);
    expect(again.replayed).toBe(true);
    expect(again.report).toEqual(first.report);
    expect(made).toBe(0);
    expect(d.reports()).toHaveLength(1);
    expect(d.events()).toHaveLength(1);
    expect(d.jobs()).toHaveLength(1);
  });

  it('refuses another body under the same partnerReference with 409 CONFLICT naming it', async () => {
    const d = onDetermination();
    const b = body();
    await d.post(b);
    const err = await expectRefusedUntouched(d, d.post({ ...b, method: 'CASH' }), 'CONFLICT');
    expect(err.details).toEqual([
      { field: 'partnerReference', message: 'already used with a different report' },
    ]);
  });

  it('makes one report and one event of parallel identical posts', async () => {
    const d = onDetermination();
    const b = body();
    let made = 0;
    const results = await Promise.all(Array.from({ length: 6 }, () => d.post(b, NOW, () => made++)));
    expect(results.filter((r) => !r.replayed)).toHaveLength(1);
    expect(new Set(results.map((r) => r.report._id)).size).toBe(1);
    expect(made).toBe(1);
    expect(d.reports()).toHaveLength(1);
    expect(d.events()).toHaveLength(1);
  });

  it('finishes, on replay, a report whose first post stopped between its two writes (emitting once)', async () => {
    const d = onDetermination();
    const crashing: ReportStore = {
      ...store,
      makeCurrent: async () => {
        throw new Error('the process died here');
      },
    };
    const b = body();
    await expect(
      recordSettlementReport(crashing, d.id, b as z.output<typeof settlementReportBody>, NOW),
    ).rejects.toThrow('the process died here');
    expect(d.reports()).toHaveLength(1);
    // Not on file until finished: the list shows nothing, the determination is still PENDING.
    const listed = await settlementReportsOf(store, d.id);
    expect(listed).toMatchObject({ current: null, reports: [], partnerSettlementStatus: 'PENDING' });
    let made = 0;
    const replayed = await d.post(b, NOW, () => made++);
    expect(replayed.replayed).toBe(false);
    expect(made).toBe(1);
    expect(d.events()).toHaveLength(1);
    expect((await settlementReportsOf(store, d.id)).current?.id).toBe(replayed.report._id);
  });
});

describe('amounts and outcomes, against the amount owed (1250000 minor units of KES)', () => {
  it.each([
    ['above the amount owed', { settledAmountMinor: '1250001' }, /must not exceed the amount owed \(1250000/],
    ['SETTLED_FULL below the amount owed', { settledAmountMinor: '1249999' }, /must equal the amount owed/],
    ['SETTLED_PARTIAL of the whole amount', { outcome: 'SETTLED_PARTIAL' }, /less than the amount owed/],
    ['SETTLED_PARTIAL of nothing', { outcome: 'SETTLED_PARTIAL', settledAmountMinor: '0' }, /more than 0/],
    ['NOT_SETTLED with an amount', { outcome: 'NOT_SETTLED', settledAmountMinor: '1' }, /must be "0"/],
  ] as const)('refuses %s with 400 on settledAmountMinor', async (_what, overrides, message) => {
    const d = onDetermination();
    const err = await expectRefusedUntouched(d, d.post(body(overrides)), 'INVALID_INPUT');
    expect(err.details).toEqual([{ field: 'settledAmountMinor', message: expect.stringMatching(message) }]);
  });

  it('refuses another currency than the policy’s with 400 on settlementCurrency', async () => {
    const d = onDetermination();
    const err = await expectRefusedUntouched(d, d.post(body({ settlementCurrency: 'UGX' })), 'INVALID_INPUT');
    expect(err.details).toEqual([
      { field: 'settlementCurrency', message: 'must be KES, the policy currency' },
    ]);
  });

  it.each([
    ['SETTLED_FULL of exactly the amount owed', {}],
    ['SETTLED_PARTIAL of part of it', { outcome: 'SETTLED_PARTIAL', settledAmountMinor: '1249999' }],
    ['NOT_SETTLED of "0"', { outcome: 'NOT_SETTLED', method: 'OTHER', settledAmountMinor: '0' }],
  ] as const)('accepts %s', async (_what, overrides) => {
    const d = onDetermination();
    expect((await d.post(body(overrides))).replayed).toBe(false);
    expect(d.stored().partnerSettlementStatus).toBe('REPORTED');
  });

  it('refuses a Tier 2 determination with 403 NOT_PARTNER_SETTLED: the service settles it', async () => {
    const d = onDetermination({
      settlementMode: 'DETERMINATION_AND_SETTLEMENT',
      partnerSettlementStatus: 'NOT_APPLICABLE',
      dueAt: null,
    });
    await expectRefusedUntouched(d, d.post(body()), 'NOT_PARTNER_SETTLED');
  });

  it('refuses an untriggered determination with 400: nothing is owed', async () => {
    const d = onDetermination({
      triggered: false,
      damagePercentBp: 0,
      owedMinor: '0',
      partnerSettlementStatus: 'NOT_REQUIRED',
      dueAt: null,
    });
    const err = await expectRefusedUntouched(
      d,
      d.post(body({ outcome: 'NOT_SETTLED', settledAmountMinor: '0' })),
      'INVALID_INPUT',
    );
    expect(err.message).toMatch(/not triggered/);
  });

  // Issue 22, row 9: a triggered determination of 0 bp owes 0 and is NOT_REQUIRED; a report used
  // to flip it to REPORTED and send an event about a settlement of nothing.
  it.each([
    ['triggered at 0 bp', { damagePercentBp: 0, owedMinor: '0' }],
    ['triggered at 1 bp of an amount too small to owe a minor unit', { damagePercentBp: 1, owedMinor: '0' }],
  ])(
    'refuses a report on a determination %s with 400: nothing is owed, NOT_REQUIRED stays',
    async (_what, owed) => {
      const d = onDetermination({ ...owed, partnerSettlementStatus: 'NOT_REQUIRED', dueAt: null });
      const err = await expectRefusedUntouched(
        d,
        d.post(body({ outcome: 'NOT_SETTLED', method: 'OTHER', settledAmountMinor: '0' })),
        'INVALID_INPUT',
      );
      expect(err.message).toBe(
        'Nothing is owed on this determination (0 KES): there is nothing to settle or report',
      );
      expect(d.stored().partnerSettlementStatus).toBe('NOT_REQUIRED');
      expect(d.events()).toEqual([]);
    },
  );

  it('answers 404 for an unknown id, another organization’s determination, and one not issued, alike', async () => {
    const theirs = onDetermination({ organizationId: randomUUID() });
    const unattributed = onDetermination({ status: 'UNATTRIBUTED', organizationId: ORG });
    const errors = await Promise.all([
      refusal(recordSettlementReport(store, randomUUID(), body() as never, NOW)),
      refusal(theirs.post(body())),
      refusal(unattributed.post(body())),
      refusal(settlementReportsOf(store, theirs.id)),
    ]);
    for (const err of errors)
      expect([err.code, err.message]).toEqual(['NOT_FOUND', 'Determination not found']);
    expect(memory.reports.size).toBe(0);
  });
});

describe('settledAt', () => {
  // Issue 22, row 10: 1970-01-01 was accepted.
  it.each([
    ['1970-01-01', '1970-01-01T00:00:00.000Z'],
    ['a day before the issue', new Date(ISSUED.getTime() - DAY).toISOString()],
    [
      'just past the clock allowance before the issue',
      new Date(ISSUED.getTime() - SETTLED_AT_SKEW_MS - 1).toISOString(),
    ],
  ])('refuses %s (before the determination was issued) with 400 on settledAt', async (_what, settledAt) => {
    const d = onDetermination();
    const err = await expectRefusedUntouched(d, d.post(body({ settledAt })), 'INVALID_INPUT');
    expect(err.details).toEqual([
      {
        field: 'settledAt',
        message: `must not be before the determination was issued (${ISSUED.toISOString()})`,
      },
    ]);
  });

  it('refuses a time in the future, past the clock allowance', async () => {
    const d = onDetermination();
    const settledAt = new Date(NOW.getTime() + SETTLED_AT_SKEW_MS + 1).toISOString();
    const err = await expectRefusedUntouched(d, d.post(body({ settledAt })), 'INVALID_INPUT');
    expect(err.details).toEqual([{ field: 'settledAt', message: 'must not be in the future' }]);
  });

  it.each([
    ['the moment of issue', ISSUED.toISOString()],
    ['the issue second, in whole seconds', '2026-11-03T09:30:00Z'],
    ['the clock allowance before the issue', new Date(ISSUED.getTime() - SETTLED_AT_SKEW_MS).toISOString()],
    ['now', NOW.toISOString()],
    ['the clock allowance after now', new Date(NOW.getTime() + SETTLED_AT_SKEW_MS).toISOString()],
  ])('accepts %s', async (_what, settledAt) => {
    const d = onDetermination();
    const { report } = await d.post(body({ settledAt }));
    expect(report.settledAt).toEqual(new Date(settledAt));
  });

  it('names every problem of a report at once', async () => {
    const d = onDetermination();
    const err = await expectRefusedUntouched(
      d,
      d.post(
        body({ settledAt: '1970-01-01T00:00:00Z', settlementCurrency: 'USD', settledAmountMinor: '9999999' }),
      ),
      'INVALID_INPUT',
    );
    expect((err.details as { field: string }[]).map((p) => p.field).sort()).toEqual([
      'settledAmountMinor',
      'settledAt',
      'settlementCurrency',
    ]);
  });
});

describe('corrections', () => {
  it('chain through supersedesReportId: the new report is current, the old one listed as superseded', async () => {
    const d = onDetermination();
    const first = await d.post(body({ outcome: 'SETTLED_PARTIAL', settledAmountMinor: '600000' }));
    const later = new Date(NOW.getTime() + DAY);
    const fix = await d.post(body({ supersedesReportId: first.report._id }), later);
    expect(fix.replayed).toBe(false);
    expect(fix.report.supersedesReportId).toBe(first.report._id);
    expect(d.stored().currentReportId).toBe(fix.report._id);

    const listed = await settlementReportsOf(store, d.id);
    expect(listed).toMatchObject({
      determinationId: d.id,
      current: { id: fix.report._id, supersedesReportId: first.report._id },
      partnerSettlementStatus: 'REPORTED',
      verifiedByMicrocrop: false,
      verificationStatus: 'UNVERIFIED',
    });
    expect(listed.reports.map((r) => [r.id, r.supersededByReportId])).toEqual([
      [fix.report._id, null],
      [first.report._id, fix.report._id],
    ]);
    // Two events, the second a correction; the policy summary moved on the first report only.
    expect(d.events().map((e) => (e.data as { correction: boolean }).correction)).toEqual([false, true]);
    expect(d.events()[1]?.data).toMatchObject({ report: { supersedesReportId: first.report._id } });
    expect(d.jobs()).toHaveLength(1);
  });

  it('refuse, with 409 on supersedesReportId, a second report without one, a report not current, and a stranger', async () => {
    const d = onDetermination();
    const first = await d.post(body());
    const second = await d.post(body({ supersedesReportId: first.report._id }));
    for (const supersedes of [undefined, first.report._id, randomUUID()]) {
      const err = await expectRefusedUntouched(
        d,
        d.post(body(supersedes ? { supersedesReportId: supersedes } : {})),
        'CONFLICT',
      );
      expect(err.details).toEqual([
        expect.objectContaining({
          field: 'supersedesReportId',
          message: expect.stringContaining('current report'),
        }),
      ]);
    }
    expect(d.stored().currentReportId).toBe(second.report._id);
  });

  it('refuse a correction when there is nothing to correct yet', async () => {
    const d = onDetermination();
    const err = await expectRefusedUntouched(
      d,
      d.post(body({ supersedesReportId: randomUUID() })),
      'CONFLICT',
    );
    expect(err.message).toMatch(/there is none to correct yet/);
  });

  it('let one of two parallel corrections of the same report win; the other is 409 and withdrawn', async () => {
    const d = onDetermination();
    const first = await d.post(body());
    const outcomes = await Promise.allSettled([
      d.post(body({ supersedesReportId: first.report._id, method: 'BANK_TRANSFER' })),
      d.post(body({ supersedesReportId: first.report._id, method: 'CASH' })),
    ]);
    const won = outcomes.filter((o) => o.status === 'fulfilled');
    const lost = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected');
    expect([won.length, lost.length]).toEqual([1, 1]);
    expect(lost[0]?.reason).toMatchObject({ code: 'CONFLICT' });
    const winner = (won[0] as PromiseFulfilledResult<{ report: { _id: string } }>).value.report._id;
    expect(d.stored().currentReportId).toBe(winner);
    expect(
      d
        .reports()
        .map((r) => r._id)
        .sort(),
    ).toEqual([first.report._id, winner].sort());
    expect(d.events()).toHaveLength(2);
  });
});
