import { AppError, type Role } from '@parametric/http';
import { isDuplicateKey } from '@parametric/mongo';
import type { Clock } from '../clock';
import { assertAcceptablePassword, hashPassword } from '../credentials/passwords';
import { hashCredential, randomSecret } from '../credentials/secrets';
import type { GatewayDataAcross, GatewayRepositories, TenantGatewayData } from '../repositories';
import { revokeUserSessions } from '../sessions/domain';
import { joinAdmins, leaveAdmins } from './admin-roster';
import type { UserDoc } from './model';
import { userView } from './view';

export interface UsersDeps {
  /** Invitation tokens are stored only as HMACs under it (credentials/secrets.ts). */
  pepper: string;
  invitationTtlSeconds: number;
  clock: Clock;
  /** An invitation's token is all its redeemer has: its user is found across organizations. */
  repositories: Pick<GatewayRepositories, 'acrossOrganizations' | 'forOrganization'>;
}

/** Dashboard users, bound once per process; each call names the organization, or holds a token. */
export function createUsers(deps: UsersDeps) {
  const across = deps.repositories.acrossOrganizations();
  return {
    invite: (tenant: TenantGatewayData, input: { email: string; name: string; role: Role }) =>
      inviteUser(deps, tenant, input),
    reissueInvitation: (tenant: TenantGatewayData, userId: string) => reissueInvitation(deps, tenant, userId),
    list: listUsers,
    read: readUser,
    update: (tenant: TenantGatewayData, userId: string, changes: UserChanges) =>
      updateUser(deps, tenant, userId, changes),
    deactivate: (tenant: TenantGatewayData, userId: string) =>
      updateUser(deps, tenant, userId, { active: false }),
    acceptInvitation: (input: { token: string; password: string }) => acceptInvitation(deps, across, input),
    createFirstAdmin,
  };
}

export type Users = ReturnType<typeof createUsers>;

const emailTaken = () =>
  AppError.conflict('A user with this email already exists', [
    { field: 'email', message: 'is already used by a dashboard user' },
  ]);

/** A one-time invitation token, its HMAC (what is stored) and its expiry; operators' too. */
export function newInvitation(deps: Pick<UsersDeps, 'pepper' | 'clock' | 'invitationTtlSeconds'>) {
  const token = randomSecret('piv');
  return {
    token,
    hash: hashCredential(deps.pepper, token),
    expiresAt: new Date(deps.clock().getTime() + deps.invitationTtlSeconds * 1000),
  };
}

/** Invites a user: `INVITED`, with a one-time token returned here and never again. */
async function inviteUser(
  deps: UsersDeps,
  tenant: TenantGatewayData,
  input: { email: string; name: string; role: Role },
) {
  const invitation = newInvitation(deps);
  let user: UserDoc;
  try {
    const created = await tenant.users.create({
      email: input.email,
      name: input.name,
      role: input.role,
      status: 'INVITED',
      invitationHash: invitation.hash,
      invitationExpiresAt: invitation.expiresAt,
    });
    user = created.toObject() as UserDoc;
  } catch (err) {
    if (isDuplicateKey(err)) throw emailTaken();
    throw err;
  }
  return {
    user: userView(user),
    invitationToken: invitation.token,
    invitationExpiresAt: invitation.expiresAt.toISOString(),
  };
}

/** A new invitation token for a user still `INVITED`; the previous token stops working. */
async function reissueInvitation(deps: UsersDeps, tenant: TenantGatewayData, userId: string) {
  const invitation = newInvitation(deps);
  const user = await tenant.users.findOneAndUpdate(
    { _id: userId, status: 'INVITED' },
    { $set: { invitationHash: invitation.hash, invitationExpiresAt: invitation.expiresAt } },
  );
  if (!user) {
    const existing = await tenant.users.findById(userId).lean<UserDoc>();
    if (!existing) throw AppError.notFound('User');
    throw AppError.conflict(`The user is ${existing.status}; only an INVITED user gets a new invitation`);
  }
  return {
    user: userView(user),
    invitationToken: invitation.token,
    invitationExpiresAt: invitation.expiresAt.toISOString(),
  };
}

async function listUsers(
  tenant: TenantGatewayData,
  query: { page: number; limit: number; status?: UserDoc['status']; role?: Role },
) {
  const filter = {
    ...(query.status ? { status: query.status } : {}),
    ...(query.role ? { role: query.role } : {}),
  };
  const [items, total] = await Promise.all([
    tenant.users
      .find(filter)
      .sort({ createdAt: -1, _id: -1 })
      .skip((query.page - 1) * query.limit)
      .limit(query.limit)
      .lean<UserDoc[]>(),
    tenant.users.countDocuments(filter),
  ]);
  return { items: items.map(userView), total };
}

async function readUser(tenant: TenantGatewayData, userId: string) {
  const user = await tenant.users.findById(userId).lean<UserDoc>();
  if (!user) throw AppError.notFound('User');
  return userView(user);
}

