import {
  DarajaCallbackError,
  isRetriableB2c,
  parseB2cQueueTimeout,
  parseB2cResult,
  parseStkCallback,
  parseTransactionStatusResult,
  stableReason,
} from '../../../src/provider';

// Bodies in the shapes of the samples in Daraja's documentation (M-Pesa Express, B2C and
// Transaction Status pages), with the variations seen in the wild.

describe('parseStkCallback', () => {
  it('reads a successful callback: amount, receipt, date (EAT) and phone', () => {
    const parsed = parseStkCallback({
      Body: {
        stkCallback: {
          MerchantRequestID: '29115-34620561-1',
          CheckoutRequestID: 'ws_CO_191220191020363925',
          ResultCode: 0,
          ResultDesc: 'The service request is processed successfully.',
          CallbackMetadata: {
            Item: [
              { Name: 'Amount', Value: 1.0 },
              { Name: 'MpesaReceiptNumber', Value: 'NLJ7RT61SV' },
              { Name: 'Balance' },
              { Name: 'TransactionDate', Value: 20191219102115 },
              { Name: 'PhoneNumber', Value: 254708374149 },
            ],
          },
        },
      },
    });
    expect(parsed).toEqual({
      merchantRequestId: '29115-34620561-1',
      checkoutRequestId: 'ws_CO_191220191020363925',
      resultCode: 0,
      rawResultCode: '0',
      resultDesc: 'The service request is processed successfully.',
      amount: 1,
      receipt: 'NLJ7RT61SV',
      transactionDate: new Date('2019-12-19T07:21:15Z'),
      phone: '+254708374149',
    });
  });

  it('reads a failed callback (no metadata), and a ResultCode sent as a string', () => {
    const parsed = parseStkCallback({
      Body: {
        stkCallback: {
          MerchantRequestID: 'f1e2-4b95-a71d-b30d3cdbb7a7942864',
          CheckoutRequestID: 'ws_CO_21072024125243250722943992',
          ResultCode: '1032',
          ResultDesc: 'Request cancelled by user',
        },
      },
    });
    expect(parsed).toEqual({
      merchantRequestId: 'f1e2-4b95-a71d-b30d3cdbb7a7942864',
      checkoutRequestId: 'ws_CO_21072024125243250722943992',
      resultCode: 1032,
      rawResultCode: '1032',
      resultDesc: 'Request cancelled by user',
      amount: undefined,
      receipt: undefined,
      transactionDate: undefined,
      phone: undefined,
    });
  });

  it.each([
    ['no Body', {}],
    ['no ids', { Body: { stkCallback: { ResultCode: 0, ResultDesc: 'ok' } } }],
    [
      'an object ResultCode',
      {
        Body: {
          stkCallback: { MerchantRequestID: 'm', CheckoutRequestID: 'c', ResultCode: {}, ResultDesc: '' },
        },
      },
    ],
    ['not an object', 'Body=1'],
  ])('throws DarajaCallbackError for %s', (_label, body) => {
    expect(() => parseStkCallback(body)).toThrow(DarajaCallbackError);
  });

  it('names the offending fields', () => {
    try {
      parseStkCallback({ Body: { stkCallback: { MerchantRequestID: 'm', ResultCode: 0, ResultDesc: 'x' } } });
      throw new Error('expected a DarajaCallbackError');
    } catch (err) {
      expect(err).toBeInstanceOf(DarajaCallbackError);
      expect((err as DarajaCallbackError).issues.join()).toContain('Body.stkCallback.CheckoutRequestID');
    }
  });
});

