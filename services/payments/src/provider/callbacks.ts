import { z } from 'zod';
import { fromB2cDateTime, fromDarajaPhone, fromDarajaTimestamp } from './format';
import { parseResultCode } from './result-codes';

/**
 * Schemas and parsers of the bodies Daraja POSTs to our callback URLs. Daraja signs nothing:
 * a parsed callback is a claim, to be matched against our own record (ids, amount) and
 * confirmed by STK query / Transaction Status before money moves on it.
 *
 * Every parsed result carries `resultCode` (a number; -1 when Daraja's code is not numeric,
 * e.g. `SFC_IC0003`) and `rawResultCode` (as sent): give `rawResultCode` to `stableReason`
 * and `isRetriableB2c`.
 */

/** A callback body that does not have the expected shape. */
export class DarajaCallbackError extends Error {
  override readonly name = 'DarajaCallbackError';
  constructor(
    readonly callback: string,
    readonly issues: string[],
  ) {
    super(`not a valid ${callback}: ${issues.join('; ')}`);
  }
}

const resultCode = z.union([z.number(), z.string().min(1)]);
const scalar = z.union([z.string(), z.number(), z.boolean(), z.null()]);

/** `{ Name, Value }` items of STK CallbackMetadata. */
const stkItem = z.object({ Name: z.string(), Value: scalar.optional() });
/** `{ Key, Value }` items of ResultParameters (Value is absent for empty ones). */
const resultParameter = z.object({ Key: z.string(), Value: scalar.optional() });
/** Daraja sends a lone parameter as an object rather than a one-element array. */
const resultParameters = z
  .object({ ResultParameter: z.union([z.array(resultParameter), resultParameter]) })
  .transform((p) => (Array.isArray(p.ResultParameter) ? p.ResultParameter : [p.ResultParameter]));

export const stkCallbackSchema = z.object({
  Body: z.object({
    stkCallback: z.object({
      MerchantRequestID: z.string().min(1),
      CheckoutRequestID: z.string().min(1),
      ResultCode: resultCode,
      ResultDesc: z.string(),
      CallbackMetadata: z
        .object({ Item: z.union([z.array(stkItem), stkItem]) })
        .transform((m) => (Array.isArray(m.Item) ? m.Item : [m.Item]))
        .optional(),
    }),
  }),
});

export const b2cResultSchema = z.object({
  Result: z.object({
    ResultType: z.union([z.number(), z.string()]).optional(),
    ResultCode: resultCode,
    ResultDesc: z.string(),
    OriginatorConversationID: z.string().min(1),
    ConversationID: z.string().min(1),
    TransactionID: z.string().optional(),
    ResultParameters: resultParameters.optional(),
    ReferenceData: z.unknown().optional(),
  }),
});

/** Undocumented by Daraja: only the OriginatorConversationID is relied on, wherever it is. */
export const b2cQueueTimeoutSchema = z.union([
  z.object({
    Result: z.object({
      OriginatorConversationID: z.string().min(1),
      ConversationID: z.string().optional(),
      ResultDesc: z.string().optional(),
    }),
  }),
  z.object({
    OriginatorConversationID: z.string().min(1),
    ConversationID: z.string().optional(),
    ResultDesc: z.string().optional(),
  }),
]);

/** Same envelope as a B2C Result; the parameters describe the transaction asked about. */
export const transactionStatusResultSchema = b2cResultSchema;

export interface StkCallback {
  merchantRequestId: string;
  checkoutRequestId: string;
  resultCode: number;
  rawResultCode: string;
  resultDesc: string;
  /** On success: KES as Daraja sent it. */
  amount?: number;
  /** On success: the M-Pesa receipt number (MpesaReceiptNumber). */
  receipt?: string;
  /** On success: TransactionDate (YYYYMMDDHHmmss, EAT) as an instant. */
  transactionDate?: Date;
  /** On success: the paying number, `+2547…`. */
  phone?: string;
}

export interface B2cResult {
  originatorConversationId: string;
  conversationId: string;
  resultCode: number;
  rawResultCode: string;
  resultDesc: string;
  /** Daraja's TransactionID ('' when absent); on success, the receipt. */
  transactionId: string;
  /** On success: TransactionReceipt. */
  receipt?: string;
  /** On success: TransactionAmount (KES). */
  amount?: number;
  /** On success: TransactionCompletedDateTime (`DD.MM.YYYY HH:mm:ss`, EAT) as an instant. */
  completedAt?: Date;
  /** On success: ReceiverPartyPublicName (`2547… - NAME`). */
  receiverName?: string;
  /** On success: B2CUtilityAccountAvailableFunds (KES). */
  utilityAccountBalance?: number;
}

export interface B2cQueueTimeout {
  originatorConversationId: string;
  conversationId?: string;
  resultDesc?: string;
}

export interface TransactionStatusResult {
  /** The ids of the status query itself (as its acknowledgement gave them). */
  originatorConversationId: string;
  conversationId: string;
  resultCode: number;
  rawResultCode: string;
  resultDesc: string;
  transactionId: string;
  /** The transaction asked about, when Daraja found it (its ResultParameters). */
  transaction?: {
    /** The original payment's OriginatorConversationID (B2C). */
    originatorConversationId?: string;
    conversationId?: string;
    receipt?: string;
    /** TransactionStatus as sent: `Completed`, `Failed`, … */
    status?: string;
    /** Amount (KES). */
    amount?: number;
    initiatedAt?: Date;
    finalisedAt?: Date;
    debitPartyName?: string;
    creditPartyName?: string;
    reasonType?: string;
  };
}

