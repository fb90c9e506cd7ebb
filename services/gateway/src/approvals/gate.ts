import { type ApprovalAction, type approvalRequestedResponse, FOUR_EYES_ROUTES } from '@parametric/contracts';
import { expressPath, parseInput, type RouteContract, renderReply } from '@parametric/http';
import { type NextFunction, type Request, type Response, Router } from 'express';
import type { z } from 'zod';
import type { OpsCaller } from '../auth/ops-caller';
import type { Approvals, Decider, GatedInput } from './domain';
import { deciderOf } from './routes';

const GATED = (Object.entries(FOUR_EYES_ROUTES) as [ApprovalAction, RouteContract][]).map(
  ([action, contract]) => ({
    action,
    contract,
  }),
);

/**
 * Four eyes at the door (docs/ops.md, "Four eyes"): an operator's request for a gated action is
 * validated like the route would (bad input is `400` and records nothing), and, when
 * `needsApproval` says so, recorded as a pending approval and answered `202`; anything else goes
 * on to the route. The break-glass token acts at once (audited as break-glass).
 */
export function fourEyesGate(deps: {
  approvals: Approvals;
  callerOf: (req: Request) => OpsCaller;
  /**
   * Whether this request needs a second operator: a payout always, a tier only when it changes
   * (to a tier the organization may have), capacity only for an increase above the threshold.
   * An answer it cannot give (a service unreachable) throws rather than waving the action through.
   */
  needsApproval: (
    action: ApprovalAction,
    input: GatedInput,
    caller: Decider,
    requestId: string,
  ) => Promise<boolean>;
}) {
  const router = Router();
  for (const { action, contract } of GATED) {
    router[contract.method](
      expressPath(contract.path),
      async (req: Request, res: Response, next: NextFunction) => {
        const caller = deps.callerOf(req);
        if (caller.kind !== 'operator') return next();
        const input = parseInput(contract, req) as GatedInput;
        if (!(await deps.needsApproval(action, input, deciderOf(caller), String(req.id)))) return next();
        const approval = await deps.approvals.request(
          { id: caller.id, email: caller.email ?? null, role: caller.role },
          {
            action,
            method: req.method,
            path: `/ops${contract.path.replace(/\{(\w+)\}/g, (_, name: string) => input.params[name] ?? '')}`,
            organizationId: contract.path.startsWith('/organizations/{id}')
              ? (input.params.id ?? null)
              : null,
            params: input.params ?? {},
            request: input.body ?? null,
          },
        );
        // Typed as the contract's 202 (every gated route declares the same one, four-eyes.ts), and
        // rendered as mountRoutes renders any answer: a route that stopped declaring it is a 500.
        const reply: { status: 202; data: z.input<typeof approvalRequestedResponse.data> } = {
          status: 202,
          data: { approval },
        };
        renderReply(res, contract, reply);
      },
    );
  }
  return router;
}
