import type { Metrics } from '@parametric/metrics';

/**
 * What became of one delivery attempt (`webhook_deliveries_total{outcome}`):
 * - `delivered`: the partner answered 2xx and the row became DELIVERED;
 * - `retrying`: the attempt failed and another is scheduled (the row stays PENDING);
 * - `failed`: the attempt failed and it was the last of its cycle (the row became FAILED);
 * - `skipped`: no request was made because the organization has no webhook URL (the row waits,
 *   PENDING with no attempt due, and the first URL set starts it: deliveries/domain.ts).
 */
export const DELIVERY_OUTCOMES = ['delivered', 'retrying', 'failed', 'skipped'] as const;
export type DeliveryOutcome = (typeof DELIVERY_OUTCOMES)[number];

/** The `attempt` label: `1`..`5`, then `6+` (a configured budget above five shares one series). */
export const ATTEMPT_LABELS = ['1', '2', '3', '4', '5', '6+'] as const;
export function attemptLabel(attempt: number): (typeof ATTEMPT_LABELS)[number] {
  return attempt >= 6 ? '6+' : (String(Math.max(1, Math.trunc(attempt))) as (typeof ATTEMPT_LABELS)[number]);
}

/** Seconds from the event's creation to its delivery: immediate (ms) up to the retry schedule's hours. */
export const DELIVERY_LATENCY_BUCKETS = [
  0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600, 7200, 21600,
];

/** Counted where the outcome is committed (the conditional write that changed the row), once each. */
export interface DeliveryMetrics {
  outcome(outcome: DeliveryOutcome, attempt: number): void;
  /** A delivery recorded DELIVERED: `eventCreatedAt` is the event's `createdAt` (ms since epoch). */
  delivered(eventCreatedAt: number, at: number): void;
}

/**
 * `webhook_deliveries_total{outcome,attempt}` and `webhook_delivery_latency_seconds`, registered
 * now (every outcome × attempt series starts at 0, so rates and alerts see them from the first
 * scrape).
 */
export function deliveryMetrics(metrics: Metrics): DeliveryMetrics {
  const deliveries = metrics.counter(
    'webhook_deliveries_total',
    'Webhook delivery attempts by outcome (delivered, retrying, failed: the last attempt of its cycle, skipped: no endpoint) and attempt number (1..5, 6+)',
    ['outcome', 'attempt'],
  );
  const latency = metrics.histogram(
    'webhook_delivery_latency_seconds',
    "Seconds from an event's creation to its successful delivery to the partner (retries included)",
    [],
    DELIVERY_LATENCY_BUCKETS,
  );
  const children = new Map<string, () => void>();
  for (const outcome of DELIVERY_OUTCOMES) {
    for (const attempt of ATTEMPT_LABELS) {
      const child = deliveries.labels({ outcome, attempt });
      child.inc(0);
      children.set(`${outcome} ${attempt}`, () => child.inc());
    }
  }
  return {
    outcome(outcome, attempt) {
      children.get(`${outcome} ${attemptLabel(attempt)}`)?.();
    },
    delivered(eventCreatedAt, at) {
      if (Number.isFinite(eventCreatedAt)) latency.observe(Math.max(0, (at - eventCreatedAt) / 1000));
    },
  };
}

const CREATED_AT = '"createdAt":"';

/**
 * The event's `createdAt` from a delivery body (`{"id","event","createdAt","data"}`, serialised
 * by the consumer in that order), without parsing the whole body; NaN when it is not there.
 */
export function eventCreatedAtOf(body: string): number {
  const start = body.indexOf(CREATED_AT);
  if (start === -1) return Number.NaN;
  const from = start + CREATED_AT.length;
  const end = body.indexOf('"', from);
  return end === -1 ? Number.NaN : Date.parse(body.slice(from, end));
}
