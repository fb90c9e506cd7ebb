import { AppError } from './errors';

/**
 * What a caller may do, by capability (`resource:action`), and which role has which (docs/api.md,
 * "Capabilities"; issue 12).
 * Every partner route declares the one capability it needs in its contract (contract.ts); the
 * OpenAPI document shows it as `x-capability`. The API key acts as `ORG_ADMIN`. The table lives
 * here, beside the contracts that declare capabilities, because `mountRoutes` enforces it.
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
export type PartnerCapability = (typeof CAPABILITIES)[number];

/**
 * What an ops caller may do (docs/ops.md, "Operators and roles"; issue 25): every ops route
 * declares one, as partner routes declare theirs, and `mountRoutes` checks it with the same
 * `assertCapability`. A separate vocabulary (`ops.` prefix), so no partner role ever holds one and
 * no ops role a partner one. Which ops role has which is the table in libs/contracts (operators.ts).
 */
export const OPS_CAPABILITIES = [
  'ops.organization:read',
  'ops.organization:write',
  'ops.service-tier:write',
  'ops.api-key:rotate',
  'ops.underwriting:write',
  'ops.farmer:read',
  'ops.farmer:write',
  'ops.policy:read',
  'ops.payout:write',
  'ops.determination:read',
  'ops.determination:ingest',
  'ops.audit:read',
  'ops.document:read',
  'ops.operator:manage',
  'ops.session:read',
  'ops.queues:read',
  'ops.queues:write',
] as const;
export type OpsCapability = (typeof OPS_CAPABILITIES)[number];

export type Capability = PartnerCapability | OpsCapability;

export const ROLES = ['ORG_ADMIN', 'ORG_OPERATOR', 'ORG_FINANCE', 'ORG_VIEWER'] as const;
export type Role = (typeof ROLES)[number];

/** The one table of roles and their capabilities (docs/api.md repeats it). */
export const ROLE_CAPABILITIES: Readonly<Record<Role, readonly PartnerCapability[]>> = {
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

/** A role's capabilities in the table; none for a role it does not name. */
export function capabilitiesOf(role: string): readonly PartnerCapability[] {
  return (ROLE_CAPABILITIES as Record<string, readonly PartnerCapability[] | undefined>)[role] ?? [];
}

export function roleHas(role: string, capability: Capability): boolean {
  return (capabilitiesOf(role) as readonly Capability[]).includes(capability);
}

/**
 * Who a request acts for, once verified, and what it may do: a role and its capabilities (for
 * a dashboard user the gateway narrows them to what the access token was issued with, so they
 * may be fewer than the role's).
 */
export interface Caller {
  role: string;
  capabilities: readonly Capability[];
}

declare global {
  namespace Express {
    interface Request {
      /**
       * The verified caller: in a service, set by `requireInternalContext` from the signed
       * context; in the gateway, by its authentication. `mountRoutes` refuses a route that
       * declares a capability when no caller was verified.
       */
      caller?: Caller;
    }
  }
}

/**
 * The one capability check: `403 FORBIDDEN` naming the role and the capability it lacks. The
 * gateway runs it before serving or forwarding a partner request, and `mountRoutes` runs it
 * again in every service against the role the gateway signed (defence in depth), so a request
 * that got past the gateway unchecked is refused with the same answer.
 */
export function assertCapability(caller: Caller, capability: Capability): void {
  if (!caller.capabilities.includes(capability)) {
    throw AppError.forbidden(
      `Your role ${caller.role} lacks the capability ${capability} this endpoint needs`,
    );
  }
}
