import http from 'node:http';
import { eventually } from '@parametric/test-harness';
import { type PaymentsPlatform, pendingTier2Policy, startPaymentsPlatform } from './support';

let p: PaymentsPlatform;

beforeAll(async () => {
  // A prompt without a callback is resolved by STK query a second after it was sent.
  p = await startPaymentsPlatform({
    PAYMENTS_RECONCILE_AFTER_SECONDS: '1',
    PAYMENTS_RECONCILE_SWEEP_SECONDS: '1',
  });
}, 120_000);

afterAll(async () => {
  await p?.stop();
});

const initiate = (key: string, body: unknown) => p.gateway.api('POST', '/payments/initiate', { key, body });

it('resolves a prompt whose callback never comes by STK query, and activates the policy', async () => {
  const { org, policy } = await pendingTier2Policy(p);
  const reply = await initiate(org.apiKey, {
    reference: policy.id,
    amount: policy.premium,
    phoneNumber: '+254711000090',
  });
  const id = reply.body.data.transactionId;
  await eventually(
    async () => {
      const stored = await p.db.collection('payment_transactions').findOne({ _id: id as never });
      expect(stored).toMatchObject({ status: 'SUCCEEDED', resolvedBy: 'RECONCILIATION' });
    },
    { timeout: 15_000, message: 'the sweep to resolve the payment' },
  );
  expect(await p.db.collection('provider_callbacks').countDocuments({ transactionId: id })).toBe(0);
  await eventually(
    async () =>
      expect(
        (await p.gateway.api('GET', `/policies/${policy.id}`, { key: org.apiKey })).body.data.status,
      ).toBe('ACTIVE'),
    { timeout: 20_000, message: 'the policy to be activated' },
  );
});

it('activates the policy once when the service dies after the callback was recorded', async () => {
  const { org, policy } = await pendingTier2Policy(p);
  await p.connectWebhook(org.apiKey);
  const reply = await initiate(org.apiKey, {
    reference: policy.id,
    amount: policy.premium,
    phoneNumber: '+254711000001',
  });
  const id = reply.body.data.transactionId;
  // As soon as the callback is on record, the service goes away (its relay may or may not
  // have sent the activation job), and a new one starts on the same database.
  await eventually(
    async () =>
      expect(await p.db.collection('provider_callbacks').countDocuments({ transactionId: id })).toBe(1),
    { message: 'the callback on record' },
  );
  await p.restartPayments();
  await eventually(
    async () =>
      expect(
        (await p.gateway.api('GET', `/policies/${policy.id}`, { key: org.apiKey })).body.data,
      ).toMatchObject({
        status: 'ACTIVE',
        premiumReference: id,
      }),
    { timeout: 20_000, message: 'the policy to be activated' },
  );
  const activated = await p.receiver.waitForCount(
    1,
    (d) =>
      d.verified &&
      d.event === 'policy.activated' &&
      (d.body as { data: { policyId: string } }).data.policyId === policy.id,
    20_000,
  );
  expect(activated).toHaveLength(1);
});

describe('a failing provider', () => {
  let server: http.Server;
  let hits = 0;
  let broken: PaymentsPlatform;

  beforeAll(async () => {
    // A Daraja that answers every call with a 503: the breaker opens and then fails fast.
    server = http.createServer((_req, res) => {
      hits++;
      res.writeHead(503, { 'content-type': 'application/json' }).end('{"errorCode":"503.001.01"}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    broken = await startPaymentsPlatform({
      MPESA_BASE_URL: `http://127.0.0.1:${port}`,
      MPESA_BREAKER_RESET_MS: '600000',
    });
  }, 120_000);

  afterAll(async () => {
    await broken?.stop();
    await new Promise((resolve) => server.close(resolve));
  });

  it('answers 502 PAYMENT_ERROR with nothing written, and once the breaker is open without calling it', async () => {
    const { org, policy } = await pendingTier2Policy(broken);
    const body = { reference: policy.id, amount: policy.premium, phoneNumber: '+254711000001' };
    const replies = [];
    for (let i = 0; i < 12; i++)
      replies.push(await broken.gateway.api('POST', '/payments/initiate', { key: org.apiKey, body }));
    expect(replies.every((r) => r.status === 502 && r.body.error.code === 'PAYMENT_ERROR')).toBe(true);
    expect(await broken.db.collection('payment_transactions').countDocuments({ policyId: policy.id })).toBe(
      0,
    );
    const hitsWhenOpen = hits;
    const fast = await broken.gateway.api('POST', '/payments/initiate', { key: org.apiKey, body });
    expect(fast.status).toBe(502);
    expect(hits).toBe(hitsWhenOpen);
  });
});
