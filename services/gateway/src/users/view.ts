import { isoOrNull } from '@parametric/contracts';
import type { UserDoc } from './model';

/** A user as partners read it: never the password hash or the invitation token's hash. */
export function userView(user: UserDoc) {
  return {
    id: user._id,
    email: user.email,
    name: user.name,
    role: user.role,
    status: user.status,
    invitationExpiresAt: user.status === 'INVITED' ? isoOrNull(user.invitationExpiresAt) : null,
    lastLoginAt: isoOrNull(user.lastLoginAt),
    createdAt: user.createdAt.toISOString(),
    updatedAt: user.updatedAt.toISOString(),
  };
}
