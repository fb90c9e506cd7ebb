import { acrossOrganizations, scopedTo } from '@parametric/mongo';
import type { Connection, Model } from 'mongoose';
import { coverModel } from './cover/model';
import { mongoCoverStore } from './cover/mongo-store';
import {
  type DeterminationDoc,
  determinationModel,
  type EvidenceDoc,
  evidenceModel,
} from './determinations/model';
import { ingestionKeyModel } from './ingestion/model';
import { reportModel } from './reports/model';

/** Every model of the service (its `migrate` command creates their indexes). */
function determinationModelsOn(connection: Connection) {
  return {
    determinations: determinationModel(connection),
    evidence: evidenceModel(connection),
    reports: reportModel(connection),
    ingestionKeys: ingestionKeyModel(connection),
    covers: coverModel(connection),
  };
}

export const determinationModels = (connection: Connection) =>
  Object.values(determinationModelsOn(connection));

type Tenanted<T> = Omit<T, 'organizationId'> & { organizationId: string };

/**
 * The determinations service's data, two ways in: bound to one organization (partner
 * requests: reads and settlement reports), or across organizations (ingestion, which finds the
 * organization through the policy; the overdue sweep; the outbox relays; ops reads).
 */
export function determinationRepositories(connection: Connection) {
  const models = determinationModelsOn(connection);
  return {
    init: () => Promise.all(Object.values(models).map((model) => model.init())),
    forOrganization: (organizationId: string) => ({
      organizationId,
      // Unattributed records have no organization (null): no tenant filter can match them.
      determinations: scopedTo(
        models.determinations as unknown as Model<Tenanted<DeterminationDoc>>,
        organizationId,
      ),
      evidence: scopedTo(models.evidence as unknown as Model<Tenanted<EvidenceDoc>>, organizationId),
      reports: scopedTo(models.reports, organizationId),
    }),
    acrossOrganizations: () => ({
      determinations: acrossOrganizations(models.determinations),
      evidence: acrossOrganizations(models.evidence),
      ingestionKeys: acrossOrganizations(models.ingestionKeys),
      /** Each policy's cover: what its determinations owe together (src/cover). */
      covers: mongoCoverStore(models.covers),
    }),
  };
}

export type DeterminationRepositories = ReturnType<typeof determinationRepositories>;
/** One organization's determinations: what partner handlers and domain functions receive. */
export type TenantDeterminations = ReturnType<DeterminationRepositories['forOrganization']>;
export type AllDeterminations = ReturnType<DeterminationRepositories['acrossOrganizations']>;
