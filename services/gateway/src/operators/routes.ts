import {
  opsAcceptInvitation,
  opsCreateOperator,
  opsGetSession,
  opsListOperators,
  opsLogin,
  opsLogout,
  opsRefreshSession,
  opsUpdateOperator,
} from '@parametric/contracts';
import { type Binding, created, implement, ok, page } from '@parametric/http';
import type { OpsCaller } from '../auth/ops-caller';
import type { Operators } from './domain';

/** What an operator route may touch: the caller, the operators. */
export interface OperatorRoutesContext {
  caller: OpsCaller;
  operators: Operators;
}

/** Operator management (`ops.operator:manage`) and the caller's own session. */
export const operatorRoutes: Binding<OperatorRoutesContext>[] = [
  implement(opsCreateOperator, async ({ body }, { operators }) => created(await operators.invite(body))),
  implement(opsListOperators, async ({ query }, { operators }) => {
    const { items, total } = await operators.list(query);
    return page(items, { page: query.page, limit: query.limit, total });
  }),
  implement(opsUpdateOperator, async ({ params, body }, { caller, operators }) =>
    ok(await operators.update(caller.kind === 'operator' ? caller.id : undefined, params.id, body)),
  ),
  implement(opsGetSession, async (_input, { caller }) =>
    ok(
      caller.kind === 'client'
        ? {
            kind: caller.kind,
            id: caller.id,
            scopes: [...caller.scopes],
            capabilities: [...caller.capabilities],
          }
        : {
            kind: caller.kind === 'metrics-scrape' ? ('break-glass' as const) : caller.kind,
            id: caller.id,
            ...(caller.kind === 'operator' && caller.email !== undefined ? { email: caller.email } : {}),
            role: caller.role,
            capabilities: [...caller.capabilities],
          },
    ),
  ),
];

export interface OperatorSignInContext {
  operators: Operators;
  clientIp: string;
}

/** Operator sign-in: no caller; failures throttled per account and address. */
export const operatorSignInRoutes: Binding<OperatorSignInContext>[] = [
  implement(opsLogin, async ({ body }, { operators, clientIp }) => ok(await operators.login(body, clientIp))),
  implement(opsRefreshSession, async ({ body }, { operators }) =>
    ok(await operators.refresh(body.refreshToken)),
  ),
  implement(opsLogout, async ({ body }, { operators }) => ok(await operators.logout(body.refreshToken))),
  implement(opsAcceptInvitation, async ({ body }, { operators }) =>
    ok(await operators.acceptInvitation(body)),
  ),
];
