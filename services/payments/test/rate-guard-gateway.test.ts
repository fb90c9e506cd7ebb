import { parseExposition, type Sample, sampleValue } from '@parametric/metrics';
import { type PaymentsPlatform, startPaymentsPlatform } from './support';

// Row 7 of the money invariants through the gateway: a rate source serving a well-formed but
// absurd rate (0.000001 KES per USDC) gets no quote out of the platform, and ops are told.

let p: PaymentsPlatform;

beforeAll(async () => {
  p = await startPaymentsPlatform();
}, 120_000);

afterAll(async () => {
  await p?.stop();
});

async function scrape(): Promise<Sample[]> {
  const res = await fetch(`${p.payments.url}/metrics`);
  expect(res.status).toBe(200);
  return parseExposition(await res.text());
}
const refusals = (samples: Sample[], reason: string) =>
  sampleValue(samples, 'rate_source_refusals_total', { reason });

it('registers rate_source_refusals_total for every reason at start', async () => {
  const samples = await scrape();
  for (const reason of ['out_of_bounds', 'step_too_large']) {
    expect(samples.some((s) => s.name === 'rate_source_refusals_total' && s.labels.reason === reason)).toBe(
      true,
    );
  }
});

it('an absurd rate: 502 PAYMENT_ERROR on POST /payments/quote, nothing stored, the refusal counted', async () => {
  const org = await p.gateway.register();
  const quote = () =>
    p.gateway.api('POST', '/payments/quote', {
      key: org.apiKey,
      body: { amount: 1000, fromCurrency: 'KES', toCurrency: 'USDC' },
    });
  const before = await scrape();
  p.rates.setRate('0.000001');
  const refused = await quote();
  expect(refused.status).toBe(502);
  expect(refused.body).toEqual({
    success: false,
    error: {
      code: 'PAYMENT_ERROR',
      message:
        'No current KES→USDC exchange rate is available (the rate source gave a KES rate outside the range we accept); nothing was quoted, try again shortly',
    },
  });
  expect(await p.db.collection('quotes').countDocuments({ organizationId: org.id })).toBe(0);
  // Nor is it anyone's reference.
  expect(await p.db.collection('rate_references').countDocuments()).toBe(0);
  const after = await scrape();
  expect(refusals(after, 'out_of_bounds')).toBe(refusals(before, 'out_of_bounds') + 1);
  expect(refusals(after, 'step_too_large')).toBe(refusals(before, 'step_too_large'));

  // A sane rate again: quoted at once (the refusal was not cached), and now the reference.
  p.rates.setRate('129.45');
  const quoted = await quote();
  expect(quoted.status).toBe(201);
  expect(quoted.body.data).toMatchObject({
    amount: '1000.00',
    convertedAmount: '7.724990',
    sourceRate: '129.45',
  });
  expect(await p.db.collection('rate_references').findOne({})).toMatchObject({
    _id: 'USDC-KES',
    kesPerUsdc: '129.45',
  });
});
