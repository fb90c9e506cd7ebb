import { type Context, isoNow } from '../context';
import { fail } from '../failure';
import { RESULT_DESC, stkScript } from '../outcomes';
import { darajaTimestamp, parseDarajaTimestamp, type TimestampZone } from '../time';
import type { StkTransaction } from '../types';
import { digits, httpUrl, invalid, MSISDN, SHORTCODE, text, wholeAmount } from '../validate';

/** BusinessShortCode, Password and Timestamp, checked as for STK push and STK query. */
export function checkStkCredentials(ctx: Context, body: Record<string, unknown>): void {
  const { shortcode, passkey, timestampZone, timestampSkewSeconds, now } = ctx.settings;
  const code = digits(body.BusinessShortCode);
  if (code === null || !SHORTCODE.test(code)) fail(invalid('BusinessShortCode'));
  if (typeof body.Password !== 'string' || body.Password === '') fail(invalid('Password'));
  const stamp = typeof body.Timestamp === 'string' ? body.Timestamp : '';
  if (parseDarajaTimestamp(stamp, 'UTC') === null) fail(invalid('Timestamp'));
  if (code !== shortcode) {
    fail({ status: 500, errorCode: '500.001.1001', errorMessage: 'Merchant does not exist' });
  }
  const expected = Buffer.from(`${shortcode}${passkey}${stamp}`, 'utf8').toString('base64');
  if (body.Password !== expected) {
    fail({ status: 500, errorCode: '500.001.1001', errorMessage: 'Wrong credentials' });
  }
  const zones: TimestampZone[] = timestampZone === 'any' ? ['EAT', 'UTC'] : [timestampZone];
  const t = now().getTime();
  const sane = zones.some((zone) => {
    const at = parseDarajaTimestamp(stamp, zone) as Date;
    return Math.abs(at.getTime() - t) <= timestampSkewSeconds * 1000;
  });
  if (!sane) fail(invalid('Timestamp'));
}

/**
 * `POST /mpesa/stkpush/v1/processrequest` (M-Pesa Express): accepted at once; the customer's
 * answer (scripted by number) and its callbacks come after the callback delay.
 */
export function stkPush(ctx: Context, body: Record<string, unknown>) {
  const { state, callbacks } = ctx;
  const { shortcode, now } = ctx.settings;
  checkStkCredentials(ctx, body);
  const type = body.TransactionType;
  if (type !== 'CustomerPayBillOnline' && type !== 'CustomerBuyGoodsOnline') fail(invalid('TransactionType'));
  const amount = wholeAmount(body.Amount);
  if (amount === null) fail(invalid('Amount'));
  const partyA = digits(body.PartyA);
  if (partyA === null || !MSISDN.test(partyA)) fail(invalid('PartyA'));
  const partyB = digits(body.PartyB);
  if (partyB === null || !SHORTCODE.test(partyB)) fail(invalid('PartyB'));
  const phone = digits(body.PhoneNumber);
  if (phone === null || !MSISDN.test(phone)) fail(invalid('PhoneNumber'));
  if (!httpUrl(body.CallBackURL)) fail(invalid('CallBackURL'));
  const accountReference = text(body.AccountReference, 1, 12);
  if (accountReference === null) fail(invalid('AccountReference'));
  if (body.TransactionDesc !== undefined && text(body.TransactionDesc, 0, 13) === null) {
    fail(invalid('TransactionDesc'));
  }

  const script = stkScript(phone as string);
  // A paybill push must name the paybill as PartyB (Daraja: 2028, not permitted).
  const misdirected = type === 'CustomerPayBillOnline' && partyB !== shortcode;
  const tx: StkTransaction = {
    type: 'STK_PUSH',
    merchantRequestId: state.ids.merchantRequestId(),
    checkoutRequestId: state.ids.checkoutRequestId(now(), phone as string),
    phone: phone as string,
    amount: amount as number,
    accountReference: accountReference as string,
    callbackUrl: body.CallBackURL as string,
    createdAt: isoNow(ctx),
    state: 'PROCESSING',
    resultCode: null,
    resultDesc: null,
    receipt: null,
    completedAt: null,
    callbacks: misdirected ? 1 : script.callbacks,
  };
  state.stkByCheckout.set(tx.checkoutRequestId, tx);
  state.transactions.push(tx);

  callbacks.later(async () => {
    const resultCode = misdirected ? 2028 : script.resultCode;
    tx.resultCode = resultCode;
    tx.resultDesc = misdirected ? RESULT_DESC.notPermitted : script.resultDesc;
    tx.completedAt = isoNow(ctx);
    tx.state = resultCode === 0 ? 'COMPLETED' : 'FAILED';
    if (resultCode === 0) {
      tx.receipt = state.receipt();
      state.byReceipt.set(tx.receipt, tx);
    }
    const callback = {
      Body: {
        stkCallback: {
          MerchantRequestID: tx.merchantRequestId,
          CheckoutRequestID: tx.checkoutRequestId,
          ResultCode: resultCode,
          ResultDesc: tx.resultDesc,
          ...(resultCode === 0
            ? {
                CallbackMetadata: {
                  Item: [
                    { Name: 'Amount', Value: tx.amount },
                    { Name: 'MpesaReceiptNumber', Value: tx.receipt },
                    { Name: 'TransactionDate', Value: Number(darajaTimestamp(now())) },
                    { Name: 'PhoneNumber', Value: Number(tx.phone) },
                  ],
                },
              }
            : {}),
        },
      },
    };
    for (let i = 0; i < tx.callbacks; i++) await callbacks.post('STK_CALLBACK', tx.callbackUrl, callback);
  });

  return {
    MerchantRequestID: tx.merchantRequestId,
    CheckoutRequestID: tx.checkoutRequestId,
    ResponseCode: '0',
    ResponseDescription: 'Success. Request accepted for processing',
    CustomerMessage: 'Success. Request accepted for processing',
  };
}
