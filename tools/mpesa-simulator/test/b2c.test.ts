import type { ReceivedCallback } from '../src';
import { b2cBody, resultOf, type Setup, setup, statusBody } from './helpers';

const B2C = '/mpesa/b2c/v3/paymentrequest';
const STATUS = '/mpesa/transactionstatus/v1/query';

describe('B2C payment request', () => {
  let t: Setup;
  afterEach(async () => {
    await t.close();
  });

  async function pay(overrides: Record<string, unknown> = {}) {
    const body = b2cBody(t.sink.url, overrides);
    const answer = await t.post(B2C, body);
    expect(answer.status).toBe(200);
    return { ...(answer.body as { ConversationID: string; OriginatorConversationID: string }), body };
  }

  const resultFor = (ocid: string) =>
    t.sink.waitFor((c) => c.path === '/b2c/result' && resultOf(c)?.OriginatorConversationID === ocid);

  it('acknowledges, then POSTs the Result with the documented ResultParameters', async () => {
    t = await setup();
    const answer = await t.post(
      B2C,
      b2cBody(t.sink.url, { OriginatorConversationID: 'po_123', Amount: '150' }),
    );
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({
      ConversationID: expect.stringMatching(/^AG_20260301_[0-9a-f]+$/),
      OriginatorConversationID: 'po_123',
      ResponseCode: '0',
      ResponseDescription: 'Accept the service request successfully.',
    });

    const result = await resultFor('po_123');
    expect(result.body).toEqual({
      Result: {
        ResultType: 0,
        ResultCode: 0,
        ResultDesc: 'The service request is processed successfully.',
        OriginatorConversationID: 'po_123',
        ConversationID: answer.body.ConversationID,
        TransactionID: expect.stringMatching(/^[A-Z][A-Z0-9]{9}$/),
        ResultParameters: {
          ResultParameter: [
            { Key: 'TransactionAmount', Value: 150 },
            { Key: 'TransactionReceipt', Value: resultOf(result).TransactionID },
            { Key: 'ReceiverPartyPublicName', Value: '254722000001 - SIMULATED CUSTOMER 0001' },
            // 09:00 UTC is 12:00 in Nairobi.
            { Key: 'TransactionCompletedDateTime', Value: '01.03.2026 12:00:00' },
            { Key: 'B2CUtilityAccountAvailableFunds', Value: 4_999_850 },
            { Key: 'B2CWorkingAccountAvailableFunds', Value: 1_000_000 },
            { Key: 'B2CRecipientIsRegisteredCustomer', Value: 'Y' },
            { Key: 'B2CChargesPaidAccountAvailableFunds', Value: -15 },
          ],
        },
        ReferenceData: { ReferenceItem: { Key: 'QueueTimeoutURL', Value: `${t.sink.url}/b2c/timeout` } },
      },
    });
  });

  it('rejects a reused OriginatorConversationID: 500 500.002.1001, and pays nothing more', async () => {
    t = await setup();
    await pay({ OriginatorConversationID: 'po_dup' });
    const again = await t.post(B2C, b2cBody(t.sink.url, { OriginatorConversationID: 'po_dup', Amount: 999 }));
    expect(again.status).toBe(500);
    expect(again.body).toEqual({
      requestId: expect.any(String),
      errorCode: '500.002.1001',
      errorMessage: 'Duplicate OriginatorConversationID.',
    });
    await resultFor('po_dup');
    expect(t.sim.transactions().filter((x) => x.type === 'B2C')).toHaveLength(1);
  });

  it('254722000011: odd attempts fail with ResultCode 1 (no parameters), even attempts succeed', async () => {
    t = await setup();
    const codes: number[] = [];
    for (let attempt = 1; attempt <= 4; attempt++) {
      const { OriginatorConversationID } = await pay({ PartyB: '254722000011' });
      const result = resultOf(await resultFor(OriginatorConversationID));
      codes.push(result.ResultCode);
      if (result.ResultCode === 1) {
        expect(result).toEqual({
          ResultType: 0,
          ResultCode: 1,
          ResultDesc: 'The balance is insufficient for the transaction.',
          OriginatorConversationID,
          ConversationID: expect.any(String),
          TransactionID: expect.any(String),
          ReferenceData: expect.any(Object),
        });
      }
    }
    expect(codes).toEqual([1, 0, 1, 0]);

    // reset() restarts the count: the next attempt is a first attempt again.
    t.sim.reset();
    const { OriginatorConversationID } = await pay({ PartyB: '254722000011' });
    expect(resultOf(await resultFor(OriginatorConversationID)).ResultCode).toBe(1);
  });

  it('254722000021: fails permanently with ResultCode 2040', async () => {
    t = await setup();
    const { OriginatorConversationID } = await pay({ PartyB: '254722000021' });
    expect(resultOf(await resultFor(OriginatorConversationID))).toMatchObject({
      ResultCode: 2040,
      ResultDesc:
        "Credit Party customer type (Unregistered or Registered Customer) can't be supported by the service.",
    });
    expect(resultOf(await resultFor(OriginatorConversationID)).ResultParameters).toBeUndefined();
  });

  it('254722000090: a QueueTimeOut instead of a Result, yet Transaction Status reports it Completed', async () => {
    t = await setup();
    const { OriginatorConversationID, ConversationID } = await pay({ PartyB: '254722000090', Amount: 500 });
    const timeout = await t.sink.waitFor((c) => c.path === '/b2c/timeout');
    expect(timeout.body).toEqual({
      Result: {
        ResultType: 1,
        ResultDesc: 'The service request timed out in the queue.',
        OriginatorConversationID,
        ConversationID,
        ReferenceData: { ReferenceItem: { Key: 'QueueTimeoutURL', Value: `${t.sink.url}/b2c/timeout` } },
      },
    });

    const ack = await t.post(
      STATUS,
      statusBody(t.sink.url, { OriginalConversationID: OriginatorConversationID }),
    );
    expect(ack.status).toBe(200);
    const status = await t.sink.waitFor((c) => c.path === '/status/result');
    const params = Object.fromEntries(
      (resultOf(status).ResultParameters.ResultParameter as { Key: string; Value?: unknown }[]).map((p) => [
        p.Key,
        p.Value,
      ]),
    );
    expect(params).toMatchObject({
      TransactionStatus: 'Completed',
      OriginatorConversationID,
      ConversationID,
      Amount: '500',
      ReceiptNo: expect.stringMatching(/^[A-Z][A-Z0-9]{9}$/),
    });
    expect(t.sink.received.filter((c: ReceivedCallback) => c.path === '/b2c/result')).toEqual([]);
  });

  it('254722000091: POSTs the same Result twice', async () => {
    t = await setup();
    const { OriginatorConversationID } = await pay({ PartyB: '254722000091' });
    const both = await t.sink.waitForCount(
      2,
      (c) => c.path === '/b2c/result' && resultOf(c)?.OriginatorConversationID === OriginatorConversationID,
    );
    expect(both[0]?.body).toEqual(both[1]?.body);
    expect(resultOf(both[0] as ReceivedCallback).ResultCode).toBe(0);
  });

  it('fails with 2001 when the initiator or its credential is not the configured one', async () => {
    t = await setup({ initiatorName: 'apiop', securityCredential: 'right==' });
    const wrongName = await pay({ InitiatorName: 'someone', SecurityCredential: 'right==' });
    const wrongCredential = await pay({ InitiatorName: 'apiop', SecurityCredential: 'wrong==' });
    const right = await pay({ InitiatorName: 'apiop', SecurityCredential: 'right==' });
    for (const ocid of [wrongName.OriginatorConversationID, wrongCredential.OriginatorConversationID]) {
      expect(resultOf(await resultFor(ocid))).toMatchObject({
        ResultCode: 2001,
        ResultDesc: 'The initiator information is invalid.',
      });
    }
    expect(resultOf(await resultFor(right.OriginatorConversationID)).ResultCode).toBe(0);
  });

  it.each([
    [9, 2, 'Declined due to limit rule: less than the minimum transaction amount.'],
    [250_001, 3, 'Declined due to limit rule: greater than the maximum transaction amount.'],
  ])('applies the B2C limits: KES %d fails with ResultCode %d', async (amount, code, desc) => {
    t = await setup();
    const { OriginatorConversationID } = await pay({ Amount: amount });
    expect(resultOf(await resultFor(OriginatorConversationID))).toMatchObject({
      ResultCode: code,
      ResultDesc: desc,
    });
  });

  it('fails with 2028 when PartyA is not the B2C shortcode', async () => {
    t = await setup();
    const { OriginatorConversationID } = await pay({ PartyA: '600111' });
    expect(resultOf(await resultFor(OriginatorConversationID)).ResultCode).toBe(2028);
  });

  it.each([
    ['OriginatorConversationID', { OriginatorConversationID: '' }],
    ['InitiatorName', { InitiatorName: undefined }],
    ['SecurityCredential', { SecurityCredential: '' }],
    ['CommandID', { CommandID: 'BusinessPayBill' }],
    ['Amount', { Amount: -5 }],
    ['Amount', { Amount: 10.5 }],
    ['PartyA', { PartyA: 'B2C' }],
    ['PartyB', { PartyB: '+254722000001' }],
    ['Remarks', { Remarks: 'x' }],
    ['Remarks', { Remarks: 'x'.repeat(101) }],
    ['QueueTimeOutURL', { QueueTimeOutURL: 'timeout' }],
    ['ResultURL', { ResultURL: 'mailto:ops@example.com' }],
    ['Occassion', { Occassion: 'y'.repeat(101) }],
  ])('rejects an invalid %s: 400 400.002.02', async (field, overrides) => {
    t = await setup();
    const answer = await t.post(B2C, b2cBody(t.sink.url, overrides));
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({
      errorCode: '400.002.02',
      errorMessage: `Bad Request - Invalid ${field}`,
    });
    expect(t.sim.transactions()).toEqual([]);
  });

  it('lets a rejected request keep its OriginatorConversationID free', async () => {
    t = await setup();
    await t.post(B2C, b2cBody(t.sink.url, { OriginatorConversationID: 'po_retry', Remarks: 'x' }));
    const { OriginatorConversationID } = await pay({ OriginatorConversationID: 'po_retry' });
    expect(OriginatorConversationID).toBe('po_retry');
  });
});
