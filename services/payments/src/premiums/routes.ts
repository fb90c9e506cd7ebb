import { getPayment, initiatePayment, listPayments as listPaymentsRoute } from '@parametric/contracts';
import { type Binding, created, implement, ok, page } from '@parametric/http';
import type { PolicyLookup } from '@parametric/policy-client';
import type { Clock } from '../clock';
import type { PartnerContext } from '../context';
import type { PremiumState } from '../metrics';
import type { ByEnvironment } from '../sandbox';
import { initiatePremium, initiationView, listPayments, readPayment } from './domain';
import type { PremiumProvider } from './provider';

/** What the premium routes use besides the caller's data: built once per process. */
export interface PremiumRouteDeps {
  findPolicy: PolicyLookup;
  /** Each environment's Daraja (sandbox absent where the platform has none). */
  providers: ByEnvironment<PremiumProvider>;
  /** Where Daraja posts the STK result (the callback listener, token in the path). */
  stkCallbackUrl: string;
  /** Takes up callbacks that arrived before the prompt's id was stored. */
  takeUpEarlyCallbacks(checkoutRequestId: string): Promise<void>;
  now: Clock;
  /** `premium_collections_total` (counted by the domain where the change is committed). */
  onPremium?: (state: PremiumState) => void;
}

/** Premium collection (`/payments/initiate`, docs/payments.md) and the payment reads. */
export function premiumRoutes(deps: PremiumRouteDeps): Binding<PartnerContext>[] {
  return [
    implement(initiatePayment, async ({ body }, { tenant, market, environment }) => {
      const { created: isNew, transaction } = await initiatePremium(tenant, { market, environment }, body, {
        findPolicy: deps.findPolicy,
        providers: deps.providers,
        callbackUrl: deps.stkCallbackUrl,
        now: deps.now(),
        ...(deps.onPremium ? { onPremium: deps.onPremium } : {}),
      });
      if (isNew && transaction.checkoutRequestId)
        await deps.takeUpEarlyCallbacks(transaction.checkoutRequestId);
      return isNew ? created(initiationView(transaction)) : ok(initiationView(transaction));
    }),
    implement(listPaymentsRoute, async ({ query }, { tenant }) => {
      const { items, total } = await listPayments(tenant, query);
      return page(items, { page: query.page, limit: query.limit, total });
    }),
    implement(getPayment, async ({ params }, { tenant }) => ok(await readPayment(tenant, params.id))),
  ];
}
