import { randomUUID } from 'node:crypto';
import { connectMongoose, type MongooseHandle } from '@parametric/test-harness';
import { matchEarlyCallbacks } from '../../src/premiums/confirmation';
import { createDaraja, parseStkCallback } from '../../src/provider';
import { paymentRepositories } from '../../src/repositories';

let mongo: MongooseHandle;
let repositories: ReturnType<typeof paymentRepositories>;
// Never asked: these tests credit without the STK query.
const provider = createDaraja({
  baseUrl: 'http://127.0.0.1:9',
  consumerKey: 'k',
  consumerSecret: 's',
  shortcode: '174379',
  passkey: 'p',
  b2cShortcode: '600000',
  initiatorName: 'i',
  securityCredential: 'c',
  timeoutMs: 1_000,
  breakerResetMs: 1_000,
});

beforeAll(async () => {
  mongo = await connectMongoose('payments-early-callbacks');
  repositories = paymentRepositories(mongo.connection);
  await repositories.init();
});

afterAll(async () => {
  await provider.close();
  await mongo.close();
});

const stkCallback = (checkoutRequestId: string, amount: number) => ({
  Body: {
    stkCallback: {
      MerchantRequestID: 'merchant-1',
      CheckoutRequestID: checkoutRequestId,
      ResultCode: 0,
      ResultDesc: 'The service request is processed successfully.',
      CallbackMetadata: {
        Item: [
          { Name: 'Amount', Value: amount },
          { Name: 'MpesaReceiptNumber', Value: 'EARLY00001' },
          { Name: 'TransactionDate', Value: 20261122101010 },
          { Name: 'PhoneNumber', Value: 254711000001 },
        ],
      },
    },
  },
});

describe('a callback that overtakes our record of the prompt', () => {
  it('is taken up once the CheckoutRequestID is stored, and only once', async () => {
    const data = repositories.acrossOrganizations();
    const organizationId = randomUUID();
    const transactionId = randomUUID();
    const checkout = `ws_CO_${randomUUID()}`;
    await repositories.forOrganization(organizationId).transactions.create({
      _id: transactionId,
      policyId: randomUUID(),
      policyNumber: 'KE-202611-ABCDEF',
      orderId: '202611ABCDEF',
      provider: 'MPESA',
      currency: 'KES',
      amountMinor: '147900',
      phoneNumber: '+254711000001',
      status: 'PENDING',
    });
    // The callback arrives first: no transaction has its id yet.
    await data.callbacks.create({
      kind: 'STK',
      receivedAt: new Date(),
      body: stkCallback(checkout, 1479),
      outcome: 'UNKNOWN_CHECKOUT',
      checkoutRequestId: checkout,
    });
    await data.transactions.updateOne({ _id: transactionId }, { $set: { checkoutRequestId: checkout } });

    const deps = {
      data,
      providers: { live: provider },
      confirmWithQuery: false,
      parseStk: parseStkCallback,
      now: new Date(),
    };
    const [first, second] = await Promise.all([
      matchEarlyCallbacks(checkout, deps),
      matchEarlyCallbacks(checkout, deps),
    ]);
    expect([...(first ?? []), ...(second ?? [])]).toEqual(['SUCCEEDED']);
    const stored = await data.transactions.findById(transactionId).lean();
    expect(stored).toMatchObject({
      status: 'SUCCEEDED',
      mpesaReceiptNumber: 'EARLY00001',
      resolvedBy: 'CALLBACK',
    });
    expect(stored?.jobOutbox).toHaveLength(1);
    const callback = await data.callbacks.findOne({ checkoutRequestId: checkout }).lean();
    expect(callback).toMatchObject({ outcome: 'SUCCEEDED', transactionId });
  });
});
