import type { EventEnvelope } from '@parametric/events';
import { withOutboxEvents } from '@parametric/events';
import { isDuplicateKey } from '@parametric/mongo';
import { type JobOutboxEntry, withOutboxJobs } from '@parametric/queue';
import type { DeterminationDoc } from '../determinations/model';
import type { TenantDeterminations } from '../repositories';
import type { ReportDoc } from './model';

/** What making a report current writes on the determination, in the one conditional update. */
export interface CurrentReportChange {
  set: { currentReportId: string; partnerSettlementStatus: 'REPORTED'; reportedAt: Date };
  /** `determination.settlement_report_recorded`, to the determination's event outbox. */
  event: EventEnvelope;
  /** The policy summary job (the first report only), to its job outbox. */
  jobs: JobOutboxEntry[];
}

/**
 * What the settlement-report rules (./domain.ts) need of storage, for one organization: the
 * production store is MongoDB through the tenant scope (`reportStoreOf`); the domain tests use an
 * in-memory one behind this same interface. Every write the rules rely on for races is a
 * conditional operation here: an insert unique on (determinationId, partnerReference), and the
 * determination's update guarded by its current report.
 */
export interface ReportStore {
  readonly organizationId: string;
  /** The organization's determination with this id, if it is issued (never another's). */
  issuedDetermination(determinationId: string): Promise<DeterminationDoc | null>;
  /** The organization's determination as it is now, whatever its state. */
  determination(determinationId: string): Promise<DeterminationDoc | null>;
  findReport(determinationId: string, partnerReference: string): Promise<ReportDoc | null>;
  /** `duplicate` when a report with the same (determinationId, partnerReference) exists. */
  insertReport(report: ReportDoc): Promise<'inserted' | 'duplicate'>;
  /**
   * Applies `change` (fields, event, jobs) in one write if the determination's current report is
   * still `expectedCurrent`; the determination after it, or null when it was not.
   */
  makeCurrent(
    determinationId: string,
    expectedCurrent: string | null,
    change: CurrentReportChange,
  ): Promise<DeterminationDoc | null>;
  markRecorded(reportId: string): Promise<void>;
  markSuperseded(reportId: string, byReportId: string): Promise<void>;
  /** Deletes a report that was never made current (`recorded: false`); a recorded one stays. */
  withdrawUnrecorded(reportId: string): Promise<void>;
  /** Every report of the determination, newest first (`reportedAt`, then id). */
  reportsOf(determinationId: string): Promise<ReportDoc[]>;
}

type Tenant = Pick<TenantDeterminations, 'organizationId' | 'determinations' | 'reports'>;

/** The production store: the organization's determinations and reports in MongoDB. */
export function reportStoreOf(tenant: Tenant): ReportStore {
  const { determinations, reports } = tenant;
  return {
    organizationId: tenant.organizationId,
    issuedDetermination: async (id) =>
      (await determinations.findOne({ _id: id, status: 'ISSUED' }).lean()) as DeterminationDoc | null,
    determination: async (id) => (await determinations.findById(id).lean()) as DeterminationDoc | null,
    findReport: async (determinationId, partnerReference) =>
      (await reports.findOne({ determinationId, partnerReference }).lean()) as ReportDoc | null,
    insertReport: async (report) => {
      const { organizationId: _scoped, ...fields } = report;
      try {
        await reports.create(fields);
        return 'inserted';
      } catch (err) {
        if (isDuplicateKey(err)) return 'duplicate';
        throw err;
      }
    },
    makeCurrent: async (determinationId, expectedCurrent, change) => {
      const update = withOutboxJobs(
        withOutboxEvents<DeterminationDoc>({ $set: change.set }, change.event),
        ...change.jobs,
      );
      return (await determinations.findOneAndUpdate(
        { _id: determinationId, currentReportId: expectedCurrent },
        update,
      )) as DeterminationDoc | null;
    },
    markRecorded: async (reportId) => {
      await reports.updateOne({ _id: reportId }, { $set: { recorded: true } });
    },
    markSuperseded: async (reportId, byReportId) => {
      await reports.updateOne({ _id: reportId }, { $set: { supersededByReportId: byReportId } });
    },
    withdrawUnrecorded: async (reportId) => {
      await reports.deleteOne({ _id: reportId, recorded: false });
    },
    reportsOf: async (determinationId) =>
      (await reports.find({ determinationId }).sort({ reportedAt: -1, _id: -1 }).lean()) as ReportDoc[],
  };
}
