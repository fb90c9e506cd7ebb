import { createHash, randomUUID } from 'node:crypto';
import type { settlementReportBody } from '@parametric/contracts';
import { canonicalBytes } from '@parametric/determination-verify';
import { createEvent } from '@parametric/events';
import { AppError } from '@parametric/http';
import type { z } from 'zod';
import type { DeterminationDoc } from '../determinations/model';
import { damageSummaryJob } from '../determinations/summaries';
import { determinationLinks, settlementStatusOf } from '../determinations/views';
import type { ReportDoc } from './model';
import type { ReportStore } from './store';

type ReportBody = z.output<typeof settlementReportBody>;

/** The events say in words that reports are attested, not verified (docs/determinations.md). */
export const RECORDED_NOTE =
  'This settlement report is attested by the partner organization. The service has not verified it and moves no money in this tier.';
export const OVERDUE_NOTE =
  'No settlement report was received from the partner organization by the due date. Reports remain partner-attested and are not verified by the service.';

/**
 * How far `settledAt` may stray past either bound (after our clock's now, before the
 * determination's issue): the partner's clock is not ours, and a mobile-money receipt's time is
 * given in whole seconds, so a report made at once may read a moment early.
 */
export const SETTLED_AT_SKEW_MS = 60_000;

export interface Recorded {
  replayed: boolean;
  report: ReportDoc;
  determination: DeterminationDoc;
}

/**
 * Records a Tier 1 settlement report (docs/determinations.md, "Settlement reports"). Idempotent
 * on (determination, partnerReference) and race-safe without transactions: the report is inserted first (its
 * unique key makes parallel posts one report), then made current by one conditional update of
 * the determination that also records the event, so exactly one post emits it. A report whose
 * second step never ran (a crash) is finished by its replay.
 */
export async function recordSettlementReport(
  store: ReportStore,
  determinationId: string,
  body: ReportBody,
  now: Date,
  /** Called once when this call made a report current (`settlement_reports_recorded_total`). */
  onMade?: () => void,
): Promise<Recorded> {
  const determination = await loadIssued(store, determinationId);
  if (determination.settlementMode !== 'DETERMINATION') {
    throw new AppError(
      'NOT_PARTNER_SETTLED',
      'This policy is settled by the service (Tier 2): the payout is ours to report, not the partner’s',
    );
  }
  if (!determination.triggered) {
    throw AppError.invalid(
      'This determination was not triggered: nothing is owed, so there is nothing to settle',
    );
  }
  if (owedOf(determination) === 0n) {
    // Triggered at 0 bp (or an amount that truncates to nothing): NOT_REQUIRED, no report due.
    throw AppError.invalid(
      `Nothing is owed on this determination (0 ${determination.currency}): there is nothing to settle or report`,
    );
  }
  const fingerprint = fingerprintOf(body);
  const earlier = await store.findReport(determinationId, body.partnerReference);
  if (earlier) return replay(store, determination, earlier, fingerprint, now, onMade);

  checkReport(determination, body, now);
  checkSupersedes(determination, body.supersedesReportId ?? null);

  const report: ReportDoc = {
    _id: randomUUID(),
    organizationId: store.organizationId,
    determinationId,
    partnerReference: body.partnerReference,
    fingerprint,
    outcome: body.outcome,
    method: body.method,
    settledAmountMinor: body.settledAmountMinor,
    settlementCurrency: body.settlementCurrency,
    settledAt: new Date(body.settledAt),
    reportedAt: now,
    supersedesReportId: body.supersedesReportId ?? null,
    supersededByReportId: null,
    notes: body.notes ?? null,
    recorded: false,
  };
  if ((await store.insertReport(report)) === 'duplicate') {
    // A parallel post with the same partnerReference inserted first.
    const winner = await store.findReport(determinationId, body.partnerReference);
    if (!winner) throw new Error(`report ${body.partnerReference} was a duplicate, then not found`);
    return replay(store, determination, winner, fingerprint, now, onMade);
  }
  return finish(store, determination, report, now, onMade);
}

/** The same (determination, partnerReference) again: the stored report, or a conflict. */
async function replay(
  store: ReportStore,
  determination: DeterminationDoc,
  report: ReportDoc,
  fingerprint: string,
  now: Date,
  onMade: (() => void) | undefined,
): Promise<Recorded> {
  if (report.fingerprint !== fingerprint) {
    throw AppError.conflict(
      `A different settlement report was already recorded with partnerReference "${report.partnerReference}"`,
      [{ field: 'partnerReference', message: 'already used with a different report' }],
    );
  }
  if (report.recorded) return { replayed: true, report, determination };
  // Its first post did not finish (or is finishing right now): finish it, emitting at most once.
  return finish(store, determination, report, now, onMade);
}

