import {
  getPayout,
  listPayouts as listPayoutsRoute,
  opsOriginatePayout,
  retryPayout as retryPayoutRoute,
} from '@parametric/contracts';
import { type Binding, created, implement, ok, page } from '@parametric/http';
import type { PolicyLookup } from '@parametric/policy-client';
import type { Clock } from '../clock';
import type { PartnerContext } from '../context';
import { type OriginateDeps, originatePayout } from './originate';
import { listPayouts, opsPayoutView, readPayout, retryPayout } from './reads';

/** What the payout routes use besides the caller's data: built once per process. */
export interface PayoutRouteDeps {
  findPolicy: PolicyLookup;
  maxAttempts: number;
  now: Clock;
}

/** The organization's payouts, each with its attempts, and the retry of a failed one. */
export function payoutRoutes(deps: PayoutRouteDeps): Binding<PartnerContext>[] {
  return [
    implement(listPayoutsRoute, async ({ query }, { tenant }) => {
      const { items, total } = await listPayouts(tenant, query);
      return page(items, { page: query.page, limit: query.limit, total });
    }),
    implement(getPayout, async ({ params }, { tenant }) => ok(await readPayout(tenant, params.id))),
    implement(retryPayoutRoute, async ({ params }, { tenant }) =>
      ok(
        await retryPayout(tenant, params.id, {
          findPolicy: deps.findPolicy,
          maxAttempts: deps.maxAttempts,
          now: deps.now(),
        }),
      ),
    ),
  ];
}

export interface PayoutOpsContext {
  originate: OriginateDeps;
}

/** Ops: origination by hand, the same domain function as the `payout-originations` worker and the sweep. */
export const payoutOpsRoutes: Binding<PayoutOpsContext>[] = [
  implement(opsOriginatePayout, async ({ body }, ctx) => {
    const { created: isNew, payout } = await originatePayout(body.determinationId, ctx.originate);
    return isNew ? created(opsPayoutView(payout)) : ok(opsPayoutView(payout));
  }),
];