const isActiveAdmin = (user: Pick<UserDoc, 'status' | 'role'>) =>
  user.status === 'ACTIVE' && user.role === 'ORG_ADMIN';

type UserChanges = { name?: string; role?: Role; active?: boolean };

/**
 * Changes a user's name, role or active state. Deactivation revokes every sign-in session of
 * the user (its tokens also fail the per-request check at once); a role change applies to
 * the user's live tokens on their next request. The last active ORG_ADMIN stays one.
 */
async function updateUser(deps: UsersDeps, tenant: TenantGatewayData, userId: string, changes: UserChanges) {
  const user = await tenant.users.findById(userId).lean<UserDoc>();
  if (!user) throw AppError.notFound('User');

  let status = user.status;
  if (changes.active === false) status = 'DEACTIVATED';
  // Restored users go back to where they were: signed-up users active, others still invited.
  if (changes.active === true && user.status === 'DEACTIVATED')
    status = user.passwordHash ? 'ACTIVE' : 'INVITED';
  const role = changes.role ?? user.role;
  const wasAdmin = isActiveAdmin(user);
  const willBeAdmin = isActiveAdmin({ status, role });

  if (wasAdmin && !willBeAdmin) await leaveAdmins(tenant, userId);
  const deactivating = status === 'DEACTIVATED' && user.status !== 'DEACTIVATED';
  const now = deps.clock();
  const updated = await tenant.users.findOneAndUpdate(
    // Conditional on what was read, so two concurrent changes cannot interleave.
    { _id: userId, status: user.status, role: user.role },
    {
      $set: {
        ...(changes.name !== undefined ? { name: changes.name } : {}),
        role,
        status,
        ...(deactivating ? { deactivatedAt: now, invitationHash: null, invitationExpiresAt: null } : {}),
        ...(status !== 'DEACTIVATED' ? { deactivatedAt: null } : {}),
      },
    },
  );
  if (!updated) {
    if (wasAdmin && !willBeAdmin) await joinAdmins(tenant, userId);
    throw AppError.conflict(
      'The user was changed by another request at the same time; read it and try again',
    );
  }
  if (!wasAdmin && willBeAdmin) await joinAdmins(tenant, userId);
  if (deactivating) await revokeUserSessions(tenant, userId, 'USER_DEACTIVATED', now);
  // The user's live tokens see the new role or state on their next request, on any replica.
  await tenant.authChanged();
  return userView(updated);
}

export const invalidInvitation = () =>
  AppError.invalid('The invitation token is not valid', [
    { field: 'token', message: 'is unknown, already used, replaced by a newer invitation, or expired' },
  ]);

/** Redeems an invitation: sets the password, and the user becomes `ACTIVE`. */
async function acceptInvitation(
  deps: UsersDeps,
  across: GatewayDataAcross,
  input: { token: string; password: string },
) {
  const invitationHash = hashCredential(deps.pepper, input.token);
  const user = await across.users.findOne({ invitationHash, status: 'INVITED' }).lean<UserDoc>();
  if (!user?.invitationExpiresAt || user.invitationExpiresAt.getTime() <= deps.clock().getTime()) {
    throw invalidInvitation();
  }
  const organization = await across.organizations.findById(user.organizationId).lean();
  if (!organization) throw invalidInvitation();
  if (!organization.isActive) throw AppError.forbidden('Organization is deactivated');
  assertAcceptablePassword(input.password, user.email, 'password');
  const passwordHash = await hashPassword(input.password);

  const tenant = deps.repositories.forOrganization(user.organizationId);
  const accepted = await tenant.users.findOneAndUpdate(
    // The token is single use: only the request that still finds it redeems it.
    { _id: user._id, invitationHash, status: 'INVITED' },
    { $set: { passwordHash, status: 'ACTIVE', invitationHash: null, invitationExpiresAt: null } },
  );
  if (!accepted) throw invalidInvitation();
  if (accepted.role === 'ORG_ADMIN') await joinAdmins(tenant, accepted._id);
  await tenant.authChanged();
  return { user: userView(accepted) };
}

/**
 * The first dashboard user of a new organization (`ORG_ADMIN`, `ACTIVE`), created before the
 * organization so a taken email stops the registration with nothing written.
 */
async function createFirstAdmin(
  tenant: TenantGatewayData,
  input: { email: string; password: string; name: string },
) {
  assertAcceptablePassword(input.password, input.email, 'adminPassword');
  const passwordHash = await hashPassword(input.password);
  try {
    const created = await tenant.users.create({
      email: input.email,
      name: input.name,
      role: 'ORG_ADMIN',
      status: 'ACTIVE',
      passwordHash,
    });
    return created.toObject() as UserDoc;
  } catch (err) {
    if (isDuplicateKey(err)) {
      throw AppError.conflict('A user with this email already exists', [
        { field: 'adminEmail', message: 'is already used by a dashboard user' },
      ]);
    }
    throw err;
  }
}
