import {
  activatePolicy,
  getPolicy,
  getPolicyStatus,
  listPolicies as listPoliciesRoute,
  purchasePolicy as purchasePolicyRoute,
} from '@parametric/contracts';
import { type Binding, created, implement, ok, page } from '@parametric/http';
import type { PartnerContext } from '../context';
import { purchasePolicyOnce } from './purchase';
import { listPolicies, policyView, readPolicy, readPolicyStatus } from './reads';

/** Buying, reading and (Tier 1) activating policies (contracts: libs/contracts/src/policy/policies.ts). */
export const policyRoutes: Binding<PartnerContext>[] = [
  implement(purchasePolicyRoute, async ({ body, headers }, { tenant, organization, now }) => {
    const key = headers['Idempotency-Key'];
    const { purchase, replayed } = await purchasePolicyOnce(tenant, organization, body, now(), key);
    // A replay answers as the first request did, marked so the partner can tell.
    return replayed
      ? { ...created(purchase), headers: { 'Idempotent-Replayed': 'true' } }
      : created(purchase);
  }),
  implement(listPoliciesRoute, async ({ query }, { tenant, now }) => {
    const { items, total } = await listPolicies(tenant, query, now());
    return page(items, { page: query.page, limit: query.limit, total });
  }),
  implement(getPolicy, async ({ params }, { tenant, now }) => ok(await readPolicy(tenant, params.id, now()))),
  implement(getPolicyStatus, async ({ params }, { tenant, now }) =>
    ok(await readPolicyStatus(tenant, params.id, now())),
  ),
  implement(activatePolicy, async ({ params, body }, { tenant, activator, now }) => {
    const { policy } = await activator.activate(tenant.policies, {
      policyId: params.id,
      via: 'PARTNER',
      premiumReference: body?.premiumReference,
    });
    return ok(policyView(policy, now()));
  }),
];
