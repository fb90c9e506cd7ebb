import { createQuoteRoute, getQuoteRoute } from '@parametric/contracts';
import { type Binding, created, implement, ok } from '@parametric/http';
import { createQuote, type QuoteTenant, readQuote } from './domain';
import type { RateSource } from './rates';

/** What the quote handlers may touch: the caller's quotes, the rate source and the clock. */
export interface QuoteContext {
  tenant: QuoteTenant;
  rates: Pick<RateSource, 'usdcPerKes'>;
  now: () => Date;
}

/** Partner routes: `POST /payments/quote` and `GET /payments/quotes/{id}`. */
export function quoteRoutes(options: { ttlSeconds: number }): Binding<QuoteContext>[] {
  return [
    implement(createQuoteRoute, async ({ body }, { tenant, rates, now }) =>
      created(await createQuote(tenant, body, { rates, now, ttlSeconds: options.ttlSeconds })),
    ),
    implement(getQuoteRoute, async ({ params }, { tenant, now }) =>
      ok(await readQuote(tenant, params.id, now())),
    ),
  ];
}
