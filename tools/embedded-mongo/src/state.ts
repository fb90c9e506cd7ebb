import { CursorRegistry } from './cursors';
import { Catalog } from './store/catalog';

/** Server parameters that `setParameter`/`getParameter` expose. */
export interface ServerParameters {
  ttlMonitorSleepSecs: number;
}

/** How often, and for how long (µs), one kind of operation ran on one namespace (`top`). */
export interface Usage {
  count: number;
  time: number;
}

/** The kinds `top` reports per namespace, as mongod names them. */
export const USAGE_KINDS = ['queries', 'getmore', 'insert', 'update', 'remove', 'commands'] as const;
export type UsageKind = (typeof USAGE_KINDS)[number];

/** Everything the commands share: data, cursors, tunables and what ran. */
export class ServerState {
  readonly catalog = new Catalog();
  readonly cursors = new CursorRegistry();
  readonly startedAt = new Date();
  readonly parameters: ServerParameters;
  /** Called when a parameter changes, so timers pick up the new value at once. */
  onParametersChanged: () => void = () => {};
  activeConnections = 0;
  totalConnections = 0;
  /** Per command name, since start: serverStatus's `metrics.commands`. */
  readonly commandCounts = new Map<string, { total: number; failed: number }>();
  /** Per namespace (`db.collection`) and kind, since start: the `top` command's figures. */
  readonly namespaceUsage = new Map<string, Map<UsageKind, Usage>>();
  /**
   * Makes the changes since the last call durable (the journal, when the server persists).
   * Called after every command and TTL sweep; a no-op in memory-only mode.
   */
  commitMutations: () => void = () => {};

  constructor(parameters: Partial<ServerParameters> = {}) {
    this.parameters = { ttlMonitorSleepSecs: 60, ...parameters };
  }

  /** Counts one command that ran: by name, and on its namespace (if it names one) by kind. */
  recordCommand(
    name: string,
    namespace: string | undefined,
    kind: UsageKind,
    micros: number,
    failed: boolean,
  ) {
    const counts = this.commandCounts.get(name) ?? { total: 0, failed: 0 };
    counts.total++;
    if (failed) counts.failed++;
    this.commandCounts.set(name, counts);
    if (namespace === undefined) return;
    let usage = this.namespaceUsage.get(namespace);
    if (!usage) {
      usage = new Map();
      this.namespaceUsage.set(namespace, usage);
    }
    const u = usage.get(kind) ?? { count: 0, time: 0 };
    u.count++;
    u.time += micros;
    usage.set(kind, u);
  }
}
