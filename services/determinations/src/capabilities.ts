import { type Capability, roleHas } from '@parametric/contracts';
import { AppError } from '@parametric/http';

/** `403 FORBIDDEN` unless the caller's role has the capability (the table: libs/contracts). */
export function requireCapability(role: string, capability: Capability): void {
  if (!roleHas(role, capability)) {
    throw AppError.forbidden(`Your role lacks the capability ${capability}`);
  }
}
