import { SETTLEMENT_MODES } from '@parametric/contracts';
import type { Metrics } from '@parametric/metrics';
import type { DeterminationModel } from './determinations/model';

/** A bounded wait for the scrape-time count: a slow MongoDB leaves the series out, not the scrape hung. */
const COUNT_TIMEOUT_MS = 1000;

type Tier = (typeof SETTLEMENT_MODES)[number];

/** The domain counters of this service, incremented where each change is committed (once each). */
export interface DeterminationMetrics {
  /** A determination inserted ISSUED (`tier`: the policy's settlement mode). */
  issued(tier: string): void;
  /** A determination inserted UNATTRIBUTED (no policy of any organization matched). */
  unattributed(): void;
  /** A settlement report made current (a new report or a correction; not a replay). */
  reportRecorded(): void;
}

/**
 * `determinations_issued_total{tier}`, `determinations_unattributed_total`,
 * `settlement_reports_recorded_total` and `settlement_reports_overdue` (determinations whose
 * report is OVERDUE now, counted at scrape time), registered at start.
 */
export function determinationMetrics(
  metrics: Metrics,
  determinations: DeterminationModel,
): DeterminationMetrics {
  const issued = metrics.counter(
    'determinations_issued_total',
    'Determinations issued (signed), by tier: the policy settlement mode (DETERMINATION, DETERMINATION_AND_SETTLEMENT)',
    ['tier'],
  );
  for (const tier of SETTLEMENT_MODES) issued.inc({ tier }, 0);
  const unattributed = metrics.counter(
    'determinations_unattributed_total',
    'Determinations recorded UNATTRIBUTED: no policy of any organization matched them',
    [],
  );
  const reports = metrics.counter(
    'settlement_reports_recorded_total',
    'Tier 1 settlement reports recorded (made current: first reports and corrections; replays not counted)',
    [],
  );
  metrics.gauge(
    'settlement_reports_overdue',
    'Tier 1 determinations whose settlement report is overdue now (OVERDUE, no report since), counted at scrape time',
    [],
    async (gauge) => {
      gauge.reset();
      try {
        const count = await withDeadline(
          determinations.collection.countDocuments(
            { partnerSettlementStatus: 'OVERDUE' },
            { maxTimeMS: COUNT_TIMEOUT_MS },
          ),
          COUNT_TIMEOUT_MS + 100,
        );
        gauge.set(count);
      } catch {
        // No series in this scrape rather than a stale number (alert on its absence).
      }
    },
  );
  const tiers = new Set<string>(SETTLEMENT_MODES);
  return {
    issued: (tier) => {
      // Bounded: a settlement mode outside the enum (it cannot be one) is not a new series.
      if (tiers.has(tier)) issued.inc({ tier: tier as Tier });
    },
    unattributed: () => unattributed.inc(),
    reportRecorded: () => reports.inc(),
  };
}

function withDeadline<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`did not settle within ${ms} ms`)), ms);
  });
  promise.catch(() => undefined);
  return Promise.race([promise, expired]).finally(() => clearTimeout(timer));
}
