import { spawn } from 'node:child_process';
import { once } from 'node:events';
import http from 'node:http';
import path from 'node:path';
import { eventually } from '@parametric/test-harness';
import { configEnv, type PaymentsPlatform, pendingTier2Policy, startPaymentsPlatform } from './support';

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

it('keeps the receipt of a success callback that comes after the sweep credited the payment', async () => {
  const { org, policy } = await pendingTier2Policy(p);
  // No callback from the simulator: the sweep credits it by STK query, which has no receipt.
  const reply = await initiate(org.apiKey, {
    reference: policy.id,
    amount: policy.premium,
    phoneNumber: '+254711000090',
  });
  const id = reply.body.data.transactionId;
  const read = () => p.gateway.api('GET', `/payments/${id}`, { key: org.apiKey });
  await eventually(async () => expect((await read()).body.data).toMatchObject({ status: 'SUCCEEDED' }), {
    timeout: 15_000,
    message: 'the sweep to credit the payment',
  });
  expect((await read()).body.data.mpesaReceiptNumber).toBeNull();
  const stored = await p.db.collection('payment_transactions').findOne({ _id: id as never });
  const callback = (receipt: string, amount = policy.premium) =>
    fetch(`${p.config.PAYMENTS_CALLBACK_BASE_URL}/mpesa/${p.config.PAYMENTS_CALLBACK_TOKEN}/stk`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        Body: {
          stkCallback: {
            MerchantRequestID: stored?.merchantRequestId,
            CheckoutRequestID: stored?.checkoutRequestId,
            ResultCode: 0,
            ResultDesc: 'The service request is processed successfully.',
            CallbackMetadata: {
              Item: [
                { Name: 'Amount', Value: amount },
                { Name: 'MpesaReceiptNumber', Value: receipt },
                { Name: 'TransactionDate', Value: 20261122101010 },
                { Name: 'PhoneNumber', Value: 254711000090 },
              ],
            },
          },
        },
      }),
    });

  // A callback for another amount is not ours to believe; the right one brings its receipt.
  expect((await callback('SWRONGAMT1', policy.premium + 1)).status).toBe(200);
  expect((await read()).body.data.mpesaReceiptNumber).toBeNull();
  expect((await callback('SLATE00001')).status).toBe(200);
  expect((await read()).body.data).toMatchObject({ status: 'SUCCEEDED', mpesaReceiptNumber: 'SLATE00001' });
  // Once known, a receipt stays; the payment was credited once (one activation job recorded).
  expect((await callback('SLATE00002')).status).toBe(200);
  expect((await read()).body.data.mpesaReceiptNumber).toBe('SLATE00001');
  const after = await p.db.collection('payment_transactions').findOne({ _id: id as never });
  expect(after).toMatchObject({ status: 'SUCCEEDED', resolvedBy: 'RECONCILIATION' });
  expect(
    await p.db.collection('provider_callbacks').countDocuments({ transactionId: id, outcome: 'SUCCEEDED' }),
  ).toBe(0);
});

it('activates the policy once when the service is killed after crediting, before the activation job left', async () => {
  const { org, policy } = await pendingTier2Policy(p);
  // A prompt the simulator never calls back for: the callback below is posted by the test, and
  // (being unsigned) confirmed by STK query like any other.
  const reply = await initiate(org.apiKey, {
    reference: policy.id,
    amount: policy.premium,
    phoneNumber: '+254711000090',
  });
  const id = reply.body.data.transactionId;
  const stored = await p.db.collection('payment_transactions').findOne({ _id: id as never });

  // The service that takes the callback is a real process whose Redis is unreachable, so the
  // activation job cannot leave it; then it is killed.
  await p.payments.stop();
  const child = spawn(process.execPath, ['--import', 'tsx', 'services/payments/src/main.ts'], {
    cwd: path.resolve(__dirname, '../../..'),
    env: { ...process.env, ...configEnv(p.config), REDIS_URL: 'redis://127.0.0.1:9', RUN_WORKERS: 'false' },
    stdio: 'ignore',
  });
  try {
    await eventually(
      async () => expect((await fetch(`${p.config.PAYMENTS_CALLBACK_BASE_URL}/healthz`)).ok).toBe(true),
      {
        timeout: 20_000,
        message: 'the payments process to listen',
      },
    );
    const callback = await fetch(
      `${p.config.PAYMENTS_CALLBACK_BASE_URL}/mpesa/${p.config.PAYMENTS_CALLBACK_TOKEN}/stk`,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          Body: {
            stkCallback: {
              MerchantRequestID: stored?.merchantRequestId,
              CheckoutRequestID: stored?.checkoutRequestId,
              ResultCode: 0,
              ResultDesc: 'The service request is processed successfully.',
              CallbackMetadata: {
                Item: [
                  { Name: 'Amount', Value: policy.premium },
                  { Name: 'MpesaReceiptNumber', Value: 'SKILLED001' },
                  { Name: 'TransactionDate', Value: 20261122101010 },
                  { Name: 'PhoneNumber', Value: 254711000090 },
                ],
              },
            },
          },
        }),
      },
    );
    expect(callback.status).toBe(200);
    const credited = await p.db.collection('payment_transactions').findOne({ _id: id as never });
    expect(credited).toMatchObject({ status: 'SUCCEEDED', mpesaReceiptNumber: 'SKILLED001' });
    expect(credited?.jobOutbox).toHaveLength(1);
  } finally {
    const exited = once(child, 'exit');
    child.kill('SIGKILL');
    await exited;
  }

  // A new process: what the killed one recorded goes out, and the policy is activated once.
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
  await p.payments.drainOutbox();
  const after = await p.db.collection('payment_transactions').findOne({ _id: id as never });
  expect(after?.jobOutbox).toEqual([]);
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
