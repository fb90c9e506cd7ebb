import { opsGetPolicy, opsGetPolicyByNumber } from '@parametric/contracts';
import { type Binding, implement, ok } from '@parametric/http';
import type { OpsContext } from '../context';
import { readPolicyForOps } from './reads';

/**
 * Policy look-ups for ops and for the determinations service, which attributes a determination
 * to a policy by id or number (reached through the gateway's ops API, docs/ops.md). The id or
 * number alone names the policy, whichever organization holds it.
 */
export const policyOpsRoutes: Binding<OpsContext>[] = [
  implement(opsGetPolicy, async ({ params }, { repositories, now }) =>
    ok(await readPolicyForOps(repositories.acrossOrganizations().policies, { id: params.id }, now())),
  ),
  implement(opsGetPolicyByNumber, async ({ params }, { repositories, now }) =>
    ok(
      await readPolicyForOps(
        repositories.acrossOrganizations().policies,
        { policyNumber: params.policyNumber },
        now(),
      ),
    ),
  ),
];
