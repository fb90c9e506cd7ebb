import type { OrganizationDoc } from './model';

/** Readable settings; only `brandColor` and `contactPhone` are writable. */
export function settingsView(org: OrganizationDoc) {
  return { brandColor: org.brandColor ?? null, contactPhone: org.contactPhone ?? null };
}

/**
 * The organization as partners and ops read it (spec 2.2). Keys, secrets and the webhook
 * secret never appear here; `webhookUrl` is owned by the webhooks service and is null
 * until one is configured there.
 */
export function organizationView(org: OrganizationDoc, webhookUrl: string | null = null) {
  return {
    id: org._id,
    name: org.name,
    type: org.type,
    countryCode: org.countryCode,
    contactEmail: org.contactEmail ?? null,
    contactPhone: org.contactPhone ?? null,
    kybStatus: org.kybStatus,
    serviceTier: org.serviceTier,
    isActive: org.isActive,
    webhookUrl,
    settings: settingsView(org),
    createdAt: org.createdAt,
    updatedAt: org.updatedAt,
  };
}
