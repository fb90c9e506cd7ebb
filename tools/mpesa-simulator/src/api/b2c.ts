import { type Context, isoNow } from '../context';
import { fail } from '../failure';
import { b2cScript, customerName, RESULT_DESC } from '../outcomes';
import { b2cCompletedDateTime } from '../time';
import type { B2cTransaction } from '../types';
import { digits, httpUrl, invalid, MSISDN, SHORTCODE, text, wholeAmount } from '../validate';

const B2C_COMMANDS = new Set(['BusinessPayment', 'SalaryPayment', 'PromotionPayment']);

/** Daraja's ReasonType of each B2C CommandID (Transaction Status reports it). */
export const REASON_TYPES: Record<string, string> = {
  BusinessPayment: 'Business Payment to Customer via API',
  SalaryPayment: 'Salary Payment via API',
  PromotionPayment: 'Promotion Payment via API',
};

/** The charge of one completed B2C payment, KES. */
export const B2C_CHARGE = 15;

/** InitiatorName and SecurityCredential, when the simulator was given ones to require. */
export function initiatorValid(ctx: Context, name: unknown, credential: unknown): boolean {
  const { initiatorName, securityCredential } = ctx.settings;
  if (initiatorName !== undefined && name !== initiatorName) return false;
  if (securityCredential !== undefined && credential !== securityCredential) return false;
  return true;
}

/**
 * `POST /mpesa/b2c/v3/paymentrequest`: accepted at once (an OriginatorConversationID only
 * once); the outcome (scripted by number and attempt) goes to ResultURL, or a QueueTimeOut to
 * QueueTimeOutURL, after the callback delay.
 */
