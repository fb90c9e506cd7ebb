export {
  type MigrationConfig,
  type MigrationDeclaration,
  migrate,
  migrationConfigSchema,
  runMigration,
} from './migrate';
export {
  onStopRequests,
  PARENT_CHECK_MS,
  REPEAT_WINDOW_MS,
  type StopReason,
  type StopRequestHandlers,
  type StopRequestOptions,
  stopRequests,
} from './process';
export { INDEX_CHECK_TIMEOUT_MS, INDEX_RECHECK_MS, type IndexWatch, watchUniqueIndexes } from './readiness';
export { type Running, runService, SHUTDOWN_DEADLINE_MS, startSpanExport } from './run';
export {
  type ApiDeclaration,
  type Closable,
  type ListenerDeclaration,
  type PartnerCaller,
  type PlatformConfig,
  type Producers,
  type RelayDeclaration,
  type RelayedModel,
  type Repositories,
  type RepositoryStores,
  type RunningService,
  type ServiceDeclaration,
  type ServiceKit,
  type ServiceListener,
  type ServiceParts,
  STOP_STEP_MS,
  type SweepsDeclaration,
  startService,
} from './service';
