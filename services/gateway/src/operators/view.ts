import { isoOrNull } from '@parametric/contracts';
import type { OperatorDoc } from './model';

/** An operator as ops read it: never the password hash or the invitation token's hash. */
export function operatorView(operator: OperatorDoc) {
  return {
    id: operator._id,
    email: operator.email,
    role: operator.role,
    status: operator.status,
    invitationExpiresAt: operator.status === 'INVITED' ? isoOrNull(operator.invitationExpiresAt) : null,
    lastLoginAt: isoOrNull(operator.lastLoginAt),
    createdAt: operator.createdAt.toISOString(),
    updatedAt: operator.updatedAt.toISOString(),
  };
}
