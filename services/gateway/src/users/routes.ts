import {
  acceptInvitation as acceptInvitationRoute,
  createUser,
  deactivateUser as deactivateUserRoute,
  getSession,
  getUser,
  listUsers as listUsersRoute,
  login as loginRoute,
  logout as logoutRoute,
  refreshSession,
  reissueInvitation as reissueInvitationRoute,
  updateUser as updateUserRoute,
} from '@parametric/contracts';
import { type Binding, created, implement, ok, page } from '@parametric/http';
import type { Principal } from '../auth/principal';
import type { GatewayRepositories, TenantGatewayData } from '../repositories';
import { login, logout, refresh, type SignInDeps } from '../sessions/domain';
import {
  acceptInvitation,
  deactivateUser,
  type InvitationSettings,
  inviteUser,
  listUsers,
  readUser,
  reissueInvitation,
  updateUser,
} from './domain';
import { userView } from './view';

/** What a handler of an authenticated caller may touch: the caller, its own organization's data. */
export interface UserRoutesContext {
  principal: Principal;
  tenant: TenantGatewayData;
  invitations: InvitationSettings;
}

/** User management (`user:manage`) and the caller's own session, for authenticated callers. */
export const userRoutes: Binding<UserRoutesContext>[] = [
  implement(createUser, async ({ body }, { tenant, invitations }) =>
    created(await inviteUser(tenant, body, invitations)),
  ),
  implement(listUsersRoute, async ({ query }, { tenant }) => {
    const { items, total } = await listUsers(tenant, query);
    return page(items, { page: query.page, limit: query.limit, total });
  }),
  implement(getUser, async ({ params }, { tenant }) => ok(await readUser(tenant, params.id))),
  implement(updateUserRoute, async ({ params, body }, { tenant }) =>
    ok(await updateUser(tenant, params.id, body)),
  ),
  implement(deactivateUserRoute, async ({ params }, { tenant }) =>
    ok(await deactivateUser(tenant, params.id)),
  ),
  implement(reissueInvitationRoute, async ({ params }, { tenant, invitations }) =>
    ok(await reissueInvitation(tenant, params.id, invitations)),
  ),
  implement(getSession, async (_input, { principal }) =>
    ok({
      organizationId: principal.organization._id,
      principal: principal.kind === 'apiKey' ? ('API_KEY' as const) : ('USER' as const),
      user: principal.kind === 'user' ? userView(principal.user) : null,
      role: principal.role,
      capabilities: [...principal.capabilities],
    }),
  ),
];

export interface SignInContext {
  signIn: SignInDeps;
  repositories: GatewayRepositories;
  clientIp: string;
}

/** Sign-in routes: no key, no token; limited per client address before they run. */
export const signInRoutes: Binding<SignInContext>[] = [
  implement(loginRoute, async ({ body }, { signIn, clientIp }) => ok(await login(signIn, body, clientIp))),
  implement(refreshSession, async ({ body }, { signIn }) => ok(await refresh(signIn, body.refreshToken))),
  implement(logoutRoute, async ({ body }, { signIn }) => ok(await logout(signIn, body.refreshToken))),
  implement(acceptInvitationRoute, async ({ body }, { repositories, signIn }) =>
    ok(
      await acceptInvitation(
        repositories.acrossOrganizations(),
        repositories.forOrganization,
        body,
        signIn.pepper,
      ),
    ),
  ),
];
