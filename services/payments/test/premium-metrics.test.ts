import { parseExposition, type Sample, sampleValue } from '@parametric/metrics';
import { eventually } from '@parametric/test-harness';
import { type PaymentsPlatform, pendingTier2Policy, startPaymentsPlatform } from './support';

// `premium_collections_total{state}` moved by premiums against the M-Pesa simulator: counted where
// each change is committed, so a repeated initiation or callback counts nothing more.

let p: PaymentsPlatform;

beforeAll(async () => {
  p = await startPaymentsPlatform();
}, 120_000);

afterAll(async () => {
  await p?.stop();
});

async function scrape(url: string): Promise<Sample[]> {
  const res = await fetch(`${url}/metrics`);
  expect(res.status).toBe(200);
  return parseExposition(await res.text());
}

const initiate = (key: string, body: unknown) => p.gateway.api('POST', '/payments/initiate', { key, body });
const premiums = (samples: Sample[], state: string) =>
  sampleValue(samples, 'premium_collections_total', { state });

it('a paid premium: initiated once (a repeat of the pending prompt is not), succeeded once; the Tier 2 activation is timed', async () => {
  const { org, policy } = await pendingTier2Policy(p);
  const before = await scrape(p.payments.url);
  const policyBefore = await scrape(p.policy.url);
  const body = { reference: policy.id, amount: policy.premium, phoneNumber: '+254711000001' };
  const replies = await Promise.all([initiate(org.apiKey, body), initiate(org.apiKey, body)]);
  expect(replies.map((r) => r.status).sort()).toEqual([200, 201]);
  const id = replies.find((r) => r.status === 201)?.body.data.transactionId;
  await eventually(async () => {
    const read = await p.gateway.api('GET', `/payments/${id}`, { key: org.apiKey });
    expect(read.body.data.status).toBe('SUCCEEDED');
  });
  const after = await scrape(p.payments.url);
  expect(premiums(after, 'initiated')).toBe(premiums(before, 'initiated') + 1);
  expect(premiums(after, 'succeeded')).toBe(premiums(before, 'succeeded') + 1);
  for (const state of ['failed', 'cancelled', 'timed_out']) {
    expect(premiums(after, state)).toBe(premiums(before, state));
  }
  // The activation the payment caused (the policy service's worker) is timed once.
  await eventually(
    async () => {
      const policyAfter = await scrape(p.policy.url);
      expect(sampleValue(policyAfter, 'chain_activation_duration_seconds_count')).toBe(
        sampleValue(policyBefore, 'chain_activation_duration_seconds_count') + 1,
      );
    },
    { timeout: 20_000 },
  );
  // The job that asked for it left the payments outbox.
  const transactions = { collection: 'payment_transactions' };
  expect(
    after.some(
      (s) => s.name === 'outbox_pending_documents' && s.labels.collection === transactions.collection,
    ),
  ).toBe(true);
  expect(after.some((s) => s.name === 'outbox_pending_documents' && s.labels.collection === 'payouts')).toBe(
    true,
  );
  // Both breakers of this service, closed.
  expect(sampleValue(after, 'circuit_breaker_state', { breaker: 'mpesa' })).toBe(0);
  expect(after.some((s) => s.name === 'circuit_breaker_state' && s.labels.breaker === 'rate_source')).toBe(
    true,
  );
});

it('a prompt the customer cancelled counts as cancelled', async () => {
  const { org, policy } = await pendingTier2Policy(p);
  const before = await scrape(p.payments.url);
  const reply = await initiate(org.apiKey, {
    reference: policy.id,
    amount: policy.premium,
    phoneNumber: '+254711000032',
  });
  expect(reply.status).toBe(201);
  await eventually(async () => {
    const after = await scrape(p.payments.url);
    expect(premiums(after, 'cancelled')).toBe(premiums(before, 'cancelled') + 1);
    expect(premiums(after, 'initiated')).toBe(premiums(before, 'initiated') + 1);
    expect(premiums(after, 'succeeded')).toBe(premiums(before, 'succeeded'));
  });
});
