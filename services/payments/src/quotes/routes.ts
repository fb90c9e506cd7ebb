import { createQuoteRoute, getQuoteRoute } from '@parametric/contracts';
import { type Binding, created, implement, ok } from '@parametric/http';
import { createQuote, type QuoteTenant, readQuote } from './domain';
import type { RateSource } from './rates';

/** What a quote handler gets per request: the caller's quotes. */
export interface QuoteContext {
  tenant: QuoteTenant;
}

/** Partner routes: `POST /payments/quote` and `GET /payments/quotes/{id}`. */
export function quoteRoutes(deps: {
  ttlSeconds: number;
  rates: Pick<RateSource, 'usdcPerKes'>;
  now: () => Date;
}): Binding<QuoteContext>[] {
  const { rates, now, ttlSeconds } = deps;
  return [
    implement(createQuoteRoute, async ({ body }, { tenant }) =>
      created(await createQuote(tenant, body, { rates, now, ttlSeconds })),
    ),
    implement(getQuoteRoute, async ({ params }, { tenant }) => ok(await readQuote(tenant, params.id, now()))),
  ];
}
