import type { EventEnvelope } from '@parametric/events';
import type { JobOutboxEntry } from '@parametric/queue';
import type { DeterminationDoc } from '../../src/determinations/model';
import type { ReportDoc } from '../../src/reports/model';
import type { CurrentReportChange, ReportStore } from '../../src/reports/store';

/**
 * Determinations and settlement reports in memory, for every organization, with the guarantees
 * the MongoDB store gives the rules: reads are copies (as `.lean()` is), the insert is unique on
 * (determinationId, partnerReference) across organizations (the unique index), and the
 * determination's update applies only while its current report is the expected one. Each call
 * yields before it acts, so parallel calls interleave as requests do.
 */
export class MemoryReports {
  readonly determinations = new Map<string, DeterminationDoc>();
  readonly reports = new Map<string, ReportDoc>();

  add(determination: DeterminationDoc): void {
    this.determinations.set(determination._id, structuredClone(determination));
  }

  /** The store one organization's requests get (what `reportStoreOf(tenant)` is in production). */
  forOrganization(organizationId: string): ReportStore {
    const own = (d: DeterminationDoc | undefined) =>
      d && d.organizationId === organizationId ? d : undefined;
    const ownReport = (r: ReportDoc | undefined) =>
      r && r.organizationId === organizationId ? r : undefined;
    const copy = <T>(value: T | undefined): T | null => (value === undefined ? null : structuredClone(value));
    return {
      organizationId,
      issuedDetermination: async (id) => {
        await turn();
        const d = own(this.determinations.get(id));
        return copy(d?.status === 'ISSUED' ? d : undefined);
      },
      determination: async (id) => {
        await turn();
        return copy(own(this.determinations.get(id)));
      },
      findReport: async (determinationId, partnerReference) => {
        await turn();
        return copy(
          [...this.reports.values()].find(
            (r) =>
              r.organizationId === organizationId &&
              r.determinationId === determinationId &&
              r.partnerReference === partnerReference,
          ),
        );
      },
      insertReport: async (report) => {
        await turn();
        const taken = [...this.reports.values()].some(
          (r) =>
            r.determinationId === report.determinationId && r.partnerReference === report.partnerReference,
        );
        if (taken) return 'duplicate';
        this.reports.set(report._id, structuredClone({ ...report, organizationId }));
        return 'inserted';
      },
      makeCurrent: async (determinationId, expectedCurrent, change: CurrentReportChange) => {
        await turn();
        const d = own(this.determinations.get(determinationId));
        if (!d || (d.currentReportId ?? null) !== expectedCurrent) return null;
        Object.assign(d, structuredClone(change.set));
        d.outbox = [...(d.outbox ?? []), structuredClone(change.event)];
        d.outboxPending = true;
        if (change.jobs.length) {
          d.jobOutbox = [...(d.jobOutbox ?? []), ...structuredClone(change.jobs)];
          d.jobOutboxPending = true;
        }
        return structuredClone(d);
      },
      markRecorded: async (reportId) => {
        await turn();
        const r = ownReport(this.reports.get(reportId));
        if (r) r.recorded = true;
      },
      markSuperseded: async (reportId, byReportId) => {
        await turn();
        const r = ownReport(this.reports.get(reportId));
        if (r) r.supersededByReportId = byReportId;
      },
      withdrawUnrecorded: async (reportId) => {
        await turn();
        const r = ownReport(this.reports.get(reportId));
        if (r && !r.recorded) this.reports.delete(reportId);
      },
      reportsOf: async (determinationId) => {
        await turn();
        return [...this.reports.values()]
          .filter((r) => r.organizationId === organizationId && r.determinationId === determinationId)
          .sort(
            (a, b) =>
              b.reportedAt.getTime() - a.reportedAt.getTime() || (a._id < b._id ? 1 : a._id > b._id ? -1 : 0),
          )
          .map((r) => structuredClone(r));
      },
    };
  }

  /** The events recorded on a determination's outbox. */
  eventsOf(determinationId: string): EventEnvelope[] {
    return (this.determinations.get(determinationId)?.outbox ?? []) as EventEnvelope[];
  }

  /** The jobs recorded on a determination's job outbox. */
  jobsOf(determinationId: string): JobOutboxEntry[] {
    return this.determinations.get(determinationId)?.jobOutbox ?? [];
  }

  reportsOn(determinationId: string): ReportDoc[] {
    return [...this.reports.values()].filter((r) => r.determinationId === determinationId);
  }
}

/** Lets other calls run first, as a round trip to the database would. */
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));
