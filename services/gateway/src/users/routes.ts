import {
  acceptInvitation as acceptInvitationRoute,
  cookieLogin as cookieLoginRoute,
  cookieLogout as cookieLogoutRoute,
  cookieRefresh as cookieRefreshRoute,
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
import type { DashboardCookie } from '../auth/dashboard-cookie';
import type { Principal } from '../auth/principal';
import type { TenantGatewayData } from '../repositories';
import { badRefresh } from '../sessions/core';
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
  /** The dashboard's refresh-token cookie, for this request (cookie mode). */
  cookie: DashboardCookie;
}

type Tokens = Awaited<ReturnType<Sessions['login']>>;

/** The dashboard's answer: the refresh token goes into the cookie, the rest into the body. */
function inCookie({ refreshToken, ...tokens }: Tokens, cookie: DashboardCookie) {
  return { ...ok(tokens), headers: { 'Set-Cookie': cookie.set(refreshToken, tokens.refreshExpiresIn) } };
}

/** Sign-in routes: no key, no token; limited per client address before they run. */
export const signInRoutes: Binding<SignInContext>[] = [
  implement(loginRoute, async ({ body }, { sessions, clientIp }) => ok(await sessions.login(body, clientIp))),
  implement(refreshSession, async ({ body }, { sessions }) => ok(await sessions.refresh(body.refreshToken))),
  implement(logoutRoute, async ({ body }, { sessions }) => ok(await sessions.logout(body.refreshToken))),
  // The dashboard's own pages (docs/dashboard.md, "Sign-in cookie"): same sessions, token in a cookie.
  implement(cookieLoginRoute, async ({ body }, { sessions, clientIp, cookie }) => {
    cookie.assertSameOrigin();
    return inCookie(await sessions.login(body, clientIp), cookie);
  }),
  implement(cookieRefreshRoute, async (_input, { sessions, cookie }) => {
    cookie.assertSameOrigin();
    const refreshToken = cookie.read();
    if (refreshToken === undefined) throw badRefresh();
    return inCookie(await sessions.refresh(refreshToken), cookie);
  }),
  implement(cookieLogoutRoute, async (_input, { sessions, cookie }) => {
    cookie.assertSameOrigin();
    const refreshToken = cookie.read();
    if (refreshToken !== undefined) await sessions.logout(refreshToken);
    return { ...ok({ loggedOut: true as const }), headers: { 'Set-Cookie': cookie.clear() } };
  }),
  implement(acceptInvitationRoute, async ({ body }, { users }) => ok(await users.acceptInvitation(body))),
];
