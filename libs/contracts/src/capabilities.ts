/**
 * What a caller may do, by capability (`resource:action`), and which role has which (docs/api.md,
 * "Capabilities"; issue 12). Every partner route declares the one capability it needs in its
 * contract; the OpenAPI document shows it as `x-capability`. The API key acts as `ORG_ADMIN`.
 */
export const CAPABILITIES = [
  'organization:read',
  'organization:write',
  'api-key:manage',
  'webhook:manage',
  'user:manage',
  'farmer:read',
  'farmer:write',
  'policy:read',
  'policy:write',
  'payment:read',
  'payment:write',
  'payout:read',
  'payout:write',
  'determination:read',
  'settlement-report:write',
] as const;
export type Capability = (typeof CAPABILITIES)[number];

export const ROLES = ['ORG_ADMIN', 'ORG_OPERATOR', 'ORG_FINANCE', 'ORG_VIEWER'] as const;
export type Role = (typeof ROLES)[number];

/** The one table of roles and their capabilities (docs/api.md repeats it). */
export const ROLE_CAPABILITIES: Readonly<Record<Role, readonly Capability[]>> = {
  ORG_ADMIN: CAPABILITIES,
  ORG_OPERATOR: [
    'organization:read',
    'farmer:read',
    'farmer:write',
    'policy:read',
    'policy:write',
    'payment:read',
    'payment:write',
    'determination:read',
  ],
  ORG_FINANCE: [
    'organization:read',
    'policy:read',
    'determination:read',
    'settlement-report:write',
    'payout:read',
    'payout:write',
  ],
  ORG_VIEWER: ['organization:read', 'farmer:read', 'policy:read'],
};

export function roleHas(role: string, capability: Capability): boolean {
  return (
    (ROLE_CAPABILITIES as Record<string, readonly Capability[] | undefined>)[role]?.includes(capability) ??
    false
  );
}
