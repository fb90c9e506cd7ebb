import { AppError } from '@parametric/http';
import type { TenantGatewayData } from '../repositories';

const lastAdmin = () =>
  AppError.conflict(
    'The last active ORG_ADMIN cannot be demoted or deactivated; make another user ORG_ADMIN first',
  );

/** Records that the user is now an active ORG_ADMIN. */
export async function joinAdmins(tenant: TenantGatewayData, userId: string): Promise<void> {
  await tenant.adminRoster.upsert({ $addToSet: { activeAdminIds: userId } });
}

/**
 * Takes the user off the active admins, only if another remains (one conditional write, so
 * concurrent demotions cannot remove the last two at once). `409 CONFLICT` otherwise.
 */
export async function leaveAdmins(tenant: TenantGatewayData, userId: string): Promise<void> {
  const pulled = await tenant.adminRoster.updateOne(
    { activeAdminIds: userId, 'activeAdminIds.1': { $exists: true } },
    { $pull: { activeAdminIds: userId } },
  );
  if (pulled.modifiedCount === 1) return;
  const roster = await tenant.adminRoster.get();
  if (roster?.activeAdminIds.includes(userId)) throw lastAdmin();
  // Not on the roster: a change to this user was interrupted between its two writes. The
  // users themselves then decide (the roster only ever under-counts, never over-counts).
  const others = await tenant.users.countDocuments({
    _id: { $ne: userId },
    role: 'ORG_ADMIN',
    status: 'ACTIVE',
  });
  if (others === 0) throw lastAdmin();
}
