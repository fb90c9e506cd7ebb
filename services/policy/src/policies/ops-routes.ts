import { opsGetPolicy, opsGetPolicyByNumber, opsLookupPolicies } from '@parametric/contracts';
import { type Binding, implement, ok } from '@parametric/http';
import type { OpsContext } from '../context';
import type { PolicyDoc } from './model';
import { opsPolicyView, readPolicyForOps } from './reads';

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
  // The determinations service's batch door: one query for a whole batch's policies.
  implement(opsLookupPolicies, async ({ body }, { repositories, now }) => {
    const { policyIds, policyNumbers } = body;
    const or = [
      ...(policyIds.length > 0 ? [{ _id: { $in: policyIds } }] : []),
      ...(policyNumbers.length > 0 ? [{ policyNumber: { $in: policyNumbers } }] : []),
    ];
    const found =
      or.length === 0
        ? []
        : await repositories.acrossOrganizations().policies.find({ $or: or }).lean<PolicyDoc[]>();
    const at = now();
    return ok({ policies: found.map((policy) => opsPolicyView(policy, at)) });
  }),
];
