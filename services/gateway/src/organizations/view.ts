import type { OrganizationDoc } from './model';

/** Readable settings; only `brandColor` and `contactPhone` are writable. */
export function settingsView(org: OrganizationDoc) {
  return { brandColor: org.brandColor ?? null, contactPhone: org.contactPhone ?? null };
}

/**
 * The organization as partners read it (`Organization`, libs/contracts/src/gateway.ts), without
 * `webhookUrl` (the webhooks service owns it; `GET /organizations/me` adds it). Keys and secrets
 * never appear here.
 */
export function organizationView(org: OrganizationDoc) {
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
    environment: org.environment ?? 'live',
    settings: settingsView(org),
    createdAt: org.createdAt.toISOString(),
    updatedAt: org.updatedAt.toISOString(),
  };
}