/** Makes a stored report current; `replayed` when a parallel post of it already had. */
async function finish(
  store: ReportStore,
  determination: DeterminationDoc,
  report: ReportDoc,
  now: Date,
  onMade: (() => void) | undefined,
): Promise<Recorded> {
  const made = await makeCurrent(store, determination, report, now);
  if (made.outcome === 'made') onMade?.();
  if (made.outcome === 'stale') {
    // Another report became current between our check and our update: ours corrects nothing
    // that is still current, so it is withdrawn and the partner told to correct the new one.
    await store.withdrawUnrecorded(report._id);
    throw staleCorrection(made.determination);
  }
  return {
    replayed: made.outcome === 'already',
    report: { ...report, recorded: true },
    determination: made.determination,
  };
}

/**
 * Makes the report current in one conditional update of the determination (with its event,
 * and the policy summary on the first report), then marks it recorded and its predecessor
 * superseded. `already` when a parallel post did it first; `stale` when another report is current.
 */
async function makeCurrent(
  store: ReportStore,
  determination: DeterminationDoc,
  report: ReportDoc,
  now: Date,
): Promise<{ outcome: 'made' | 'already' | 'stale'; determination: DeterminationDoc }> {
  const expected = report.supersedesReportId ?? null;
  const first = expected === null;
  const event = createEvent('determination.settlement_report_recorded', store.organizationId, {
    determinationId: determination._id,
    policyId: determination.policyId as string,
    policyNumber: determination.policyNumber as string,
    settlementMode: determination.settlementMode as string,
    settledByMicrocrop: false,
    verifiedByMicrocrop: false,
    verificationStatus: 'UNVERIFIED',
    partnerSettlementStatus: 'REPORTED',
    report: reportEventView(report),
    correction: !first,
    links: {
      determination: `/determinations/${determination._id}`,
      settlementReport: `/determinations/${determination._id}/settlement-report`,
    },
    note: RECORDED_NOTE,
  });
  const updated = await store.makeCurrent(determination._id, expected, {
    set: { currentReportId: report._id, partnerSettlementStatus: 'REPORTED', reportedAt: now },
    event,
    // The policy's summary moves on the first report only: a correction leaves it REPORTED.
    jobs: first ? [damageSummaryJob({ ...determination, partnerSettlementStatus: 'REPORTED' })] : [],
  });
  if (!updated) {
    const current = await store.determination(determination._id);
    if (!current) throw AppError.notFound('Determination');
    if (current.currentReportId !== report._id) return { outcome: 'stale', determination: current };
    await markRecorded(store, report);
    return { outcome: 'already', determination: current };
  }
  await markRecorded(store, report);
  return { outcome: 'made', determination: updated };
}

async function markRecorded(store: ReportStore, report: ReportDoc): Promise<void> {
  await store.markRecorded(report._id);
  if (report.supersedesReportId) await store.markSuperseded(report.supersedesReportId, report._id);
}

function staleCorrection(determination: DeterminationDoc): AppError {
  return AppError.conflict(
    determination.currentReportId
      ? `Another settlement report became current first; supersede report ${determination.currentReportId} instead`
      : 'The report to supersede is no longer current',
    [{ field: 'supersedesReportId', message: 'must name the current report of this determination' }],
  );
}

/** The amount owed in minor units, or null when it could not be computed (no exponent). */
function owedOf(determination: DeterminationDoc): bigint | null {
  const owed = determination.owedMinor;
  return owed === null || owed === undefined ? null : BigInt(owed);
}

