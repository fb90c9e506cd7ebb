import {
  parseB2cQueueTimeout,
  parseB2cResult,
  parseStkCallback,
  parseTransactionStatusResult,
  stableReason,
} from '../../../src/provider';
import {
  B2C,
  darajaError,
  manualClock,
  PUSH,
  payoutInput,
  pushInput,
  QUERY,
  SIM,
  STATUS,
  type Started,
  startDaraja,
  TOKEN,
} from './support';

describe('Daraja client against the simulator', () => {
  let s: Started;
  afterEach(async () => {
    await s.close();
  });

  describe('STK push and query', () => {
    it('pushes with Daraja fields (EAT timestamp, password, 2547… numbers), and the callback parses', async () => {
      s = await startDaraja();
      const pushed = await s.daraja.stkPush(
        pushInput(s.sink.url, { description: 'Premium for policy pol_123', amount: 120 }),
      );
      expect(pushed).toEqual({
        merchantRequestId: expect.any(String),
        checkoutRequestId: expect.stringMatching(/^ws_CO_/),
        customerMessage: 'Success. Request accepted for processing',
      });

      const sent = s.sim.requests().find((r) => r.path === '/mpesa/stkpush/v1/processrequest');
      // 09:00 UTC is 12:00 in Nairobi.
      const timestamp = '20260301120000';
      expect(sent?.body).toEqual({
        BusinessShortCode: SIM.shortcode,
        Password: Buffer.from(`${SIM.shortcode}${SIM.passkey}${timestamp}`).toString('base64'),
        Timestamp: timestamp,
        TransactionType: 'CustomerPayBillOnline',
        Amount: 120,
        PartyA: '254711000001',
        PartyB: SIM.shortcode,
        PhoneNumber: '254711000001',
        CallBackURL: `${s.sink.url}/callbacks/stk`,
        AccountReference: 'POL-8F2K1',
        TransactionDesc: 'Premium for p',
      });

      const callback = await s.sink.waitFor((c) => c.path === '/callbacks/stk');
      const parsed = parseStkCallback(callback.body);
      expect(parsed).toEqual({
        merchantRequestId: pushed.merchantRequestId,
        checkoutRequestId: pushed.checkoutRequestId,
        resultCode: 0,
        rawResultCode: '0',
        resultDesc: 'The service request is processed successfully.',
        amount: 120,
        receipt: expect.stringMatching(/^[A-Z][A-Z0-9]{9}$/),
        transactionDate: new Date('2026-03-01T09:00:00Z'),
        phone: '+254711000001',
      });
      expect(stableReason(parsed.rawResultCode)).toBeNull();

      expect(await s.daraja.stkQuery(pushed.checkoutRequestId)).toEqual({
        state: 'DONE',
        resultCode: 0,
        rawResultCode: '0',
        resultDesc: 'The service request is processed successfully.',
      });
    });

    it('a cancelled push: the callback and the query give 1032, CANCELLED_BY_USER', async () => {
      s = await startDaraja();
      const pushed = await s.daraja.stkPush(pushInput(s.sink.url, { phone: '+254711000032' }));
      const parsed = parseStkCallback((await s.sink.waitFor(() => true)).body);
      expect(parsed).toMatchObject({ checkoutRequestId: pushed.checkoutRequestId, resultCode: 1032 });
      expect(parsed.receipt).toBeUndefined();
      expect(stableReason(parsed.rawResultCode)).toBe('CANCELLED_BY_USER');
      const queried = await s.daraja.stkQuery(pushed.checkoutRequestId);
      expect(queried).toEqual({
        state: 'DONE',
        resultCode: 1032,
        rawResultCode: '1032',
        resultDesc: 'Request cancelled by user',
      });
    });

    it('the query answers PENDING while Daraja is still processing', async () => {
      s = await startDaraja({ sim: { callbackDelayMs: 60_000 } });
      const pushed = await s.daraja.stkPush(pushInput(s.sink.url));
      expect(await s.daraja.stkQuery(pushed.checkoutRequestId)).toEqual({ state: 'PENDING' });
      expect(s.calls()).toEqual([TOKEN, PUSH, QUERY]);
    });

    it('with timestampZone UTC, sends the Timestamp in UTC (a UTC-only Daraja accepts it, an EAT-only one does not)', async () => {
      s = await startDaraja({ sim: { timestampZone: 'UTC' }, config: { timestampZone: 'UTC' } });
      await s.daraja.stkPush(pushInput(s.sink.url));
      expect(s.sim.requests()[1]?.body).toMatchObject({ Timestamp: '20260301090000' });
      await s.close();

      s = await startDaraja({ sim: { timestampZone: 'EAT' }, config: { timestampZone: 'UTC' } });
      const error = await darajaError(s.daraja.stkPush(pushInput(s.sink.url)));
      expect(error).toMatchObject({ kind: 'REJECTED', errorCode: '400.002.02', status: 400 });
      expect(error.message).toContain('Bad Request - Invalid Timestamp');
    });

    it('refuses a number or an amount Daraja would refuse, without calling it', async () => {
      s = await startDaraja();
      for (const input of [
        pushInput(s.sink.url, { phone: '0711000001' }),
        pushInput(s.sink.url, { phone: '+255711000001' }),
        pushInput(s.sink.url, { amount: 10.5 }),
        pushInput(s.sink.url, { amount: 0 }),
      ]) {
        expect(await darajaError(s.daraja.stkPush(input))).toMatchObject({
          kind: 'REJECTED',
          detail: 'INVALID_INPUT',
        });
      }
      expect(s.calls()).toEqual([]);
    });
  });

  describe('B2C and Transaction Status', () => {
    it('pays out, and the Result parses with receipt, amount and completion time', async () => {
      s = await startDaraja();
      const input = payoutInput(s.sink.url);
      const accepted = await s.daraja.b2c(input);
      expect(accepted).toEqual({
        conversationId: expect.stringMatching(/^AG_/),
        originatorConversationId: input.originatorConversationId,
      });
      expect(s.sim.requests()[1]?.body).toEqual({
        OriginatorConversationID: input.originatorConversationId,
        InitiatorName: SIM.initiatorName,
        SecurityCredential: SIM.securityCredential,
        CommandID: 'BusinessPayment',
        Amount: 2500,
        PartyA: SIM.b2cShortcode,
        PartyB: '254722000001',
        Remarks: 'Drought payout',
        QueueTimeOutURL: input.queueTimeoutUrl,
        ResultURL: input.resultUrl,
        Occassion: 'det_42',
      });

      const result = parseB2cResult((await s.sink.waitFor((c) => c.path === '/callbacks/b2c/result')).body);
      expect(result).toEqual({
        originatorConversationId: input.originatorConversationId,
        conversationId: accepted.conversationId,
        resultCode: 0,
        rawResultCode: '0',
        resultDesc: 'The service request is processed successfully.',
        transactionId: expect.stringMatching(/^[A-Z][A-Z0-9]{9}$/),
        receipt: result.transactionId,
        amount: 2500,
        completedAt: new Date('2026-03-01T09:00:00Z'),
        receiverName: '254722000001 - SIMULATED CUSTOMER 0001',
        utilityAccountBalance: 5_000_000 - 2500,
      });
    });

    it('a queue timeout parses as unknown, and Transaction Status then finds the payment completed', async () => {
      s = await startDaraja();
      const input = payoutInput(s.sink.url, { phone: '+254722000090' });
      const accepted = await s.daraja.b2c(input);
      const timeout = parseB2cQueueTimeout(
        (await s.sink.waitFor((c) => c.path === '/callbacks/b2c/timeout')).body,
      );
      expect(timeout).toEqual({
        originatorConversationId: input.originatorConversationId,
        conversationId: accepted.conversationId,
        resultDesc: 'The service request timed out in the queue.',
      });

      const query = await s.daraja.transactionStatus({
        originatorConversationId: input.originatorConversationId,
        resultUrl: `${s.sink.url}/callbacks/status`,
        queueTimeoutUrl: `${s.sink.url}/callbacks/status-timeout`,
        remarks: 'Reconcile payout',
      });
      expect(query.originatorConversationId).not.toBe(input.originatorConversationId);
      expect(s.sim.requests().at(-1)?.body).toEqual({
        Initiator: SIM.initiatorName,
        SecurityCredential: SIM.securityCredential,
        CommandID: 'TransactionStatusQuery',
        OriginalConversationID: input.originatorConversationId,
        PartyA: SIM.b2cShortcode,
        IdentifierType: '4',
        ResultURL: `${s.sink.url}/callbacks/status`,
        QueueTimeOutURL: `${s.sink.url}/callbacks/status-timeout`,
        Remarks: 'Reconcile payout',
        Occasion: '',
      });

      const status = parseTransactionStatusResult(
        (await s.sink.waitFor((c) => c.path === '/callbacks/status')).body,
      );
      expect(status).toEqual({
        originatorConversationId: query.originatorConversationId,
        conversationId: query.conversationId,
        resultCode: 0,
        rawResultCode: '0',
        resultDesc: 'The service request is processed successfully.',
        transactionId: expect.any(String),
        transaction: {
          originatorConversationId: input.originatorConversationId,
          conversationId: accepted.conversationId,
          receipt: status.transactionId,
          status: 'Completed',
          amount: 2500,
          initiatedAt: new Date('2026-03-01T09:00:00Z'),
          finalisedAt: new Date('2026-03-01T09:00:00Z'),
          debitPartyName: '600000 - SIMULATED B2C ORGANISATION',
          creditPartyName: '254722000090 - SIMULATED CUSTOMER 0090',
          reasonType: 'Business Payment to Customer via API',
        },
      });
      expect(s.calls()).toEqual([TOKEN, B2C, STATUS]);
    });

    it('Transaction Status about a payment Daraja never saw: a non-numeric ResultCode, no transaction', async () => {
      s = await startDaraja();
      await s.daraja.transactionStatus({
        originatorConversationId: 'po_never_sent',
        resultUrl: `${s.sink.url}/callbacks/status`,
        queueTimeoutUrl: `${s.sink.url}/callbacks/status-timeout`,
        remarks: 'Reconcile payout',
      });
      const status = parseTransactionStatusResult((await s.sink.waitFor(() => true)).body);
      expect(status).toMatchObject({ resultCode: -1, rawResultCode: 'R000001' });
      expect(status.transaction).toBeUndefined();
    });
  });

  describe('access token', () => {
    it('fetches one token and reuses it (expires_in arrives as the string "3599")', async () => {
      s = await startDaraja();
      const pushed = await s.daraja.stkPush(pushInput(s.sink.url));
      await s.daraja.stkQuery(pushed.checkoutRequestId);
      await s.daraja.b2c(payoutInput(s.sink.url));
      expect(s.calls()).toEqual([TOKEN, PUSH, QUERY, B2C]);
    });

    it('concurrent first calls share one token request', async () => {
      s = await startDaraja();
      await Promise.all([1, 2, 3].map(() => s.daraja.stkPush(pushInput(s.sink.url))));
      expect(s.calls().filter((c) => c === TOKEN)).toHaveLength(1);
    });

    it('fetches a new token 60 s before the old one expires', async () => {
      s = await startDaraja({ sim: { tokenTtlSeconds: 3600 } });
      await s.daraja.b2c(payoutInput(s.sink.url));
      s.clock.advance((3599 - 60) * 1000 - 1);
      await s.daraja.b2c(payoutInput(s.sink.url));
      expect(s.calls()).toEqual([TOKEN, B2C, B2C]);
      s.clock.advance(1);
      await s.daraja.b2c(payoutInput(s.sink.url));
      expect(s.calls()).toEqual([TOKEN, B2C, B2C, TOKEN, B2C]);
      const [first, , , second] = s.sim.requests();
      expect(first?.status).toBe(200);
      expect(second?.status).toBe(200);
    });

    it('on 401 Invalid Access Token, fetches a new token once and retries', async () => {
      // Daraja's clock runs ahead: it expires the token while we still hold it as valid.
      const clock = manualClock();
      const simClock = manualClock();
      s = await startDaraja({ clock, simClock });
      await s.daraja.b2c(payoutInput(s.sink.url));
      simClock.advance(3600 * 1000);
      const accepted = await s.daraja.b2c(payoutInput(s.sink.url));
      expect(accepted.conversationId).toMatch(/^AG_/);
      expect(s.calls()).toEqual([TOKEN, B2C, B2C, TOKEN, B2C]);
      expect(s.sim.requests().map((r) => r.status)).toEqual([200, 200, 401, 200, 200]);
      const [, , refused, , retried] = s.sim.requests();
      expect(refused?.headers.authorization).not.toBe(retried?.headers.authorization);
    });

    it('gives up with REJECTED when the fresh token is refused too', async () => {
      // Tokens that Daraja considers expired at once (expires_in "0").
      s = await startDaraja({ sim: { tokenTtlSeconds: 0 } });
      const error = await darajaError(s.daraja.b2c(payoutInput(s.sink.url)));
      expect(error).toMatchObject({ kind: 'REJECTED', errorCode: '404.001.03', status: 401 });
      expect(s.calls()).toEqual([TOKEN, B2C, TOKEN, B2C]);
    });
  });
});
