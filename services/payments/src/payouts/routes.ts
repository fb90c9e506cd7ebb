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
import type { PayoutAttemptDoc, PayoutDoc } from './model';
import { type OriginateDeps, originatePayout } from './originate';
import { listPayouts, opsPayoutView, readPayout, retryPayout } from './reads';
import { tenantLedgerOf, tenantPayoutStoreOf } from './store';

export interface PayoutPartnerContext {
  payouts: TenantScope<PayoutDoc>;
  attempts: TenantScope<PayoutAttemptDoc>;
  findPolicy: PolicyLookup;
  maxAttempts: number;
  now: Clock;
  /** After a change that recorded jobs, so they leave at once. */
  onChanged(): void;
}

/** The organization's payouts, each with its attempts, and the retry of a failed one. */
export const payoutRoutes: Binding<PayoutPartnerContext>[] = [
  implement(listPayoutsRoute, async ({ query }, ctx) => {
    const { items, total } = await listPayouts(ctx.payouts, query);
    return page(items, { page: query.page, limit: query.limit, total });
  }),
  implement(getPayout, async ({ params }, ctx) =>
    ok(await readPayout(tenantPayoutStoreOf(ctx.payouts), tenantLedgerOf(ctx.attempts), params.id)),
  ),
  implement(retryPayoutRoute, async ({ params }, ctx) => {
    const view = await retryPayout(tenantPayoutStoreOf(ctx.payouts), params.id, {
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

/** Ops: origination by hand, the same domain function as the `payout-originations` worker and the sweep. */
export const payoutOpsRoutes: Binding<PayoutOpsContext>[] = [
  implement(opsOriginatePayout, async ({ body }, ctx) => {
    const { created: isNew, payout } = await originatePayout(body.determinationId, ctx.originate);
    if (isNew) ctx.onChanged();
    return isNew ? created(opsPayoutView(payout)) : ok(opsPayoutView(payout));
  }),
];
