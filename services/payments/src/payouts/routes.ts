import {
  getPayout,
  listPayouts as listPayoutsRoute,
  opsOriginatePayout,
  retryPayout as retryPayoutRoute,
} from '@parametric/contracts';
import { type Binding, created, implement, ok, page } from '@parametric/http';
import type { TenantScope } from '@parametric/mongo';
import type { PolicyLookup } from '@parametric/policy-client';
import type { Clock } from '../clock';
import {
  listPayouts,
  type OriginateDeps,
  opsPayoutView,
  originatePayout,
  type PayoutDoc,
  readPayout,
  retryPayout,
} from './domain';

export interface PayoutPartnerContext {
  payouts: TenantScope<PayoutDoc>;
  findPolicy: PolicyLookup;
  maxAttempts: number;
  now: Clock;
  /** After a change that recorded jobs, so they leave at once. */
  onChanged(): void;
}

/** Spec 4: the organization's payouts and the retry of a failed one. */
export const payoutRoutes: Binding<PayoutPartnerContext>[] = [
  implement(listPayoutsRoute, async ({ query }, ctx) => {
    const { items, total } = await listPayouts(ctx.payouts, query);
    return page(items, { page: query.page, limit: query.limit, total });
  }),
  implement(getPayout, async ({ params }, ctx) => ok(await readPayout(ctx.payouts, params.id))),
  implement(retryPayoutRoute, async ({ params }, ctx) => {
    const view = await retryPayout(ctx.payouts, params.id, {
      findPolicy: ctx.findPolicy,
      maxAttempts: ctx.maxAttempts,
      now: ctx.now(),
    });
    ctx.onChanged();
    return ok(view);
  }),
];

export interface PayoutOpsContext {
  originate: OriginateDeps;
  onChanged(): void;
}

/** Ops: admin origination, the same domain function as the `payout-originations` worker. */
export const payoutOpsRoutes: Binding<PayoutOpsContext>[] = [
  implement(opsOriginatePayout, async ({ body }, ctx) => {
    const { created: isNew, payout } = await originatePayout(body, ctx.originate);
    if (isNew) ctx.onChanged();
    return isNew ? created(opsPayoutView(payout)) : ok(opsPayoutView(payout));
  }),
];