describe('parseB2cResult', () => {
  const success = {
    Result: {
      ResultType: 0,
      ResultCode: 0,
      ResultDesc: 'The service request is processed successfully.',
      OriginatorConversationID: '53e3-4aa8-9fe0-8fb5e4092cdd3533373',
      ConversationID: 'AG_20240706_2010364430d9bbdaf872',
      TransactionID: 'SG632NMUAB',
      ResultParameters: {
        ResultParameter: [
          { Key: 'TransactionAmount', Value: 10 },
          { Key: 'TransactionReceipt', Value: 'SG632NMUAB' },
          { Key: 'ReceiverPartyPublicName', Value: '254705912645 - NICHOLAS JOHN SONGOK' },
          { Key: 'TransactionCompletedDateTime', Value: '06.07.2024 22:48:52' },
          { Key: 'B2CUtilityAccountAvailableFunds', Value: 8959269.6 },
          { Key: 'B2CWorkingAccountAvailableFunds', Value: 1199371.0 },
          { Key: 'B2CRecipientIsRegisteredCustomer', Value: 'Y' },
          { Key: 'B2CChargesPaidAccountAvailableFunds', Value: -1980.0 },
        ],
      },
      ReferenceData: {
        ReferenceItem: {
          Key: 'QueueTimeoutURL',
          Value: 'https://internalsandbox.safaricom.co.ke/mpesa/b2cresults/v1/submit',
        },
      },
    },
  };

  it('reads a successful Result', () => {
    expect(parseB2cResult(success)).toEqual({
      originatorConversationId: '53e3-4aa8-9fe0-8fb5e4092cdd3533373',
      conversationId: 'AG_20240706_2010364430d9bbdaf872',
      resultCode: 0,
      rawResultCode: '0',
      resultDesc: 'The service request is processed successfully.',
      transactionId: 'SG632NMUAB',
      receipt: 'SG632NMUAB',
      amount: 10,
      completedAt: new Date('2024-07-06T19:48:52Z'),
      receiverName: '254705912645 - NICHOLAS JOHN SONGOK',
      utilityAccountBalance: 8959269.6,
    });
  });

  it('reads a failed Result (no parameters) with a retriable and a permanent code', () => {
    const failed = (code: number | string, desc: string) =>
      parseB2cResult({
        Result: {
          ResultType: 0,
          ResultCode: code,
          ResultDesc: desc,
          OriginatorConversationID: 'po_1',
          ConversationID: 'AG_20240707_201062f6f6f5804f7a33',
          TransactionID: 'SG722NMVXQ',
        },
      });
    const insufficient = failed(1, 'The balance is insufficient for the transaction.');
    expect(insufficient).toMatchObject({ resultCode: 1, transactionId: 'SG722NMVXQ' });
    expect(insufficient.receipt).toBeUndefined();
    expect(isRetriableB2c(insufficient.rawResultCode)).toBe(true);

    const noSuchNumber = failed('SFC_IC0003', 'The operator does not exist.');
    expect(noSuchNumber).toMatchObject({ resultCode: -1, rawResultCode: 'SFC_IC0003' });
    expect(isRetriableB2c(noSuchNumber.rawResultCode)).toBe(false);
    expect(stableReason(noSuchNumber.rawResultCode, 'B2C')).toBe('INVALID_PHONE');
  });

  it('accepts a lone ResultParameter object and a missing TransactionID', () => {
    const parsed = parseB2cResult({
      Result: {
        ResultCode: '0',
        ResultDesc: 'ok',
        OriginatorConversationID: 'po_2',
        ConversationID: 'AG_1',
        ResultParameters: { ResultParameter: { Key: 'TransactionAmount', Value: '75.00' } },
      },
    });
    expect(parsed).toMatchObject({ amount: 75, transactionId: '', resultCode: 0 });
  });

  it('rejects a Result without its ids', () => {
    expect(() => parseB2cResult({ Result: { ResultCode: 0, ResultDesc: 'ok' } })).toThrow(
      DarajaCallbackError,
    );
  });
});

describe('parseB2cQueueTimeout', () => {
  it('finds the OriginatorConversationID in a Result envelope or at the top level', () => {
    expect(parseB2cQueueTimeout({ Result: { ResultType: 1, OriginatorConversationID: 'po_3' } })).toEqual({
      originatorConversationId: 'po_3',
      conversationId: undefined,
      resultDesc: undefined,
    });
    expect(
      parseB2cQueueTimeout({
        OriginatorConversationID: 'po_4',
        ConversationID: 'AG_2',
        ResultDesc: 'timed out',
      }),
    ).toEqual({ originatorConversationId: 'po_4', conversationId: 'AG_2', resultDesc: 'timed out' });
    expect(() => parseB2cQueueTimeout({ Result: {} })).toThrow(DarajaCallbackError);
  });
});

describe('parseTransactionStatusResult', () => {
  it('reads the documented sample: the query ids, and the transaction asked about', () => {
    const parsed = parseTransactionStatusResult({
      Result: {
        ConversationID: 'AG_20180223_0000493344ae97d86f75',
        OriginatorConversationID: '3213-416199-2',
        ReferenceData: { ReferenceItem: { Key: 'Occasion' } },
        ResultCode: 0,
        ResultDesc: 'The service request is processed successfully.',
        ResultParameters: {
          ResultParameter: [
            { Key: 'DebitPartyName', Value: '600310 - Safaricom333' },
            { Key: 'CreditPartyName', Value: '254708374149 - John Doe' },
            { Key: 'OriginatorConversationID', Value: '3211-416020-3' },
            { Key: 'InitiatedTime', Value: 20180223054112 },
            { Key: 'DebitAccountType', Value: 'Utility Account' },
            { Key: 'DebitPartyCharges', Value: 'Fee For B2C Payment|KES|22.40' },
            { Key: 'TransactionReason' },
            { Key: 'ReasonType', Value: 'Business Payment to Customer via API' },
            { Key: 'TransactionStatus', Value: 'Completed' },
            { Key: 'FinalisedTime', Value: '20180223054112' },
            { Key: 'Amount', Value: '300' },
            { Key: 'ConversationID', Value: 'AG_20180223_000041b09c22e613d6c9' },
            { Key: 'ReceiptNo', Value: 'MBN31H462N' },
          ],
        },
        ResultType: 0,
        TransactionID: 'MBN0000000',
      },
    });
    expect(parsed).toEqual({
      originatorConversationId: '3213-416199-2',
      conversationId: 'AG_20180223_0000493344ae97d86f75',
      resultCode: 0,
      rawResultCode: '0',
      resultDesc: 'The service request is processed successfully.',
      transactionId: 'MBN0000000',
      transaction: {
        originatorConversationId: '3211-416020-3',
        conversationId: 'AG_20180223_000041b09c22e613d6c9',
        receipt: 'MBN31H462N',
        status: 'Completed',
        amount: 300,
        initiatedAt: new Date('2018-02-23T02:41:12Z'),
        finalisedAt: new Date('2018-02-23T02:41:12Z'),
        debitPartyName: '600310 - Safaricom333',
        creditPartyName: '254708374149 - John Doe',
        reasonType: 'Business Payment to Customer via API',
      },
    });
  });
});
