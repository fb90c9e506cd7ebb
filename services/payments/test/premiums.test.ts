import { eventually } from '@parametric/test-harness';
import { cropPurchase, farmerBody, plotBody } from '../../policy/test/support';
import { type PaymentsPlatform, pendingTier2Policy, startPaymentsPlatform } from './support';

let p: PaymentsPlatform;

beforeAll(async () => {
  p = await startPaymentsPlatform();
}, 120_000);

afterAll(async () => {
  await p?.stop();
});

const initiate = (key: string, body: unknown) => p.gateway.api('POST', '/payments/initiate', { key, body });
const stkPushes = () => p.simulator.requests().filter((r) => r.path === '/mpesa/stkpush/v1/processrequest');
const transactionsOf = (policyId: string) =>
  p.db.collection('payment_transactions').countDocuments({ policyId });
const policyOf = (key: string, id: string) => p.gateway.api('GET', `/policies/${id}`, { key });

// The rules of the checks themselves (their order, the amount against the premium, the markets,
// the statuses) are test/domain/premium-gates.test.ts; these prove them wired to the route.

describe('POST /payments/initiate', () => {
  it('prompts the phone, confirms the callback, activates the policy on chain and delivers policy.activated', async () => {
    const { org, policy } = await pendingTier2Policy(p);
    await p.connectWebhook(org.apiKey);
    const reply = await initiate(org.apiKey, {
      reference: policy.id,
      amount: policy.premium,
      phoneNumber: '+254711000001',
    });
    expect(reply.status).toBe(201);
    expect(reply.body.data).toMatchObject({
      reference: policy.id,
      provider: 'MPESA',
      status: 'PENDING',
      orderId: expect.any(String),
      instructions: expect.stringContaining('PIN'),
    });
    const id = reply.body.data.transactionId;
    const paid = await eventually(
      async () => {
        const read = await p.gateway.api('GET', `/payments/${id}`, { key: org.apiKey });
        expect(read.body.data.status).toBe('SUCCEEDED');
        return read.body.data;
      },
      { message: 'the payment to be confirmed' },
    );
    expect(paid).toMatchObject({
      amount: `${policy.premium}.00`,
      currency: 'KES',
      mpesaReceiptNumber: expect.any(String),
      failureReason: null,
      phoneNumber: '+2547•••••001',
    });
    // Daraja signs nothing: the success was confirmed by STK query before crediting.
    expect(p.simulator.requests().some((r) => r.path === '/mpesa/stkpushquery/v1/query')).toBe(true);
    await eventually(
      async () => {
        const read = (await policyOf(org.apiKey, policy.id)).body.data;
        expect(read).toMatchObject({ status: 'ACTIVE', premiumPaid: true, premiumReference: id });
      },
      { timeout: 20_000, message: 'the policy to be activated' },
    );
    await p.receiver.waitFor(
      (d) =>
        d.verified &&
        d.event === 'policy.activated' &&
        (d.body as { data: { policyId: string } }).data.policyId === policy.id,
      20_000,
    );
  });

  it('refuses a Tier 1 policy with 403 TIER_NOT_ENTITLED, writing nothing and prompting no one', async () => {
    const { org, policy } = await pendingTier2Policy(p, { tier: 'DETERMINATION' });
    const before = stkPushes().length;
    const reply = await initiate(org.apiKey, {
      reference: policy.id,
      amount: policy.premium,
      phoneNumber: '+254711000001',
    });
    expect(reply.status).toBe(403);
    expect(reply.body.error.code).toBe('TIER_NOT_ENTITLED');
    expect(await transactionsOf(policy.id)).toBe(0);
    expect(stkPushes().length).toBe(before);
  });

  it.each([
    [
      'reference and policyId that differ',
      (id: string, premium: number) => ({
        reference: id,
        policyId: '00000000-0000-4000-8000-000000000000',
        amount: premium,
        phoneNumber: '+254711000001',
      }),
      'policyId',
    ],
    [
      'no reference at all',
      (_id: string, premium: number) => ({ amount: premium, phoneNumber: '+254711000001' }),
      'reference',
    ],
    [
      'a phone not +254 and nine digits',
      (id: string, premium: number) => ({ reference: id, amount: premium, phoneNumber: '0711000001' }),
      'phoneNumber',
    ],
    [
      'a Tanzanian number',
      (id: string, premium: number) => ({ reference: id, amount: premium, phoneNumber: '+255711000001' }),
      'phoneNumber',
    ],
  ])('refuses %s with 400 naming the field, and prompts no one', async (_what, body, field) => {
    const { org, policy } = await pendingTier2Policy(p);
    const before = stkPushes().length;
    const reply = await initiate(org.apiKey, body(policy.id, policy.premium));
    expect(reply.status).toBe(400);
    expect(reply.body.error.details).toEqual(expect.arrayContaining([expect.objectContaining({ field })]));
    expect(await transactionsOf(policy.id)).toBe(0);
    expect(stkPushes().length).toBe(before);
  });

  it('accepts the legacy policyId alone, and both fields when they match', async () => {
    const a = await pendingTier2Policy(p);
    const b = await pendingTier2Policy(p, { org: a.org });
    const alias = await initiate(a.org.apiKey, {
      policyId: a.policy.id,
      amount: a.policy.premium,
      phoneNumber: '+254711000090',
    });
    const both = await initiate(a.org.apiKey, {
      reference: b.policy.id,
      policyId: b.policy.id,
      amount: b.policy.premium,
      phoneNumber: '+254711000090',
    });
    expect([alias.status, both.status]).toEqual([201, 201]);
    expect(alias.body.data.reference).toBe(a.policy.id);
  });

  it('answers another organization’s policy exactly like an unknown one (404)', async () => {
    const { policy } = await pendingTier2Policy(p);
    const { org: stranger } = await pendingTier2Policy(p);
    const theirs = await initiate(stranger.apiKey, {
      reference: policy.id,
      amount: policy.premium,
      phoneNumber: '+254711000001',
    });
    const unknown = await initiate(stranger.apiKey, {
      reference: '00000000-0000-4000-8000-000000000000',
      amount: policy.premium,
      phoneNumber: '+254711000001',
    });
    expect([theirs.status, unknown.status]).toEqual([404, 404]);
    expect(theirs.body).toEqual(unknown.body);
    expect(await transactionsOf(policy.id)).toBe(0);
  });

  it('sends no second prompt while one is pending: it answers the pending transaction', async () => {
    const { org, policy } = await pendingTier2Policy(p);
    const body = { reference: policy.id, amount: policy.premium, phoneNumber: '+254711000090' };
    const before = stkPushes().length;
    const replies = await Promise.all([
      initiate(org.apiKey, body),
      initiate(org.apiKey, body),
      initiate(org.apiKey, body),
    ]);
    expect(replies.map((r) => r.status).sort()).toEqual([200, 200, 201]);
    expect(new Set(replies.map((r) => r.body.data.transactionId)).size).toBe(1);
    expect(stkPushes().length).toBe(before + 1);
    expect(await transactionsOf(policy.id)).toBe(1);
  });

  it('records a cancelled prompt as FAILED with a stable reason; the partner may prompt again', async () => {
    const { org, policy } = await pendingTier2Policy(p);
    const first = await initiate(org.apiKey, {
      reference: policy.id,
      amount: policy.premium,
      phoneNumber: '+254711000032',
    });
    const failed = await eventually(
      async () => {
        const read = (
          await p.gateway.api('GET', `/payments/${first.body.data.transactionId}`, { key: org.apiKey })
        ).body.data;
        expect(read.status).toBe('FAILED');
        return read;
      },
      { message: 'the cancelled prompt' },
    );
    expect(failed).toMatchObject({
      failureReason: 'CANCELLED_BY_USER',
      providerResultCode: 1032,
      mpesaReceiptNumber: null,
    });
    expect((await policyOf(org.apiKey, policy.id)).body.data).toMatchObject({
      status: 'PENDING',
      premiumPaid: false,
    });
    const again = await initiate(org.apiKey, {
      reference: policy.id,
      amount: policy.premium,
      phoneNumber: '+254711000001',
    });
    expect(again.status).toBe(201);
    expect(again.body.data.transactionId).not.toBe(first.body.data.transactionId);
  });

  it('refuses a policy already paid with 409', async () => {
    const { org, policy } = await pendingTier2Policy(p);
    await initiate(org.apiKey, {
      reference: policy.id,
      amount: policy.premium,
      phoneNumber: '+254711000001',
    });
    await eventually(
      async () => expect((await policyOf(org.apiKey, policy.id)).body.data.premiumPaid).toBe(true),
      {
        timeout: 20_000,
        message: 'the premium to be paid',
      },
    );
    const again = await initiate(org.apiKey, {
      reference: policy.id,
      amount: policy.premium,
      phoneNumber: '+254711000001',
    });
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('CONFLICT');
  });
});

