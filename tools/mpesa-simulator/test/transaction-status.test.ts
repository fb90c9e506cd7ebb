import { b2cBody, resultOf, type Setup, setup, statusBody, stkBody, stkOf } from './helpers';

const STATUS = '/mpesa/transactionstatus/v1/query';

describe('Transaction Status query', () => {
  let t: Setup;
  afterEach(async () => {
    await t.close();
  });

  async function payout(overrides: Record<string, unknown>) {
    const answer = await t.post('/mpesa/b2c/v3/paymentrequest', b2cBody(t.sink.url, overrides));
    expect(answer.status).toBe(200);
    const ocid = answer.body.OriginatorConversationID as string;
    const result = await t.sink.waitFor(
      (c) => c.path === '/b2c/result' && resultOf(c)?.OriginatorConversationID === ocid,
    );
    return { ocid, conversationId: answer.body.ConversationID as string, result: resultOf(result) };
  }

  async function ask(overrides: Record<string, unknown>) {
    const ack = await t.post(STATUS, statusBody(t.sink.url, overrides));
    expect(ack.status).toBe(200);
    expect(ack.body).toEqual({
      OriginatorConversationID: expect.any(String),
      ConversationID: expect.stringMatching(/^AG_/),
      ResponseCode: '0',
      ResponseDescription: 'Accept the service request successfully.',
    });
    const result = await t.sink.waitFor(
      (c) =>
        c.path === '/status/result' &&
        resultOf(c)?.OriginatorConversationID === ack.body.OriginatorConversationID,
    );
    return { ack: ack.body, result: resultOf(result) };
  }

  it('reports a completed payout by its OriginatorConversationID, with the documented keys', async () => {
    t = await setup();
    const paid = await payout({ OriginatorConversationID: 'po_done', Amount: 300 });
    const { ack, result } = await ask({ OriginalConversationID: 'po_done' });
    expect(result).toEqual({
      ConversationID: ack.ConversationID,
      OriginatorConversationID: ack.OriginatorConversationID,
      ReferenceData: { ReferenceItem: { Key: 'Occasion', Value: 'check' } },
      ResultCode: 0,
      ResultDesc: 'The service request is processed successfully.',
      ResultParameters: {
        ResultParameter: [
          { Key: 'DebitPartyName', Value: '600000 - SIMULATED B2C ORGANISATION' },
          { Key: 'CreditPartyName', Value: '254722000001 - SIMULATED CUSTOMER 0001' },
          { Key: 'OriginatorConversationID', Value: 'po_done' },
          { Key: 'InitiatedTime', Value: '20260301120000' },
          { Key: 'DebitAccountType', Value: 'Utility Account' },
          { Key: 'DebitPartyCharges', Value: 'Fee For B2C Payment|KES|15.00' },
          { Key: 'TransactionReason' },
          { Key: 'ReasonType', Value: 'Business Payment to Customer via API' },
          { Key: 'TransactionStatus', Value: 'Completed' },
          { Key: 'FinalisedTime', Value: '20260301120000' },
          { Key: 'Amount', Value: '300' },
          { Key: 'ConversationID', Value: paid.conversationId },
          { Key: 'ReceiptNo', Value: paid.result.TransactionID },
        ],
      },
      ResultType: 0,
      TransactionID: paid.result.TransactionID,
    });
  });

  it('accepts the id as OriginatorConversationID too, and reports a failed payout as Failed', async () => {
    t = await setup();
    await payout({ OriginatorConversationID: 'po_failed', PartyB: '254722000021' });
    const { result } = await ask({ OriginatorConversationID: 'po_failed' });
    const params = result.ResultParameters.ResultParameter as { Key: string; Value?: unknown }[];
    expect(params).toContainEqual({ Key: 'TransactionStatus', Value: 'Failed' });
    expect(params).toContainEqual({ Key: 'OriginatorConversationID', Value: 'po_failed' });
  });

  it('finds a payout and an STK payment by receipt (TransactionID)', async () => {
    t = await setup();
    const paid = await payout({});
    const byReceipt = await ask({ TransactionID: paid.result.TransactionID });
    expect(byReceipt.result.ResultCode).toBe(0);

    const push = await t.post(
      '/mpesa/stkpush/v1/processrequest',
      stkBody(t.clock.now(), `${t.sink.url}/stk`),
    );
    const callback = await t.sink.waitFor((c) => stkOf(c)?.CheckoutRequestID === push.body.CheckoutRequestID);
    const stkReceipt = stkOf(callback).CallbackMetadata.Item[1].Value as string;
    const stk = await ask({ TransactionID: stkReceipt });
    expect(stk.result.ResultParameters.ResultParameter).toEqual(
      expect.arrayContaining([
        { Key: 'TransactionStatus', Value: 'Completed' },
        { Key: 'ReceiptNo', Value: stkReceipt },
        { Key: 'Amount', Value: '1' },
      ]),
    );
  });

  it('reports an unknown transaction with a non-zero ResultCode and no parameters', async () => {
    t = await setup();
    const { result } = await ask({ OriginalConversationID: 'po_never_sent' });
    expect(result).toEqual({
      ConversationID: expect.any(String),
      OriginatorConversationID: expect.any(String),
      ReferenceData: expect.any(Object),
      ResultCode: 'R000001',
      ResultDesc: 'The transaction receipt number does not exist.',
      ResultType: 0,
      TransactionID: expect.any(String),
    });
  });

  it('fails with 2001 for another initiator when one is configured', async () => {
    t = await setup({ initiatorName: 'apiop' });
    const { result } = await ask({ Initiator: 'intruder', OriginalConversationID: 'po_x' });
    expect(result).toMatchObject({ ResultCode: 2001, ResultDesc: 'The initiator information is invalid.' });
  });

  it.each([
    ['CommandID', { CommandID: 'TransactionStatus' }],
    ['TransactionID', {}],
    ['IdentifierType', { OriginalConversationID: 'po_1', IdentifierType: '9' }],
    ['ResultURL', { OriginalConversationID: 'po_1', ResultURL: 'nowhere' }],
    ['Remarks', { OriginalConversationID: 'po_1', Remarks: '' }],
  ])('rejects an invalid %s: 400 400.002.02', async (field, overrides) => {
    t = await setup();
    const answer = await t.post(STATUS, statusBody(t.sink.url, overrides));
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({
      errorCode: '400.002.02',
      errorMessage: `Bad Request - Invalid ${field}`,
    });
  });
});
