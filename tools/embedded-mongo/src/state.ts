import { CursorRegistry } from './cursors';
import { Catalog } from './store/catalog';

/** Server parameters that `setParameter`/`getParameter` expose. */
export interface ServerParameters {
  ttlMonitorSleepSecs: number;
}

/** Everything the commands share: data, cursors and tunables. */
export class ServerState {
  readonly catalog = new Catalog();
  readonly cursors = new CursorRegistry();
  readonly startedAt = new Date();
  readonly parameters: ServerParameters;
  /** Called when a parameter changes, so timers pick up the new value at once. */
  onParametersChanged: () => void = () => {};
  activeConnections = 0;
  totalConnections = 0;
  /**
   * Makes the changes since the last call durable (the journal, when the server persists).
   * Called after every command and TTL sweep; a no-op in memory-only mode.
   */
  commitMutations: () => void = () => {};

  constructor(parameters: Partial<ServerParameters> = {}) {
    this.parameters = { ttlMonitorSleepSecs: 60, ...parameters };
  }
}
