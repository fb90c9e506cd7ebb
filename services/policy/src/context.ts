import type { InternalContext } from '@parametric/http';
import type { Clock } from './clock';
import type { Activator } from './policies/activation';
import type { OrganizationSnapshot } from './policies/gates';
import type { PolicyRepositories, TenantPolicyData } from './repositories';

/** What a partner request's handler may touch: the calling organization's data, nothing wider. */
export interface PartnerContext {
  tenant: TenantPolicyData;
  organization: OrganizationSnapshot;
  activator: Activator;
  now: Clock;
}

/**
 * Ops actions: on one organization (its `{id}`) through `forOrganization`, or by farmer or
 * policy id through `acrossOrganizations`.
 */
export interface OpsContext {
  repositories: PolicyRepositories;
  now: Clock;
}

/** The organization snapshot the gateway signs into every partner request it forwards. */
export function organizationSnapshotOf(caller: InternalContext): OrganizationSnapshot {
  const organization = caller.organization;
  if (!organization) throw new Error('the gateway did not send the organization snapshot');
  return organization;
}
