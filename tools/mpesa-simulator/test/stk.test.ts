import { darajaTimestamp, stkPassword } from '../src';
import { CONFIG, type Setup, setup, stkBody, stkOf, stkQueryBody } from './helpers';

const PUSH = '/mpesa/stkpush/v1/processrequest';
const QUERY = '/mpesa/stkpushquery/v1/query';

describe('STK push', () => {
  let t: Setup;
  afterEach(async () => {
    await t.close();
  });

  async function push(overrides: Record<string, unknown> = {}) {
    const answer = await t.post(PUSH, stkBody(t.clock.now(), `${t.sink.url}/stk`, overrides));
    expect(answer.status).toBe(200);
    return answer.body as { MerchantRequestID: string; CheckoutRequestID: string };
  }

  const callbackFor = (checkoutRequestId: string) =>
    t.sink.waitFor((c) => stkOf(c)?.CheckoutRequestID === checkoutRequestId);

  it('accepts a valid push, calls back with the receipt, and the query reports success', async () => {
    t = await setup();
    const answer = await t.post(
      PUSH,
      stkBody(t.clock.now(), `${t.sink.url}/stk?token=s3cret`, { Amount: '25' }),
    );
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({
      MerchantRequestID: expect.any(String),
      CheckoutRequestID: expect.stringMatching(/^ws_CO_\d+$/),
      ResponseCode: '0',
      ResponseDescription: 'Success. Request accepted for processing',
      CustomerMessage: 'Success. Request accepted for processing',
    });
    const { MerchantRequestID, CheckoutRequestID } = answer.body;

    const callback = await callbackFor(CheckoutRequestID);
    expect(callback.path).toBe('/stk?token=s3cret');
    expect(callback.body).toEqual({
      Body: {
        stkCallback: {
          MerchantRequestID,
          CheckoutRequestID,
          ResultCode: 0,
          ResultDesc: 'The service request is processed successfully.',
          CallbackMetadata: {
            Item: [
              { Name: 'Amount', Value: 25 },
              { Name: 'MpesaReceiptNumber', Value: expect.stringMatching(/^[A-Z][A-Z0-9]{9}$/) },
              { Name: 'TransactionDate', Value: Number(darajaTimestamp(t.clock.now(), 'EAT')) },
              { Name: 'PhoneNumber', Value: 254711000001 },
            ],
          },
        },
      },
    });

    const query = await t.post(QUERY, stkQueryBody(t.clock.now(), CheckoutRequestID));
    expect(query.status).toBe(200);
    expect(query.body).toEqual({
      ResponseCode: '0',
      ResponseDescription: 'The service request has been accepted successfully',
      MerchantRequestID,
      CheckoutRequestID,
      ResultCode: '0',
      ResultDesc: 'The service request is processed successfully.',
    });
  });

  it.each([
    ['254711000032', 1032, 'Request cancelled by user'],
    ['254711000037', 1037, 'DS timeout user cannot be reached'],
    ['254711002001', 2001, 'The initiator information is invalid.'],
  ])('%s: calls back ResultCode %d without metadata, and the query agrees', async (phone, code, desc) => {
    t = await setup();
    const { MerchantRequestID, CheckoutRequestID } = await push({ PartyA: phone, PhoneNumber: phone });
    const callback = await callbackFor(CheckoutRequestID);
    expect(callback.body).toEqual({
      Body: { stkCallback: { MerchantRequestID, CheckoutRequestID, ResultCode: code, ResultDesc: desc } },
    });
    const query = await t.post(QUERY, stkQueryBody(t.clock.now(), CheckoutRequestID));
    expect(query.body).toMatchObject({ ResponseCode: '0', ResultCode: String(code), ResultDesc: desc });
  });

  it('254711000090: succeeds but never calls back; the query still reports success', async () => {
    t = await setup();
    const silent = await push({ PartyA: '254711000090', PhoneNumber: '254711000090' });
    // A later push with the same delay: once its callback is in, the silent one's moment has passed.
    const later = await push();
    await callbackFor(later.CheckoutRequestID);

    expect(t.sink.received.filter((c) => stkOf(c)?.CheckoutRequestID === silent.CheckoutRequestID)).toEqual(
      [],
    );
    const tx = t.sim
      .transactions()
      .find((x) => x.type === 'STK_PUSH' && x.checkoutRequestId === silent.CheckoutRequestID);
    expect(tx).toMatchObject({
      state: 'COMPLETED',
      resultCode: 0,
      callbacks: 0,
      receipt: expect.any(String),
    });
    const query = await t.post(QUERY, stkQueryBody(t.clock.now(), silent.CheckoutRequestID));
    expect(query.body).toMatchObject({ ResultCode: '0', CheckoutRequestID: silent.CheckoutRequestID });
  });

  it('254711000091: succeeds and calls back twice with the same body', async () => {
    t = await setup();
    const { CheckoutRequestID } = await push({ PartyA: '254711000091', PhoneNumber: '254711000091' });
    const both = await t.sink.waitForCount(2, (c) => stkOf(c)?.CheckoutRequestID === CheckoutRequestID);
    expect(both[1]?.body).toEqual(both[0]?.body);
    expect(stkOf(both[0] as never).ResultCode).toBe(0);
  });

  it('answers the query with "being processed" until the outcome is decided', async () => {
    t = await setup({ callbackDelayMs: 60_000 });
    const { CheckoutRequestID } = await push();
    const query = await t.post(QUERY, stkQueryBody(t.clock.now(), CheckoutRequestID));
    expect(query.status).toBe(500);
    expect(query.body).toEqual({
      requestId: expect.any(String),
      errorCode: '500.001.1001',
      errorMessage: 'The transaction is being processed',
    });
  });

  it('rejects an unknown CheckoutRequestID', async () => {
    t = await setup();
    const query = await t.post(QUERY, stkQueryBody(t.clock.now(), 'ws_CO_000'));
    expect(query.status).toBe(400);
    expect(query.body.errorMessage).toBe('Bad Request - Invalid CheckoutRequestID');
  });

  it('a paybill push whose PartyB is not the shortcode fails with 2028', async () => {
    t = await setup();
    const { CheckoutRequestID } = await push({ PartyB: '600111' });
    expect(stkOf(await callbackFor(CheckoutRequestID))).toMatchObject({
      ResultCode: 2028,
      ResultDesc: 'The request is not permitted according to product assignment.',
    });
  });

  describe('credentials and Timestamp', () => {
    it('rejects a Password made with another passkey: 500 500.001.1001 Wrong credentials', async () => {
      t = await setup();
      const stamp = darajaTimestamp(t.clock.now(), 'EAT');
      const answer = await t.post(
        PUSH,
        stkBody(t.clock.now(), t.sink.url, {
          Password: stkPassword(CONFIG.shortcode, 'other-passkey', stamp),
        }),
      );
      expect(answer.status).toBe(500);
      expect(answer.body).toEqual({
        requestId: expect.any(String),
        errorCode: '500.001.1001',
        errorMessage: 'Wrong credentials',
      });
    });

    it('rejects a Password that does not match the Timestamp sent', async () => {
      t = await setup();
      const body = stkBody(t.clock.now(), t.sink.url);
      t.clock.advance(1000);
      const answer = await t.post(PUSH, { ...body, Timestamp: darajaTimestamp(t.clock.now(), 'EAT') });
      expect(answer.body.errorMessage).toBe('Wrong credentials');
    });

    it('rejects another BusinessShortCode: Merchant does not exist', async () => {
      t = await setup();
      const stamp = darajaTimestamp(t.clock.now(), 'EAT');
      const answer = await t.post(
        PUSH,
        stkBody(t.clock.now(), t.sink.url, {
          BusinessShortCode: '600999',
          Password: stkPassword('600999', CONFIG.passkey, stamp),
        }),
      );
      expect(answer.status).toBe(500);
      expect(answer.body).toMatchObject({
        errorCode: '500.001.1001',
        errorMessage: 'Merchant does not exist',
      });
    });

    it.each([
      ['not YYYYMMDDHHmmss', '2026-03-01 12:00'],
      ['an impossible date', '20260231120000'],
      ['a day away from now', '20260302120000'],
    ])('rejects a Timestamp that is %s: 400 Invalid Timestamp', async (_label, stamp) => {
      t = await setup();
      const answer = await t.post(
        PUSH,
        stkBody(t.clock.now(), t.sink.url, {
          Timestamp: stamp,
          Password: stkPassword(CONFIG.shortcode, CONFIG.passkey, stamp),
        }),
      );
      expect(answer.status).toBe(400);
      expect(answer.body).toEqual({
        requestId: expect.any(String),
        errorCode: '400.002.02',
        errorMessage: 'Bad Request - Invalid Timestamp',
      });
    });

    it('reads the Timestamp in the configured zone (EAT rejects a UTC one; any accepts both)', async () => {
      t = await setup({ timestampZone: 'EAT' });
      const utc = darajaTimestamp(t.clock.now(), 'UTC');
      const body = stkBody(t.clock.now(), t.sink.url, {
        Timestamp: utc,
        Password: stkPassword(CONFIG.shortcode, CONFIG.passkey, utc),
      });
      expect((await t.post(PUSH, body)).body.errorMessage).toBe('Bad Request - Invalid Timestamp');
      await t.close();

      t = await setup();
      expect((await t.post(PUSH, body)).status).toBe(200);
    });
  });

  it.each([
    ['TransactionType', { TransactionType: 'CustomerPayBill' }],
    ['Amount', { Amount: 0 }],
    ['Amount', { Amount: 1.5 }],
    ['Amount', { Amount: '10.00' }],
    ['PartyA', { PartyA: '0711000001' }],
    ['PartyB', { PartyB: 'abc' }],
    ['PhoneNumber', { PhoneNumber: '+254711000001' }],
    ['PhoneNumber', { PhoneNumber: '25471100000' }],
    ['PhoneNumber', { PhoneNumber: '255711000001' }],
    ['CallBackURL', { CallBackURL: 'ftp://example.com/cb' }],
    ['CallBackURL', { CallBackURL: 'not a url' }],
    ['AccountReference', { AccountReference: 'ABCDEFGHIJKLM' }],
    ['AccountReference', { AccountReference: '' }],
    ['TransactionDesc', { TransactionDesc: 'fourteen chars' }],
  ])('rejects an invalid %s: 400 400.002.02', async (field, overrides) => {
    t = await setup();
    const answer = await t.post(PUSH, stkBody(t.clock.now(), t.sink.url, overrides));
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({
      errorCode: '400.002.02',
      errorMessage: `Bad Request - Invalid ${field}`,
    });
    expect(t.sim.transactions()).toEqual([]);
  });

  it('accepts a 2541… number, a numeric shortcode and a till (buy goods) push', async () => {
    t = await setup();
    const { CheckoutRequestID } = await push({
      BusinessShortCode: Number(CONFIG.shortcode),
      TransactionType: 'CustomerBuyGoodsOnline',
      PartyA: '254110000001',
      PhoneNumber: 254110000001,
      PartyB: '5432109',
    });
    expect(stkOf(await callbackFor(CheckoutRequestID)).ResultCode).toBe(0);
  });
});