export function b2c(ctx: Context, body: Record<string, unknown>) {
  const { state, callbacks } = ctx;
  const { b2cShortcode, b2cMinAmount, b2cMaxAmount, now } = ctx.settings;
  const ocid = text(body.OriginatorConversationID, 1, 100);
  if (ocid === null) fail(invalid('OriginatorConversationID'));
  if (text(body.InitiatorName, 1, 100) === null) fail(invalid('InitiatorName'));
  if (text(body.SecurityCredential, 1, 4096) === null) fail(invalid('SecurityCredential'));
  const commandId = body.CommandID;
  if (typeof commandId !== 'string' || !B2C_COMMANDS.has(commandId)) fail(invalid('CommandID'));
  const amount = wholeAmount(body.Amount);
  if (amount === null) fail(invalid('Amount'));
  const partyA = digits(body.PartyA);
  if (partyA === null || !SHORTCODE.test(partyA)) fail(invalid('PartyA'));
  const phone = digits(body.PartyB);
  if (phone === null || !MSISDN.test(phone)) fail(invalid('PartyB'));
  const remarks = text(body.Remarks, 2, 100);
  if (remarks === null) fail(invalid('Remarks'));
  if (!httpUrl(body.QueueTimeOutURL)) fail(invalid('QueueTimeOutURL'));
  if (!httpUrl(body.ResultURL)) fail(invalid('ResultURL'));
  const occasionField = body.Occassion ?? body.Occasion;
  if (occasionField !== undefined && text(occasionField, 0, 100) === null) fail(invalid('Occassion'));
  if (state.b2cByOcid.has(ocid as string)) {
    fail({ status: 500, errorCode: '500.002.1001', errorMessage: 'Duplicate OriginatorConversationID.' });
  }

  const attempt = (state.b2cAttempts.get(phone as string) ?? 0) + 1;
  state.b2cAttempts.set(phone as string, attempt);
  let { resultCode, resultDesc, delivery, times } = b2cScript(phone as string, attempt);
  if (!initiatorValid(ctx, body.InitiatorName, body.SecurityCredential)) {
    [resultCode, resultDesc, delivery, times] = [2001, RESULT_DESC.initiatorInvalid, 'result', 1];
  } else if (partyA !== b2cShortcode) {
    [resultCode, resultDesc, delivery, times] = [2028, RESULT_DESC.notPermitted, 'result', 1];
  } else if ((amount as number) < b2cMinAmount) {
    [resultCode, resultDesc, delivery, times] = [2, RESULT_DESC.belowMinimum, 'result', 1];
  } else if ((amount as number) > b2cMaxAmount) {
    [resultCode, resultDesc, delivery, times] = [3, RESULT_DESC.aboveMaximum, 'result', 1];
  }
  const transactionId = state.receipt();
  const tx: B2cTransaction = {
    type: 'B2C',
    originatorConversationId: ocid as string,
    conversationId: state.ids.conversationId(now()),
    transactionId,
    commandId: commandId as string,
    phone: phone as string,
    amount: amount as number,
    remarks: remarks as string,
    occasion: typeof occasionField === 'string' ? occasionField : '',
    resultUrl: body.ResultURL as string,
    queueTimeoutUrl: body.QueueTimeOutURL as string,
    createdAt: isoNow(ctx),
    state: 'PROCESSING',
    resultCode: null,
    resultDesc: null,
    receipt: null,
    completedAt: null,
    delivery,
    times,
  };
  state.b2cByOcid.set(tx.originatorConversationId, tx);
  state.byReceipt.set(transactionId, tx);
  state.transactions.push(tx);

  callbacks.later(async () => {
    const { funds } = state;
    tx.resultCode = resultCode;
    tx.resultDesc = resultDesc;
    tx.completedAt = isoNow(ctx);
    tx.state = resultCode === 0 ? 'COMPLETED' : 'FAILED';
    const referenceData = { ReferenceItem: { Key: 'QueueTimeoutURL', Value: tx.queueTimeoutUrl } };
    if (resultCode === 0) {
      tx.receipt = transactionId;
      funds.utility = Math.round((funds.utility - tx.amount) * 100) / 100;
      funds.chargesPaid -= B2C_CHARGE;
    }
    if (delivery === 'queue-timeout') {
      await callbacks.post('B2C_QUEUE_TIMEOUT', tx.queueTimeoutUrl, {
        Result: {
          ResultType: 1,
          ResultDesc: 'The service request timed out in the queue.',
          OriginatorConversationID: tx.originatorConversationId,
          ConversationID: tx.conversationId,
          ReferenceData: referenceData,
        },
      });
      return;
    }
    const result = {
      Result: {
        ResultType: 0,
        ResultCode: resultCode,
        ResultDesc: resultDesc,
        OriginatorConversationID: tx.originatorConversationId,
        ConversationID: tx.conversationId,
        TransactionID: transactionId,
        ...(resultCode === 0
          ? {
              ResultParameters: {
                ResultParameter: [
                  { Key: 'TransactionAmount', Value: tx.amount },
                  { Key: 'TransactionReceipt', Value: transactionId },
                  { Key: 'ReceiverPartyPublicName', Value: customerName(tx.phone) },
                  { Key: 'TransactionCompletedDateTime', Value: b2cCompletedDateTime(now()) },
                  { Key: 'B2CUtilityAccountAvailableFunds', Value: funds.utility },
                  { Key: 'B2CWorkingAccountAvailableFunds', Value: funds.working },
                  { Key: 'B2CRecipientIsRegisteredCustomer', Value: 'Y' },
                  { Key: 'B2CChargesPaidAccountAvailableFunds', Value: funds.chargesPaid },
                ],
              },
            }
          : {}),
        ReferenceData: referenceData,
      },
    };
    for (let i = 0; i < times; i++) await callbacks.post('B2C_RESULT', tx.resultUrl, result);
  });

  return {
    ConversationID: tx.conversationId,
    OriginatorConversationID: tx.originatorConversationId,
    ResponseCode: '0',
    ResponseDescription: 'Accept the service request successfully.',
  };
}
