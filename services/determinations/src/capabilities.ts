import { AppError } from '@parametric/http';

/** What partner routes of this service need (spec 5.5: listing determinations needs `determination:read`). */
export type Capability = 'determination:read' | 'settlement-report:write';

/**
 * Roles and what they may do here. Today every partner call authenticates with the API key,
 * which acts as `ORG_ADMIN` (spec 5.1); dashboard roles (issue 12) add their rows here.
 */
const ROLE_CAPABILITIES: Readonly<Record<string, ReadonlySet<Capability>>> = {
  ORG_ADMIN: new Set<Capability>(['determination:read', 'settlement-report:write']),
};

/** `403 FORBIDDEN` unless the caller's role has the capability. */
export function requireCapability(role: string, capability: Capability): void {
  if (!ROLE_CAPABILITIES[role]?.has(capability)) {
    throw AppError.forbidden(`Your role lacks the capability ${capability}`);
  }
}
