import { getPayment, initiatePayment } from '@parametric/contracts';
import { type Binding, created, implement, ok } from '@parametric/http';
import type { PartnerContext } from '../context';
import { initiatePremium, initiationView, readPayment } from './domain';

/** Premium collection (`/payments/initiate`, docs/payments.md) and the payment read. */
export const premiumRoutes: Binding<PartnerContext>[] = [
  implement(initiatePayment, async ({ body }, ctx) => {
    const { created: isNew, transaction } = await initiatePremium(ctx.tenant, ctx.market, body, {
      findPolicy: ctx.findPolicy,
      provider: ctx.provider,
      callbackUrl: ctx.stkCallbackUrl,
      now: ctx.now(),
      ...(ctx.onPremium ? { onPremium: ctx.onPremium } : {}),
    });
    if (isNew && transaction.checkoutRequestId) await ctx.afterPrompt(transaction.checkoutRequestId);
    return isNew ? created(initiationView(transaction)) : ok(initiationView(transaction));
  }),
  implement(getPayment, async ({ params }, { tenant }) => ok(await readPayment(tenant, params.id))),
];
