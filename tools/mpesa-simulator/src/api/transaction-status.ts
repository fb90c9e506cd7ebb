import { type Context, isoNow } from '../context';
import { fail } from '../failure';
import { customerName, RESULT_DESC } from '../outcomes';
import { darajaTimestamp } from '../time';
import type { B2cTransaction, StatusQueryTransaction, StkTransaction } from '../types';
import { digits, httpUrl, invalid, MSISDN, SHORTCODE, text } from '../validate';
import { B2C_CHARGE, initiatorValid, REASON_TYPES } from './b2c';

/** The ResultParameters Daraja reports for a transaction found. */
function statusParameters(ctx: Context, original: StkTransaction | B2cTransaction) {
  const { shortcode, b2cShortcode, now } = ctx.settings;
  const finalised = original.completedAt ? new Date(original.completedAt) : now();
  const common = {
    initiated: darajaTimestamp(new Date(original.createdAt)),
    finalised: darajaTimestamp(finalised),
    status: original.resultCode === 0 ? 'Completed' : 'Failed',
  };
  if (original.type === 'STK_PUSH') {
    return [
      { Key: 'DebitPartyName', Value: customerName(original.phone) },
      { Key: 'CreditPartyName', Value: `${shortcode} - SIMULATED MERCHANT` },
      { Key: 'InitiatedTime', Value: common.initiated },
      { Key: 'DebitAccountType', Value: 'MMF Account For Customer' },
      { Key: 'DebitPartyCharges' },
      { Key: 'TransactionReason' },
      { Key: 'ReasonType', Value: 'Pay Bill Online' },
      { Key: 'TransactionStatus', Value: common.status },
      { Key: 'FinalisedTime', Value: common.finalised },
      { Key: 'Amount', Value: String(original.amount) },
      { Key: 'ReceiptNo', Value: original.receipt },
    ];
  }
  return [
    { Key: 'DebitPartyName', Value: `${b2cShortcode} - SIMULATED B2C ORGANISATION` },
    { Key: 'CreditPartyName', Value: customerName(original.phone) },
    { Key: 'OriginatorConversationID', Value: original.originatorConversationId },
    { Key: 'InitiatedTime', Value: common.initiated },
    { Key: 'DebitAccountType', Value: 'Utility Account' },
    original.resultCode === 0
      ? { Key: 'DebitPartyCharges', Value: `Fee For B2C Payment|KES|${B2C_CHARGE.toFixed(2)}` }
      : { Key: 'DebitPartyCharges' },
    { Key: 'TransactionReason' },
    { Key: 'ReasonType', Value: REASON_TYPES[original.commandId] },
    { Key: 'TransactionStatus', Value: common.status },
    { Key: 'FinalisedTime', Value: common.finalised },
    { Key: 'Amount', Value: String(original.amount) },
    { Key: 'ConversationID', Value: original.conversationId },
    { Key: 'ReceiptNo', Value: original.transactionId },
  ];
}

/**
 * `POST /mpesa/transactionstatus/v1/query`: accepted at once; the Result (the transaction found
 * by OriginalConversationID or TransactionID, or not) goes to ResultURL after the callback delay.
 */
export function transactionStatus(ctx: Context, body: Record<string, unknown>) {
  const { state, callbacks } = ctx;
  const { now } = ctx.settings;
  if (text(body.Initiator, 1, 100) === null) fail(invalid('Initiator'));
  if (text(body.SecurityCredential, 1, 4096) === null) fail(invalid('SecurityCredential'));
  if (body.CommandID !== 'TransactionStatusQuery') fail(invalid('CommandID'));
  const transactionId = text(body.TransactionID, 1, 100);
  // The Daraja docs name it OriginalConversationID; older clients send OriginatorConversationID.
  const original = text(body.OriginalConversationID ?? body.OriginatorConversationID, 1, 100);
  if (transactionId === null && original === null) fail(invalid('TransactionID'));
  const partyA = digits(body.PartyA);
  if (partyA === null || !(SHORTCODE.test(partyA) || MSISDN.test(partyA))) fail(invalid('PartyA'));
  const identifierType = digits(body.IdentifierType);
  if (identifierType === null || !['1', '2', '4'].includes(identifierType)) fail(invalid('IdentifierType'));
  if (!httpUrl(body.ResultURL)) fail(invalid('ResultURL'));
  if (!httpUrl(body.QueueTimeOutURL)) fail(invalid('QueueTimeOutURL'));
  if (text(body.Remarks, 1, 100) === null) fail(invalid('Remarks'));
  if (body.Occasion !== undefined && text(body.Occasion, 0, 100) === null) fail(invalid('Occasion'));

  const query: StatusQueryTransaction = {
    type: 'TRANSACTION_STATUS',
    originatorConversationId: state.ids.originatorConversationId(),
    conversationId: state.ids.conversationId(now()),
    transactionId,
    originalConversationId: original,
    resultUrl: body.ResultURL as string,
    createdAt: isoNow(ctx),
    found: null,
  };
  state.transactions.push(query);
  const occasion = typeof body.Occasion === 'string' ? body.Occasion : '';
  const credentialsOk = initiatorValid(ctx, body.Initiator, body.SecurityCredential);

  callbacks.later(async () => {
    const target =
      (original !== null ? state.b2cByOcid.get(original) : undefined) ??
      (transactionId !== null ? state.byReceipt.get(transactionId) : undefined);
    query.found = credentialsOk && target !== undefined;
    const head = {
      ConversationID: query.conversationId,
      OriginatorConversationID: query.originatorConversationId,
      ReferenceData: { ReferenceItem: { Key: 'Occasion', Value: occasion } },
    };
    let result: Record<string, unknown>;
    if (!credentialsOk) {
      result = { ...head, ResultCode: 2001, ResultDesc: RESULT_DESC.initiatorInvalid, ResultType: 0 };
    } else if (target === undefined || (target.type === 'STK_PUSH' && target.receipt === null)) {
      query.found = false;
      result = {
        ...head,
        ResultCode: 'R000001',
        ResultDesc: 'The transaction receipt number does not exist.',
        ResultType: 0,
        TransactionID: state.receipt(),
      };
    } else {
      result = {
        ...head,
        ResultCode: 0,
        ResultDesc: RESULT_DESC.success,
        ResultParameters: { ResultParameter: statusParameters(ctx, target) },
        ResultType: 0,
        TransactionID: target.type === 'B2C' ? target.transactionId : target.receipt,
      };
    }
    await callbacks.post('TRANSACTION_STATUS_RESULT', query.resultUrl, { Result: result });
  });

  return {
    OriginatorConversationID: query.originatorConversationId,
    ConversationID: query.conversationId,
    ResponseCode: '0',
    ResponseDescription: 'Accept the service request successfully.',
  };
}