function parseWith<T>(name: string, schema: z.ZodType<T>, body: unknown): T {
  const parsed = schema.safeParse(body);
  if (!parsed.success) {
    throw new DarajaCallbackError(
      name,
      parsed.error.issues.map((i) => `${i.path.join('.') || '(body)'}: ${i.message}`),
    );
  }
  return parsed.data;
}

type Entry = { Value?: string | number | boolean | null };

function lookup<E extends Entry>(entries: E[], key: (e: E) => string) {
  const map = new Map<string, E['Value']>();
  for (const entry of entries) map.set(key(entry), entry.Value);
  const text = (name: string): string | undefined => {
    const v = map.get(name);
    return typeof v === 'string' || typeof v === 'number' ? String(v) : undefined;
  };
  const number = (name: string): number | undefined => {
    const v = map.get(name);
    const n = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : Number.NaN;
    return Number.isFinite(n) ? n : undefined;
  };
  return { text, number };
}

/** The STK callback (POSTed to the push's CallBackURL). Throws DarajaCallbackError. */
export function parseStkCallback(body: unknown): StkCallback {
  const { stkCallback: cb } = parseWith('STK callback', stkCallbackSchema, body).Body;
  const item = lookup(cb.CallbackMetadata ?? [], (i) => i.Name);
  const date = item.text('TransactionDate');
  const phone = item.text('PhoneNumber');
  return {
    merchantRequestId: cb.MerchantRequestID,
    checkoutRequestId: cb.CheckoutRequestID,
    ...parseResultCode(cb.ResultCode),
    resultDesc: cb.ResultDesc,
    amount: item.number('Amount'),
    receipt: item.text('MpesaReceiptNumber'),
    transactionDate: date === undefined ? undefined : fromDarajaTimestamp(date),
    phone: phone === undefined ? undefined : fromDarajaPhone(phone),
  };
}

/** The B2C Result (POSTed to the payment's ResultURL). Throws DarajaCallbackError. */
export function parseB2cResult(body: unknown): B2cResult {
  const { Result: r } = parseWith('B2C result', b2cResultSchema, body);
  const p = lookup(r.ResultParameters ?? [], (e) => e.Key);
  const completed = p.text('TransactionCompletedDateTime');
  return {
    originatorConversationId: r.OriginatorConversationID,
    conversationId: r.ConversationID,
    ...parseResultCode(r.ResultCode),
    resultDesc: r.ResultDesc,
    transactionId: r.TransactionID ?? '',
    receipt: p.text('TransactionReceipt'),
    amount: p.number('TransactionAmount'),
    completedAt: completed === undefined ? undefined : fromB2cDateTime(completed),
    receiverName: p.text('ReceiverPartyPublicName'),
    utilityAccountBalance: p.number('B2CUtilityAccountAvailableFunds'),
  };
}

/**
 * The QueueTimeOut notice (POSTed to QueueTimeOutURL): the payment's outcome is UNKNOWN, not
 * failed. Ask Transaction Status before paying again. Throws DarajaCallbackError.
 */
export function parseB2cQueueTimeout(body: unknown): B2cQueueTimeout {
  const parsed = parseWith('B2C queue timeout', b2cQueueTimeoutSchema, body);
  const r = 'Result' in parsed ? parsed.Result : parsed;
  return {
    originatorConversationId: r.OriginatorConversationID,
    conversationId: r.ConversationID,
    resultDesc: r.ResultDesc,
  };
}

/** The Transaction Status Result (POSTed to the query's ResultURL). Throws DarajaCallbackError. */
export function parseTransactionStatusResult(body: unknown): TransactionStatusResult {
  const { Result: r } = parseWith('Transaction Status result', transactionStatusResultSchema, body);
  const result: TransactionStatusResult = {
    originatorConversationId: r.OriginatorConversationID,
    conversationId: r.ConversationID,
    ...parseResultCode(r.ResultCode),
    resultDesc: r.ResultDesc,
    transactionId: r.TransactionID ?? '',
  };
  if (r.ResultParameters && r.ResultParameters.length > 0) {
    const p = lookup(r.ResultParameters, (e) => e.Key);
    const initiated = p.text('InitiatedTime');
    const finalised = p.text('FinalisedTime');
    result.transaction = {
      originatorConversationId: p.text('OriginatorConversationID'),
      conversationId: p.text('ConversationID'),
      receipt: p.text('ReceiptNo'),
      status: p.text('TransactionStatus'),
      amount: p.number('Amount'),
      initiatedAt: initiated === undefined ? undefined : fromDarajaTimestamp(initiated),
      finalisedAt: finalised === undefined ? undefined : fromDarajaTimestamp(finalised),
      debitPartyName: p.text('DebitPartyName'),
      creditPartyName: p.text('CreditPartyName'),
      reasonType: p.text('ReasonType'),
    };
  }
  return result;
}
