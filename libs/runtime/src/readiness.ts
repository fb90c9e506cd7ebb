import { type HealthCheck, runChecks } from '@parametric/http';
import type { Logger } from '@parametric/logger';
import type { Metrics } from '@parametric/metrics';
import { describeIndex, type IndexedModel, missingUniqueIndexes } from '@parametric/mongo';
import type { Connection } from 'mongoose';

/**
 * The one readiness rule of every service (docs/deploy.md, "Readiness"): a pod is ready when it
 * can serve. It is not ready without MongoDB (every request reads or writes it) or, in
 * production, without its unique indexes (they are what refuses a duplicate). A dependency the
 * service serves without — Redis behind the gateway's rate limiter (memory fallback) or behind
 * the outboxes (events wait in MongoDB) — is `degraded`: shown in `/readyz`'s body and in
 * `dependency_degraded{dependency}`, never a reason to leave the Service, since losing a shared
 * dependency would otherwise take every replica out at once.
 */

/** How often a service in production looks again for a missing unique index. */
export const INDEX_RECHECK_MS = 10_000;
/** How long one look (listIndexes on each collection) may take before it counts as missing. */
export const INDEX_CHECK_TIMEOUT_MS = 5_000;

export interface IndexWatch {
  /** The readiness check: true once every declared unique index exists as declared. */
  check: HealthCheck;
  stop(): void;
}

/**
 * Checks at start (awaited) that the models' unique indexes exist, and while one is missing
 * logs one error naming them, then looks again every `intervalMs` (each look bounded by
 * `timeoutMs`) until they all exist, logs that, and stops looking. The service runs meanwhile
 * but stays not-ready: `migrate` (libs/runtime/src/migrate.ts) is what creates them.
 */
export async function watchUniqueIndexes(options: {
  connection: Connection;
  models: readonly IndexedModel[];
  logger: Logger;
  intervalMs?: number;
  timeoutMs?: number;
}): Promise<IndexWatch> {
  const { connection, models, logger } = options;
  const intervalMs = options.intervalMs ?? INDEX_RECHECK_MS;
  const timeoutMs = options.timeoutMs ?? INDEX_CHECK_TIMEOUT_MS;
  let present = false;
  let reported = '';
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;

  const look = async () => {
    let missing: string[];
    try {
      missing = (await withDeadline(missingUniqueIndexes(connection, models), timeoutMs)).map(describeIndex);
    } catch (err) {
      // MongoDB unreachable or slow: `mongo` is already not ready; look again later.
      logger.warn({ err: err instanceof Error ? err.message : String(err) }, 'could not list the indexes');
      return;
    }
    if (missing.length === 0) {
      present = true;
      if (reported) logger.info('unique indexes present: ready');
      return;
    }
    const now = missing.join('; ');
    if (now !== reported) {
      reported = now;
      logger.error(
        { missing },
        `unique index missing: ${now} — not ready until the migrate command (the migrate Job) creates it`,
      );
    }
  };

  const schedule = () => {
    if (present || stopped) return;
    timer = setTimeout(() => void look().then(schedule), intervalMs);
    timer.unref();
  };

  await look();
  schedule();
  return {
    check: async () => present,
    stop: () => {
      stopped = true;
      clearTimeout(timer);
    },
  };
}

/**
 * `dependency_degraded{dependency}`: 1 while a dependency the service serves without is down,
 * 0 while it answers, checked at scrape time (each check bounded like `/readyz`'s).
 */
export function observeDegraded(
  metrics: Metrics,
  checks: Record<string, HealthCheck>,
  timeoutMs = 2_000,
): void {
  const names = Object.keys(checks);
  if (names.length === 0) return;
  metrics.gauge(
    'dependency_degraded',
    'Whether a dependency the service serves without (a fallback covers it) is down: 1 down, 0 up, checked at scrape time',
    ['dependency'],
    async (gauge) => {
      const up = await runChecks(checks, timeoutMs);
      for (const name of names) gauge.set({ dependency: name }, up[name] ? 0 : 1);
    },
  );
}

async function withDeadline<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      work,
      new Promise<never>((_resolve, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
