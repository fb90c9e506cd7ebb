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
import type { TenantGatewayData } from '../repositories';
import type { Sessions } from '../sessions/domain';
import type { Users } from './domain';
import { userView } from './view';

/** What a handler of an authenticated caller may touch: the caller, its own organization's data. */
export interface UserRoutesContext {
  principal: Principal;
  tenant: TenantGatewayData;
  users: Users;
}

/** User management (`user:manage`) and the caller's own session, for authenticated callers. */
export const userRoutes: Binding<UserRoutesContext>[] = [
  implement(createUser, async ({ body }, { tenant, users }) => created(await users.invite(tenant, body))),
  implement(listUsersRoute, async ({ query }, { tenant, users }) => {
    const { items, total } = await users.list(tenant, query);
    return page(items, { page: query.page, limit: query.limit, total });
  }),
  implement(getUser, async ({ params }, { tenant, users }) => ok(await users.read(tenant, params.id))),
  implement(updateUserRoute, async ({ params, body }, { tenant, users }) =>
    ok(await users.update(tenant, params.id, body)),
  ),
  implement(deactivateUserRoute, async ({ params }, { tenant, users }) =>
    ok(await users.deactivate(tenant, params.id)),
  ),
  implement(reissueInvitationRoute, async ({ params }, { tenant, users }) =>
    ok(await users.reissueInvitation(tenant, params.id)),
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
  sessions: Sessions;
  users: Users;
  clientIp: string;
}

/** Sign-in routes: no key, no token; limited per client address before they run. */
export const signInRoutes: Binding<SignInContext>[] = [
  implement(loginRoute, async ({ body }, { sessions, clientIp }) => ok(await sessions.login(body, clientIp))),
  implement(refreshSession, async ({ body }, { sessions }) => ok(await sessions.refresh(body.refreshToken))),
  implement(logoutRoute, async ({ body }, { sessions }) => ok(await sessions.logout(body.refreshToken))),
  implement(acceptInvitationRoute, async ({ body }, { users }) => ok(await users.acceptInvitation(body))),
];
