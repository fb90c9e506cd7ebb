import { acrossOrganizations, organizationDocument, scopedTo } from '@parametric/mongo';
import type { Connection } from 'mongoose';
import { farmerModel } from './farmers/model';
import { herdModel } from './herds/model';
import { plotModel } from './plots/model';
import { policyModel } from './policies/model';
import { capacityModel, licenceModel } from './underwriting/model';

/** Every model of the service (its `migrate` command creates their indexes). */
function policyModelsOn(connection: Connection) {
  return {
    farmers: farmerModel(connection),
    plots: plotModel(connection),
    herds: herdModel(connection),
    policies: policyModel(connection),
    licences: licenceModel(connection),
    capacity: capacityModel(connection),
  };
}

export const policyModels = (connection: Connection) => Object.values(policyModelsOn(connection));

/** Tenant bindings kept for reuse (see `forOrganization`). */
const TENANT_BINDINGS_KEPT = 10_000;

/**
 * The policy service's data, two ways in: bound to one organization (partner request
 * handlers, and ops actions on one organization), or across organizations (farmer KYC by
 * farmer id, the sweeps, the activation worker's look-ups, the outbox relay).
 */
export function policyRepositories(connection: Connection) {
  const models = policyModelsOn(connection);
  const bind = (organizationId: string) =>
    Object.freeze({
      organizationId,
      farmers: scopedTo(models.farmers, organizationId),
      plots: scopedTo(models.plots, organizationId),
      herds: scopedTo(models.herds, organizationId),
      policies: scopedTo(models.policies, organizationId),
      licences: scopedTo(models.licences, organizationId),
      capacity: organizationDocument(models.capacity, organizationId),
    });
  // A binding is a few dozen closures over one organization id and never changes: every partner
  // request made one, so the most recent ones are kept and handed out again (frozen, so no
  // caller can change what the next one gets).
  const bound = new Map<string, ReturnType<typeof bind>>();
  return {
    init: () => Promise.all(Object.values(models).map((model) => model.init())),
    forOrganization: (organizationId: string) => {
      let tenant = bound.get(organizationId);
      if (!tenant) {
        if (bound.size >= TENANT_BINDINGS_KEPT) {
          const oldest = bound.keys().next();
          if (!oldest.done) bound.delete(oldest.value);
        }
        tenant = bind(organizationId);
        bound.set(organizationId, tenant);
      }
      return tenant;
    },
    acrossOrganizations: () => ({
      farmers: acrossOrganizations(models.farmers),
      policies: acrossOrganizations(models.policies),
    }),
  };
}

export type PolicyRepositories = ReturnType<typeof policyRepositories>;
/** One organization's policy data: what partner handlers and domain functions receive. */
export type TenantPolicyData = ReturnType<PolicyRepositories['forOrganization']>;
