import { createEvent, withOutboxEvents } from '@parametric/events';
import type { Logger } from '@parametric/logger';
import { type Sweep, type TaskOf, withOutboxJobs } from '@parametric/queue';
import type { Clock } from '../clock';
import type { DeterminationDoc } from '../determinations/model';
import { damageSummaryJob } from '../determinations/summaries';
import { OVERDUE_NOTE } from '../reports/domain';
import type { AllDeterminations } from '../repositories';

const BATCH = 500;

/**
 * Marks every Tier 1 determination whose reporting due date has passed with no report OVERDUE,
 * and records `determination.settlement_report_overdue` in the same conditional update: at most
 * once per determination, however many sweepers run at the same time. Returns how many it marked.
 */
export async function markOverdue(
  data: Pick<AllDeterminations, 'determinations'>,
  now: Date,
): Promise<number> {
  let marked = 0;
  for (;;) {
    const due = (await data.determinations
      .find({ partnerSettlementStatus: 'PENDING', dueAt: { $lte: now } })
      .sort({ dueAt: 1 })
      .limit(BATCH)
      .lean()) as DeterminationDoc[];
    for (const d of due) {
      const event = createEvent('determination.settlement_report_overdue', d.organizationId as string, {
        determinationId: d._id,
        policyId: d.policyId as string,
        policyNumber: d.policyNumber as string,
        settlementMode: d.settlementMode as string,
        settledByMicrocrop: false,
        partnerSettlementStatus: 'OVERDUE',
        dueAt: (d.dueAt as Date).toISOString(),
        determinedAt: (d.issuedAt as Date).toISOString(),
        links: {
          determination: `/determinations/${d._id}`,
          settlementReport: `/determinations/${d._id}/settlement-report`,
        },
        note: OVERDUE_NOTE,
      });
      const update = withOutboxJobs(
        withOutboxEvents<DeterminationDoc>(
          { $set: { partnerSettlementStatus: 'OVERDUE', overdueAt: now } },
          event,
        ),
        damageSummaryJob({ ...d, partnerSettlementStatus: 'OVERDUE' }),
      );
      // The status is the guard: a report recorded meanwhile (REPORTED) or a parallel sweeper
      // that got here first (OVERDUE) leaves nothing for this update to match.
      const result = await data.determinations.updateOne(
        { _id: d._id, partnerSettlementStatus: 'PENDING', dueAt: { $lte: now } },
        update,
      );
      marked += result.modifiedCount;
    }
    if (due.length < BATCH) return marked;
  }
}

/** The overdue sweep, run every `intervalMs` (scheduled by `startSweeps` of libs/queue). */
export function overdueSweeps(options: {
  data: Pick<AllDeterminations, 'determinations'>;
  intervalMs: number;
  logger: Logger;
  clock: Clock;
}): Record<TaskOf<'determination-sweeps'>, Sweep> {
  return {
    'mark-overdue': {
      everyMs: options.intervalMs,
      run: async () => {
        const marked = await markOverdue(options.data, options.clock());
        if (marked > 0) options.logger.info({ marked }, 'settlement reports overdue');
      },
    },
  };
}