describe('provider callbacks', () => {
  const stkCallback = (checkoutRequestId: string, amount: number, resultCode = 0) => ({
    Body: {
      stkCallback: {
        MerchantRequestID: 'forged-merchant',
        CheckoutRequestID: checkoutRequestId,
        ResultCode: resultCode,
        ResultDesc: 'The service request is processed successfully.',
        CallbackMetadata: {
          Item: [
            { Name: 'Amount', Value: amount },
            { Name: 'MpesaReceiptNumber', Value: 'FORGED123' },
            { Name: 'TransactionDate', Value: 20261122101010 },
            { Name: 'PhoneNumber', Value: 254711000090 },
          ],
        },
      },
    },
  });
  const post = (path: string, body: unknown) =>
    fetch(`${p.payments.callbackUrl}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  it('ignores with 200 a callback with a wrong token, an unknown checkout or a wrong amount, and changes nothing', async () => {
    const { org, policy } = await pendingTier2Policy(p);
    const reply = await initiate(org.apiKey, {
      reference: policy.id,
      amount: policy.premium,
      phoneNumber: '+254711000090',
    });
    const id = reply.body.data.transactionId;
    const stored = await p.db.collection('payment_transactions').findOne({ _id: id as never });
    const checkout = String(stored?.checkoutRequestId);
    const answers = await Promise.all([
      post(`/mpesa/wrong-token/stk`, stkCallback(checkout, policy.premium)),
      post(`/mpesa/${p.config.PAYMENTS_CALLBACK_TOKEN}/stk`, stkCallback('ws_CO_unknown', policy.premium)),
      post(`/mpesa/${p.config.PAYMENTS_CALLBACK_TOKEN}/stk`, stkCallback(checkout, policy.premium - 1)),
      post(`/mpesa/${p.config.PAYMENTS_CALLBACK_TOKEN}/stk`, { nonsense: true }),
    ]);
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200]);
    expect(await answers[0]?.json()).toEqual({ ResultCode: 0, ResultDesc: 'Accepted' });
    const after = await p.db.collection('payment_transactions').findOne({ _id: id as never });
    expect(after?.status).toBe('PENDING');
    expect(after?.mpesaReceiptNumber).toBeNull();
    const outcomes = (await p.db.collection('provider_callbacks').find({}).toArray()).map((c) => c.outcome);
    expect(outcomes).toEqual(
      expect.arrayContaining(['REJECTED_TOKEN', 'UNKNOWN_CHECKOUT', 'AMOUNT_MISMATCH', 'MALFORMED']),
    );
  });

  it('credits a premium once when the provider calls back twice', async () => {
    const { org, policy } = await pendingTier2Policy(p);
    const reply = await initiate(org.apiKey, {
      reference: policy.id,
      amount: policy.premium,
      phoneNumber: '+254711000091',
    });
    const id = reply.body.data.transactionId;
    await eventually(
      async () => {
        const calls = await p.db.collection('provider_callbacks').find({ transactionId: id }).toArray();
        expect(calls.map((c) => c.outcome).sort()).toEqual(['ALREADY_RESOLVED', 'SUCCEEDED']);
      },
      { message: 'both callbacks' },
    );
    await p.payments.drainOutbox();
    const stored = await p.db.collection('payment_transactions').findOne({ _id: id as never });
    expect(stored).toMatchObject({ status: 'SUCCEEDED', resolvedBy: 'CALLBACK', jobOutbox: [] });
  });
});

describe('POST /payments/quote through the gateway', () => {
  it('quotes KES to USDC exactly at the source’s rate, and stores the quote', async () => {
    const { org } = await pendingTier2Policy(p);
    p.rates.setRate('129.45');
    const reply = await p.gateway.api('POST', '/payments/quote', {
      key: org.apiKey,
      body: { amount: 1294.5, fromCurrency: 'KES', toCurrency: 'USDC' },
    });
    expect(reply.status).toBe(201);
    expect(reply.body.data).toMatchObject({
      amount: '1294.50',
      fromCurrency: 'KES',
      toCurrency: 'USDC',
      convertedAmount: '10.000000',
      status: 'ACTIVE',
    });
    const read = await p.gateway.api('GET', `/payments/quotes/${reply.body.data.quoteId}`, {
      key: org.apiKey,
    });
    expect(read.body.data).toEqual(reply.body.data);
  });
});

/** A sandbox organization on Tier 2, all through the gateway (docs/api.md, "Sandbox"). */
describe('a sandbox organization’s premium (docs/api.md, "Sandbox")', () => {
  async function sandboxTier2() {
    const org = await p.gateway.register({ environment: 'sandbox' });
    const key = org.apiKey;
    const tier = await p.gateway.ops('POST', `/organizations/${org.id}/service-tier`, {
      body: { serviceTier: 'DETERMINATION_AND_SETTLEMENT' },
    });
    if (tier.status !== 200) throw new Error(`sandbox Tier 2: ${JSON.stringify(tier.body)}`);
    const farmer = await p.gateway.api('POST', '/farmers', { key, body: farmerBody() });
    const plot = await p.gateway.api('POST', '/plots', { key, body: plotBody(farmer.body.data.id) });
    const bought = await p.gateway.api('POST', '/policies/purchase', {
      key,
      body: cropPurchase(
        { farmerId: farmer.body.data.id, plotId: plot.body.data.id },
        { sumInsured: 50_000 },
      ),
    });
    if (bought.status !== 201) throw new Error(`sandbox purchase: ${JSON.stringify(bought.body)}`);
    const policy = bought.body.data.policy as { id: string; premium: number; settlementMode: string };
    return {
      policy,
      read: async () => (await policyOf(key, policy.id)).body.data,
      initiate: (phoneNumber: string) =>
        initiate(key, { reference: policy.id, amount: policy.premium, phoneNumber }),
      payment: (id: string) => p.gateway.api('GET', `/payments/${id}`, { key }),
    };
  }

  it('prompts a simulator test number, takes the callback and activates the policy', async () => {
    const sandbox = await sandboxTier2();
    expect(sandbox.policy.settlementMode).toBe('DETERMINATION_AND_SETTLEMENT');
    const reply = await sandbox.initiate('+254711000001');
    expect(reply.status).toBe(201);
    const id = reply.body.data.transactionId as string;
    await eventually(async () => expect((await sandbox.payment(id)).body.data.status).toBe('SUCCEEDED'), {
      message: 'the sandbox premium to be confirmed',
    });
    expect(await p.db.collection('payment_transactions').findOne({ _id: id as never })).toMatchObject({
      environment: 'sandbox',
    });
    await eventually(
      async () => expect(await sandbox.read()).toMatchObject({ status: 'ACTIVE', premiumPaid: true }),
      { timeout: 20_000, message: 'the sandbox policy to be activated' },
    );
  });

  it('refuses a real-looking number with 400 on phoneNumber: nothing written, no one prompted', async () => {
    const sandbox = await sandboxTier2();
    const before = stkPushes().length;
    const reply = await sandbox.initiate('+254712345678');
    expect(reply.status).toBe(400);
    expect(reply.body).toMatchObject({
      error: { code: 'INVALID_INPUT', details: [{ field: 'phoneNumber' }] },
    });
    expect([await transactionsOf(sandbox.policy.id), stkPushes().length]).toEqual([0, before]);
  });
});
