import type { ServerState } from './state';
import { type Doc, indexValuesAtPath } from './store/values';

/**
 * Deletes documents whose TTL-indexed date is older than `expireAfterSeconds`, every
 * `ttlMonitorSleepSecs` (60 by default, like mongod). An array of dates expires on its
 * earliest date; a non-date value never expires.
 */
export class TtlMonitor {
  private timer?: NodeJS.Timeout;
  private running = false;

  constructor(private readonly state: ServerState) {}

  start(): void {
    this.running = true;
    this.schedule();
  }

  /** Re-arms the timer with the current interval (after `setParameter`). */
  reschedule(): void {
    if (this.running) this.schedule();
  }

  stop(): void {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
  }

  private schedule(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.sweep();
      this.schedule();
    }, this.state.parameters.ttlMonitorSleepSecs * 1000);
    this.timer.unref();
  }

  sweep(now = Date.now()): number {
    let removed = 0;
    for (const collection of this.state.catalog.allCollections()) {
      for (const index of collection.ttlIndexes()) {
        const field = index.fields[0] as string;
        const cutoff = now - (index.spec.expireAfterSeconds as number) * 1000;
        const expired = (doc: Doc) =>
          indexValuesAtPath(doc, field).some((v) => v instanceof Date && v.getTime() <= cutoff);
        for (const doc of collection.all().filter(expired)) {
          collection.remove(doc);
          removed++;
        }
      }
    }
    try {
      this.state.commitMutations();
    } catch {
      // Reported by the persistence layer; the expired documents would only expire again.
    }
    this.state.cursors.sweepIdle(now);
    return removed;
  }
}
