import {
  opsApproveApproval,
  opsGetApproval,
  opsListApprovals,
  opsRejectApproval,
} from '@parametric/contracts';
import { type Binding, implement, ok, page } from '@parametric/http';
import type { OpsCaller } from '../auth/ops-caller';
import type { Approvals, Decider } from './domain';

export interface ApprovalRoutesContext {
  approvals: Approvals;
  caller: OpsCaller;
  requestId: string;
}

/** The caller as approvals name a decider. */
export function deciderOf(caller: OpsCaller): Decider {
  return {
    kind: caller.kind,
    id: caller.id,
    email: caller.kind === 'operator' ? (caller.email ?? null) : null,
    role: caller.role,
    capabilities: caller.capabilities,
  };
}

/** Four eyes (docs/ops.md, "Four eyes"): reading approvals, and deciding them. */
export const approvalRoutes: Binding<ApprovalRoutesContext>[] = [
  implement(opsListApprovals, async ({ query }, { approvals }) => {
    const { items, total } = await approvals.list(query);
    return page(items, { page: query.page, limit: query.limit, total });
  }),
  implement(opsGetApproval, async ({ params }, { approvals }) => ok(await approvals.get(params.id))),
  implement(opsApproveApproval, async ({ params }, { approvals, caller, requestId }) =>
    ok(await approvals.approve(deciderOf(caller), params.id, requestId)),
  ),
  implement(opsRejectApproval, async ({ params, body }, { approvals, caller }) =>
    ok(await approvals.reject(deciderOf(caller), params.id, body?.reason ?? null)),
  ),
];
