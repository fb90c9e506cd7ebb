import { isoOrNull, MOBILE_MONEY_MARKETS, mobileMoneyMarketsText } from '@parametric/contracts';
import { createEvent, outboxUpdate } from '@parametric/events';
import { AppError } from '@parametric/http';
import { keyMetadata } from '../api-keys/view';
import type { Clock } from '../clock';
import type { OrganizationDoc } from '../organizations/model';
import { organizationView } from '../organizations/view';
import type { TenantGatewayData } from '../repositories';

export interface OpsDeps {
  clock: Clock;
}

/** What ops do to one organization, bound once per process; each call names the organization. */
export function createOps(deps: OpsDeps) {
  return {
    view: opsOrganizationView,
    recordKybDecision: (tenant: TenantGatewayData, decision: KybDecision) =>
      recordKybDecision(deps, tenant, decision),
    setServiceTier,
    setActive,
    requireOrganization,
  };
}

export type Ops = ReturnType<typeof createOps>;

async function load(tenant: TenantGatewayData): Promise<OrganizationDoc> {
  const org = await tenant.organization.get();
  if (!org) throw AppError.notFound('Organization');
  return org;
}

/** The organization as ops read it: the partner view, KYB notes, and the key's metadata. */
async function opsOrganizationView(tenant: TenantGatewayData, org?: OrganizationDoc | null) {
  const found = org ?? (await load(tenant));
  const key = await tenant.apiKey.get();
  return {
    ...organizationView(found),
    kybNotes: found.kybNotes ?? null,
    kybUpdatedAt: isoOrNull(found.kybUpdatedAt),
    apiKey: key ? keyMetadata(key) : null,
  };
}

type KybDecision = { status: 'VERIFIED' | 'REJECTED'; notes?: string };

/**
 * Records a KYB decision. The status change and its event (`kyb.verified` / `kyb.rejected`)
 * are one document write: both happen or neither. Repeating the current status changes
 * nothing and emits nothing. Returns whether an event was recorded.
 */
async function recordKybDecision(deps: OpsDeps, tenant: TenantGatewayData, decision: KybDecision) {
  const organizationId = tenant.organizationId;
  const kybStatus = decision.status;
  const notes = decision.notes ?? null;
  const event =
    kybStatus === 'VERIFIED'
      ? createEvent('kyb.verified', organizationId, { organizationId, kybStatus })
      : createEvent('kyb.rejected', organizationId, { organizationId, kybStatus, notes });
  const outbox = outboxUpdate(event);
  const updated = await tenant.organization.findOneAndUpdate(
    { kybStatus: { $ne: kybStatus } },
    { ...outbox, $set: { ...outbox.$set, kybStatus, kybNotes: notes, kybUpdatedAt: deps.clock() } },
  );
  if (updated) await tenant.authChanged();
  return { organization: updated ?? (await load(tenant)), eventRecorded: updated !== null };
}

/**
 * Existing policies keep the settlement mode frozen at their sale. Tier 2
 * (`DETERMINATION_AND_SETTLEMENT`) collects premiums and pays farmers by mobile money, so it is
 * open only to an organization whose market has a provider (`MOBILE_MONEY`, libs/contracts):
 * elsewhere its purchases would reserve capacity for premiums that can never be collected, and
 * its policies could not be activated by the partner either (issue 22). A sandbox organization
 * may have it: its premiums and payouts go only to the M-Pesa simulator's test numbers, through
 * the sandbox Daraja (docs/decisions.md, "Mobile money in a sandbox"). Back to `DETERMINATION` is
 * always allowed. The market is part of the update's filter: one write, no window between a
 * check and the change.
 */
async function setServiceTier(tenant: TenantGatewayData, serviceTier: OrganizationDoc['serviceTier']) {
  const settles = serviceTier === 'DETERMINATION_AND_SETTLEMENT';
  const updated = await tenant.organization.findOneAndUpdate(
    settles ? { countryCode: { $in: [...MOBILE_MONEY_MARKETS] } } : {},
    { $set: { serviceTier } },
  );
  if (!updated) {
    const org = await load(tenant);
    throw AppError.invalid(
      `The service cannot settle in market ${org.countryCode}: it has no mobile-money provider there, so the organization stays on ${org.serviceTier}`,
      [
        {
          field: 'serviceTier',
          message: `DETERMINATION_AND_SETTLEMENT is not available in market ${org.countryCode} (mobile money: ${mobileMoneyMarketsText()} only)`,
        },
      ],
    );
  }
  await tenant.authChanged();
  return updated;
}

/** A deactivated organization's key gets 403 on every call (docs/api.md, "Authentication"). */
async function setActive(tenant: TenantGatewayData, isActive: boolean) {
  const updated = await tenant.organization.findOneAndUpdate({}, { $set: { isActive } });
  if (!updated) throw AppError.notFound('Organization');
  await tenant.authChanged();
  return updated;
}

/** 404 unless the organization exists (ops actions forwarded to services that cannot tell). */
async function requireOrganization(tenant: TenantGatewayData): Promise<void> {
  if (!(await tenant.organization.exists())) throw AppError.notFound('Organization');
}