/** Checks against the determination: currency, time, amount and outcome agree. */
function checkReport(determination: DeterminationDoc, body: ReportBody, now: Date): void {
  const problems: { field: string; message: string }[] = [];
  if (body.settlementCurrency !== determination.currency) {
    problems.push({
      field: 'settlementCurrency',
      message: `must be ${determination.currency}, the policy currency`,
    });
  }
  const settledAt = Date.parse(body.settledAt);
  if (settledAt > now.getTime() + SETTLED_AT_SKEW_MS) {
    problems.push({ field: 'settledAt', message: 'must not be in the future' });
  }
  // Nobody settles a claim before it is determined: a settledAt before the issue is a mistake
  // (a default 1970 date, a wrong field), and the report would be an attestation of nothing.
  const issuedAt = determination.issuedAt as Date;
  if (settledAt < issuedAt.getTime() - SETTLED_AT_SKEW_MS) {
    problems.push({
      field: 'settledAt',
      message: `must not be before the determination was issued (${issuedAt.toISOString()})`,
    });
  }
  const settled = BigInt(body.settledAmountMinor);
  const owed = owedOf(determination);
  if (owed !== null && settled > owed) {
    problems.push({
      field: 'settledAmountMinor',
      message: `must not exceed the amount owed (${owed} minor units of ${determination.currency})`,
    });
  } else if (body.outcome === 'NOT_SETTLED' && settled !== 0n) {
    problems.push({ field: 'settledAmountMinor', message: 'must be "0" when the outcome is NOT_SETTLED' });
  } else if (body.outcome === 'SETTLED_PARTIAL' && (settled === 0n || (owed !== null && settled >= owed))) {
    problems.push({
      field: 'settledAmountMinor',
      message: 'must be more than 0 and less than the amount owed when the outcome is SETTLED_PARTIAL',
    });
  } else if (body.outcome === 'SETTLED_FULL' && owed !== null && settled !== owed) {
    problems.push({
      field: 'settledAmountMinor',
      message: `must equal the amount owed (${owed}) when the outcome is SETTLED_FULL`,
    });
  }
  if (problems.length > 0) throw AppError.invalid('Invalid settlement report', problems);
}

/** A correction names the current report; a first report names none. */
function checkSupersedes(determination: DeterminationDoc, supersedes: string | null): void {
  const current = determination.currentReportId ?? null;
  if (supersedes === current) return;
  if (supersedes === null) {
    throw AppError.conflict(
      `A settlement report is already on file (${current}); send a correction with supersedesReportId`,
      [{ field: 'supersedesReportId', message: `must be ${current}, the current report` }],
    );
  }
  throw AppError.conflict(
    current
      ? `Report ${supersedes} is not the current report of this determination; the current one is ${current}`
      : `Report ${supersedes} is not a report of this determination; there is none to correct yet`,
    [{ field: 'supersedesReportId', message: 'must name the current report of this determination' }],
  );
}

async function loadIssued(store: ReportStore, determinationId: string): Promise<DeterminationDoc> {
  const d = await store.issuedDetermination(determinationId);
  if (!d) throw AppError.notFound('Determination');
  return d;
}

function fingerprintOf(body: ReportBody): string {
  const canonical = {
    partnerReference: body.partnerReference,
    outcome: body.outcome,
    method: body.method,
    settledAmountMinor: body.settledAmountMinor,
    settlementCurrency: body.settlementCurrency,
    settledAt: new Date(body.settledAt).toISOString(),
    supersedesReportId: body.supersedesReportId ?? null,
    notes: body.notes ?? null,
  };
  return createHash('sha256').update(canonicalBytes(canonical)).digest('hex');
}

/** The report, as the event carries it (`determination.settlement_report_recorded`). */
function reportEventView(r: ReportDoc) {
  return {
    id: r._id,
    partnerReference: r.partnerReference,
    outcome: r.outcome,
    method: r.method,
    settledAmountMinor: r.settledAmountMinor,
    settlementCurrency: r.settlementCurrency,
    settledAt: r.settledAt.toISOString(),
    reportedAt: r.reportedAt.toISOString(),
    supersedesReportId: r.supersedesReportId ?? null,
  };
}

/** What partners read of a report. */
export function reportView(r: ReportDoc) {
  return {
    ...reportEventView(r),
    supersededByReportId: r.supersededByReportId ?? null,
    notes: r.notes ?? null,
  };
}

/** Every report of a determination, newest first, with where it stands. */
export async function settlementReportsOf(store: ReportStore, determinationId: string) {
  const determination = await loadIssued(store, determinationId);
  const reports = await store.reportsOf(determinationId);
  // An unfinished report (its second step never ran) is not on file until its replay finishes it.
  const onFile = reports.filter((r) => r.recorded || r._id === determination.currentReportId);
  const current = onFile.find((r) => r._id === determination.currentReportId) ?? null;
  return {
    determinationId,
    current: current ? reportView(current) : null,
    reports: onFile.map(reportView),
    ...settlementStatusOf(determination),
  };
}

export { determinationLinks };
