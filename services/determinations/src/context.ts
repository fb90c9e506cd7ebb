import type { Clock } from './clock';
import type { DeterminationDoc } from './determinations/model';
import type { IngestDeps } from './ingestion/domain';
import type { SandboxDeterminationInput } from './ingestion/sandbox';
import type { AllDeterminations, TenantDeterminations } from './repositories';

/** What a partner request's handler may touch: the calling organization's data, nothing wider. */
export interface PartnerContext {
  tenant: TenantDeterminations;
  now: Clock;
  /** A sandbox organization's test determination (ingestion/sandbox.ts), bound to the caller. */
  issueSandboxDetermination(input: SandboxDeterminationInput): Promise<DeterminationDoc>;
}

/** Ops actions: ingestion (across organizations by design) and reads of every determination. */
export interface OpsContext {
  data: AllDeterminations;
  ingest: IngestDeps;
  onUnexpected(err: unknown, index: number): void;
}
