import type { Context } from '../context';
import { fail } from '../failure';
import type { StkTransaction } from '../types';
import { invalid } from '../validate';
import { checkStkCredentials } from './stk-push';

/** `POST /mpesa/stkpushquery/v1/query`: a push's outcome once decided; an error until then. */
export function stkQuery(ctx: Context, body: Record<string, unknown>) {
  checkStkCredentials(ctx, body);
  const id = typeof body.CheckoutRequestID === 'string' ? body.CheckoutRequestID : '';
  const tx = ctx.state.stkByCheckout.get(id);
  if (!tx) fail(invalid('CheckoutRequestID'));
  const found = tx as StkTransaction;
  if (found.state === 'PROCESSING') {
    fail({ status: 500, errorCode: '500.001.1001', errorMessage: 'The transaction is being processed' });
  }
  return {
    ResponseCode: '0',
    ResponseDescription: 'The service request has been accepted successfully',
    MerchantRequestID: found.merchantRequestId,
    CheckoutRequestID: found.checkoutRequestId,
    ResultCode: String(found.resultCode),
    ResultDesc: found.resultDesc,
  };
}
