export {
  onStopRequests,
  PARENT_CHECK_MS,
  REPEAT_WINDOW_MS,
  type StopReason,
  type StopRequestHandlers,
  type StopRequestOptions,
  stopRequests,
} from './process';
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
  type RunningService,
  STOP_STEP_MS,
  type ServiceDeclaration,
  type ServiceKit,
  type ServiceListener,
  type ServiceParts,
  type SweepsDeclaration,
  startService,
} from './service';
