import { EventEmitter } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createIds, createReceipts } from './ids';
import { b2cScript, customerName, RESULT_DESC, stkScript } from './outcomes';
import { b2cCompletedDateTime, darajaTimestamp, parseDarajaTimestamp, type TimestampZone } from './time';
import {
  type DarajaFailure,
  digits,
  httpUrl,
  invalid,
  MSISDN,
  SHORTCODE,
  text,
  wholeAmount,
} from './validate';

export interface MpesaSimulatorOptions {
  /** Default 0: a free port. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** The app's consumer key and secret (`Authorization: Basic base64(key:secret)` on the token route). */
  consumerKey: string;
  consumerSecret: string;
  /** The STK (Lipa na M-Pesa Online) BusinessShortCode, and its passkey. */
  shortcode: string;
  passkey: string;
  /** The B2C shortcode (PartyA of B2C and Transaction Status); default `shortcode`. */
  b2cShortcode?: string;
  /** When set, B2C and Transaction Status with another InitiatorName get ResultCode 2001. */
  initiatorName?: string;
  /** When set, B2C and Transaction Status with another SecurityCredential get ResultCode 2001. */
  securityCredential?: string;
  /** Delay before a request's outcome is decided and its callback POSTed (default 300 ms). */
  callbackDelayMs?: number;
  /** Access token lifetime (default 3600 s); `expires_in` is sent as the string `String(ttl - 1)`. */
  tokenTtlSeconds?: number;
  /** Spike arrest: more Daraja requests than this in one second get `500.003.02` (default off). */
  maxRequestsPerSecond?: number;
  /** How an STK Timestamp is read: as EAT, as UTC, or either (default `any`: Daraja's zone is unconfirmed). */
  timestampZone?: TimestampZone | 'any';
  /** How far an STK Timestamp may be from the simulator's clock (default 600 s). */
  timestampSkewSeconds?: number;
  /** B2C limits (Daraja: KES 10 to 250 000): below gets ResultCode 2, above ResultCode 3. */
  b2cMinAmount?: number;
  b2cMaxAmount?: number;
  /** The simulator's clock: token expiry, spike arrest, Timestamp checks, dates in callbacks. */
  now?: () => Date;
}

/** One request the simulator received (its own `/_…` routes excepted). */
export interface RecordedRequest {
  /** 1 for the first request since the simulator started (not reset by `reset()`). */
  seq: number;
  method: string;
  /** Path and query string, e.g. `/oauth/v1/generate?grant_type=client_credentials`. */
  path: string;
  headers: Record<string, string | string[] | undefined>;
  /** The parsed JSON body; the raw text when it is not JSON; null when empty. */
  body: unknown;
  /** ISO 8601, by the simulator's clock. */
  time: string;
  /** The status answered; null until answered (or when a fault hangs it). */
  status: number | null;
}

export type CallbackKind = 'STK_CALLBACK' | 'B2C_RESULT' | 'B2C_QUEUE_TIMEOUT' | 'TRANSACTION_STATUS_RESULT';

/** One callback the simulator POSTed. */
export interface SentCallback {
  kind: CallbackKind;
  url: string;
  body: unknown;
  sentAt: string;
  /** The receiver's answer status; null while in flight or when it failed (see `error`). */
  status: number | null;
  error?: string;
}

export type TransactionState = 'PROCESSING' | 'COMPLETED' | 'FAILED';

export interface StkTransaction {
  type: 'STK_PUSH';
  merchantRequestId: string;
  checkoutRequestId: string;
  phone: string;
  amount: number;
  accountReference: string;
  callbackUrl: string;
  createdAt: string;
  state: TransactionState;
  /** Known once decided (after `callbackDelayMs`). */
  resultCode: number | null;
  resultDesc: string | null;
  receipt: string | null;
  completedAt: string | null;
  /** How many callbacks this push gets (0, 1 or 2). */
  callbacks: number;
}

export interface B2cTransaction {
  type: 'B2C';
  originatorConversationId: string;
  conversationId: string;
  transactionId: string;
  commandId: string;
  phone: string;
  amount: number;
  remarks: string;
  occasion: string;
  resultUrl: string;
  queueTimeoutUrl: string;
  createdAt: string;
  state: TransactionState;
  resultCode: number | null;
  resultDesc: string | null;
  /** The receipt of a completed payment (also its TransactionID). */
  receipt: string | null;
  completedAt: string | null;
  /** `result`: a Result to ResultURL (`times` times); `queue-timeout`: a QueueTimeOut only. */
  delivery: 'result' | 'queue-timeout';
  times: number;
}

export interface StatusQueryTransaction {
  type: 'TRANSACTION_STATUS';
  originatorConversationId: string;
  conversationId: string;
  /** What was asked about. */
  transactionId: string | null;
  originalConversationId: string | null;
  resultUrl: string;
  createdAt: string;
  /** Whether the transaction asked about was found (known once the Result is sent). */
  found: boolean | null;
}

export type SimulatedTransaction = StkTransaction | B2cTransaction | StatusQueryTransaction;

/** A forced answer for the next Daraja requests (`failNext`). */
export interface Fault {
  /** Default 500. */
  status?: number;
  /** Default `500.003.1001`. */
  errorCode?: string;
  /** Default `Internal Server Error`. */
  errorMessage?: string;
  /** Never answer (until `close()`). */
  hang?: boolean;
}

export interface MpesaSimulator {
  /** `http://HOST:PORT` (no trailing slash): Daraja's base URL. */
  readonly url: string;
  readonly port: number;
  /** Every request received since start or the last `reset()`, in arrival order. */
  requests(): RecordedRequest[];
  /** Callbacks POSTed since start or the last `reset()`. */
  callbacks(): SentCallback[];
  /** Every STK push, B2C payment and status query accepted, oldest first. */
  transactions(): SimulatedTransaction[];
  /**
   * Forgets recorded requests and callbacks, and restarts the per-number B2C attempt count;
   * transactions, tokens and used OriginatorConversationIDs stay.
   */
  reset(): void;
  /** Answers the next `count` Daraja requests (any route) with the fault instead. */
  failNext(count: number, fault?: Fault): void;
  onRequest(listener: (request: RecordedRequest) => void): () => void;
  onCallback(listener: (callback: SentCallback) => void): () => void;
  /** Stops listening, cancels pending callbacks and drops open connections (hanging ones too). */
  close(): Promise<void>;
}

const DEFAULT_FAULT: Required<Omit<Fault, 'hang'>> = {
  status: 500,
  errorCode: '500.003.1001',
  errorMessage: 'Internal Server Error',
};

const MAX_BODY_BYTES = 1024 * 1024;
const CALLBACK_TIMEOUT_MS = 10_000;
const B2C_COMMANDS = new Set(['BusinessPayment', 'SalaryPayment', 'PromotionPayment']);
const REASON_TYPES: Record<string, string> = {
  BusinessPayment: 'Business Payment to Customer via API',
  SalaryPayment: 'Salary Payment via API',
  PromotionPayment: 'Promotion Payment via API',
};
const B2C_CHARGE = 15;

class Failure extends Error {
  constructor(readonly failure: DarajaFailure) {
    super(failure.errorMessage);
  }
}

function fail(failure: DarajaFailure): never {
  throw new Failure(failure);
}

function urlHost(host: string): string {
  if (host === '0.0.0.0' || host === '::' || host === '') return '127.0.0.1';
  return host.includes(':') ? `[${host}]` : host;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
    req.on('close', () => {
      if (!req.complete) reject(new Error('request aborted'));
    });
  });
}

function parseBody(raw: string): unknown {
  if (raw === '') return null;
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}

function sendJson(res: ServerResponse, status: number, payload: unknown): void {
  const body = JSON.stringify(payload);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

const ROUTES: Record<string, 'GET' | 'POST'> = {
  '/oauth/v1/generate': 'GET',
  '/mpesa/stkpush/v1/processrequest': 'POST',
  '/mpesa/stkpushquery/v1/query': 'POST',
  '/mpesa/b2c/v3/paymentrequest': 'POST',
  '/mpesa/transactionstatus/v1/query': 'POST',
};

/**
 * A local Safaricom Daraja: the OAuth token route, STK push and query, B2C and Transaction
 * Status, validating requests as Daraja does and POSTing its callbacks, with outcomes
 * scripted by phone number (see the README).
 */
export async function startMpesaSimulator(options: MpesaSimulatorOptions): Promise<MpesaSimulator> {
  const {
    port = 0,
    host = '127.0.0.1',
    consumerKey,
    consumerSecret,
    shortcode,
    passkey,
    b2cShortcode = options.shortcode,
    callbackDelayMs = 300,
    tokenTtlSeconds = 3600,
    maxRequestsPerSecond,
    timestampZone = 'any',
    timestampSkewSeconds = 600,
    b2cMinAmount = 10,
    b2cMaxAmount = 250_000,
    now = () => new Date(),
  } = options;
  for (const [name, value] of Object.entries({ consumerKey, consumerSecret, shortcode, passkey })) {
    if (typeof value !== 'string' || value === '')
      throw new TypeError(`startMpesaSimulator: ${name} is required`);
  }

  const ids = createIds();
  const receipt = createReceipts();
  const events = new EventEmitter();
  let requestLog: RecordedRequest[] = [];
  let callbackLog: SentCallback[] = [];
  let seq = 0;
  const tokens = new Map<string, number>();
  const accepted: number[] = [];
  const faults: Fault[] = [];
  const stkByCheckout = new Map<string, StkTransaction>();
  const b2cByOcid = new Map<string, B2cTransaction>();
  const byReceipt = new Map<string, StkTransaction | B2cTransaction>();
  const allTransactions: SimulatedTransaction[] = [];
  let b2cAttempts = new Map<string, number>();
  const timers = new Set<NodeJS.Timeout>();
  const deliveries = new Set<Promise<void>>();
  const closing = new AbortController();
  let closed = false;
  const funds = { utility: 5_000_000, working: 1_000_000, chargesPaid: 0 };

  const iso = () => now().toISOString();
  const errorBody = (f: DarajaFailure) => ({
    requestId: ids.requestId(),
    errorCode: f.errorCode,
    errorMessage: f.errorMessage,
  });

  // ---- callbacks -------------------------------------------------------------------------

  function later(fn: () => Promise<void> | void): void {
    if (closed) return;
    const timer = setTimeout(() => {
      timers.delete(timer);
      const run = Promise.resolve()
        .then(fn)
        .catch(() => {
          // A failed delivery is recorded on its SentCallback; nothing else to do.
        });
      deliveries.add(run);
      void run.finally(() => deliveries.delete(run));
    }, callbackDelayMs);
    timers.add(timer);
  }

  async function post(kind: CallbackKind, url: string, body: unknown): Promise<void> {
    if (closed) return;
    const entry: SentCallback = { kind, url, body, sentAt: iso(), status: null };
    callbackLog.push(entry);
    try {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
        signal: AbortSignal.any([closing.signal, AbortSignal.timeout(CALLBACK_TIMEOUT_MS)]),
      });
      await response.arrayBuffer().catch(() => undefined);
      entry.status = response.status;
    } catch (error) {
      entry.error = (error as Error).message;
    }
    events.emit('callback', entry);
  }

  // ---- gateway: tokens, spike arrest ------------------------------------------------------

  function generateToken(req: IncomingMessage, query: URLSearchParams) {
    if (query.get('grant_type') !== 'client_credentials') {
      fail({ status: 400, errorCode: '400.008.02', errorMessage: 'Invalid grant type passed' });
    }
    const header = req.headers.authorization ?? '';
    const match = /^Basic\s+(\S+)$/i.exec(header);
    const decoded = match ? Buffer.from(match[1] as string, 'base64').toString('utf8') : '';
    if (decoded !== `${consumerKey}:${consumerSecret}`) {
      fail({ status: 400, errorCode: '400.008.01', errorMessage: 'Invalid Authentication passed' });
    }
    const token = ids.accessToken();
    tokens.set(token, now().getTime() + tokenTtlSeconds * 1000);
    return { access_token: token, expires_in: String(Math.max(tokenTtlSeconds - 1, 0)) };
  }

  function requireToken(req: IncomingMessage): void {
    const match = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '');
    if (!match) {
      fail({ status: 401, errorCode: '404.001.04', errorMessage: 'Invalid Authentication Header' });
    }
    const expiresAt = tokens.get((match as RegExpExecArray)[1] as string);
    if (expiresAt === undefined || now().getTime() >= expiresAt) {
      fail({ status: 401, errorCode: '404.001.03', errorMessage: 'Invalid Access Token' });
    }
  }

  function spikeArrest(): void {
    if (!maxRequestsPerSecond) return;
    const t = now().getTime();
    while (accepted.length > 0 && (accepted[0] as number) <= t - 1000) accepted.shift();
    if (accepted.length >= maxRequestsPerSecond) {
      fail({ status: 500, errorCode: '500.003.02', errorMessage: 'Error Occurred: Spike Arrest Violation' });
    }
    accepted.push(t);
  }

  // ---- STK push and query ----------------------------------------------------------------

  /** BusinessShortCode, Password and Timestamp, checked as for STK push and STK query. */
  function checkStkCredentials(body: Record<string, unknown>): void {
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

  function stkPush(body: Record<string, unknown>) {
    checkStkCredentials(body);
    const type = body.TransactionType;
    if (type !== 'CustomerPayBillOnline' && type !== 'CustomerBuyGoodsOnline')
      fail(invalid('TransactionType'));
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
      merchantRequestId: ids.merchantRequestId(),
      checkoutRequestId: ids.checkoutRequestId(now(), phone as string),
      phone: phone as string,
      amount: amount as number,
      accountReference: accountReference as string,
      callbackUrl: body.CallBackURL as string,
      createdAt: iso(),
      state: 'PROCESSING',
      resultCode: null,
      resultDesc: null,
      receipt: null,
      completedAt: null,
      callbacks: misdirected ? 1 : script.callbacks,
    };
    stkByCheckout.set(tx.checkoutRequestId, tx);
    allTransactions.push(tx);

    later(async () => {
      const resultCode = misdirected ? 2028 : script.resultCode;
      tx.resultCode = resultCode;
      tx.resultDesc = misdirected ? RESULT_DESC.notPermitted : script.resultDesc;
      tx.completedAt = iso();
      tx.state = resultCode === 0 ? 'COMPLETED' : 'FAILED';
      if (resultCode === 0) {
        tx.receipt = receipt();
        byReceipt.set(tx.receipt, tx);
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
      for (let i = 0; i < tx.callbacks; i++) await post('STK_CALLBACK', tx.callbackUrl, callback);
    });

    return {
      MerchantRequestID: tx.merchantRequestId,
      CheckoutRequestID: tx.checkoutRequestId,
      ResponseCode: '0',
      ResponseDescription: 'Success. Request accepted for processing',
      CustomerMessage: 'Success. Request accepted for processing',
    };
  }

  function stkQuery(body: Record<string, unknown>) {
    checkStkCredentials(body);
    const id = typeof body.CheckoutRequestID === 'string' ? body.CheckoutRequestID : '';
    const tx = stkByCheckout.get(id);
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

  // ---- B2C --------------------------------------------------------------------------------

  function initiatorValid(name: unknown, credential: unknown): boolean {
    if (options.initiatorName !== undefined && name !== options.initiatorName) return false;
    if (options.securityCredential !== undefined && credential !== options.securityCredential) return false;
    return true;
  }

  function b2c(body: Record<string, unknown>) {
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
    if (b2cByOcid.has(ocid as string)) {
      fail({ status: 500, errorCode: '500.002.1001', errorMessage: 'Duplicate OriginatorConversationID.' });
    }

    const attempt = (b2cAttempts.get(phone as string) ?? 0) + 1;
    b2cAttempts.set(phone as string, attempt);
    let { resultCode, resultDesc, delivery, times } = b2cScript(phone as string, attempt);
    if (!initiatorValid(body.InitiatorName, body.SecurityCredential)) {
      [resultCode, resultDesc, delivery, times] = [2001, RESULT_DESC.initiatorInvalid, 'result', 1];
    } else if (partyA !== b2cShortcode) {
      [resultCode, resultDesc, delivery, times] = [2028, RESULT_DESC.notPermitted, 'result', 1];
    } else if ((amount as number) < b2cMinAmount) {
      [resultCode, resultDesc, delivery, times] = [2, RESULT_DESC.belowMinimum, 'result', 1];
    } else if ((amount as number) > b2cMaxAmount) {
      [resultCode, resultDesc, delivery, times] = [3, RESULT_DESC.aboveMaximum, 'result', 1];
    }
    const transactionId = receipt();
    const tx: B2cTransaction = {
      type: 'B2C',
      originatorConversationId: ocid as string,
      conversationId: ids.conversationId(now()),
      transactionId,
      commandId: commandId as string,
      phone: phone as string,
      amount: amount as number,
      remarks: remarks as string,
      occasion: typeof occasionField === 'string' ? occasionField : '',
      resultUrl: body.ResultURL as string,
      queueTimeoutUrl: body.QueueTimeOutURL as string,
      createdAt: iso(),
      state: 'PROCESSING',
      resultCode: null,
      resultDesc: null,
      receipt: null,
      completedAt: null,
      delivery,
      times,
    };
    b2cByOcid.set(tx.originatorConversationId, tx);
    byReceipt.set(transactionId, tx);
    allTransactions.push(tx);

    later(async () => {
      tx.resultCode = resultCode;
      tx.resultDesc = resultDesc;
      tx.completedAt = iso();
      tx.state = resultCode === 0 ? 'COMPLETED' : 'FAILED';
      const referenceData = { ReferenceItem: { Key: 'QueueTimeoutURL', Value: tx.queueTimeoutUrl } };
      if (resultCode === 0) {
        tx.receipt = transactionId;
        funds.utility = Math.round((funds.utility - tx.amount) * 100) / 100;
        funds.chargesPaid -= B2C_CHARGE;
      }
      if (delivery === 'queue-timeout') {
        await post('B2C_QUEUE_TIMEOUT', tx.queueTimeoutUrl, {
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
      for (let i = 0; i < times; i++) await post('B2C_RESULT', tx.resultUrl, result);
    });

    return {
      ConversationID: tx.conversationId,
      OriginatorConversationID: tx.originatorConversationId,
      ResponseCode: '0',
      ResponseDescription: 'Accept the service request successfully.',
    };
  }

  // ---- Transaction Status ----------------------------------------------------------------

  function statusParameters(original: StkTransaction | B2cTransaction) {
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

  function transactionStatus(body: Record<string, unknown>) {
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
      originatorConversationId: ids.originatorConversationId(),
      conversationId: ids.conversationId(now()),
      transactionId,
      originalConversationId: original,
      resultUrl: body.ResultURL as string,
      createdAt: iso(),
      found: null,
    };
    allTransactions.push(query);
    const occasion = typeof body.Occasion === 'string' ? body.Occasion : '';
    const credentialsOk = initiatorValid(body.Initiator, body.SecurityCredential);

    later(async () => {
      const target =
        (original !== null ? b2cByOcid.get(original) : undefined) ??
        (transactionId !== null ? byReceipt.get(transactionId) : undefined);
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
          TransactionID: receipt(),
        };
      } else {
        result = {
          ...head,
          ResultCode: 0,
          ResultDesc: RESULT_DESC.success,
          ResultParameters: { ResultParameter: statusParameters(target) },
          ResultType: 0,
          TransactionID: target.type === 'B2C' ? target.transactionId : target.receipt,
        };
      }
      await post('TRANSACTION_STATUS_RESULT', query.resultUrl, { Result: result });
    });

    return {
      OriginatorConversationID: query.originatorConversationId,
      ConversationID: query.conversationId,
      ResponseCode: '0',
      ResponseDescription: 'Accept the service request successfully.',
    };
  }

  // ---- HTTP -------------------------------------------------------------------------------

  async function daraja(req: IncomingMessage, res: ServerResponse, entry: RecordedRequest, raw: string) {
    const url = new URL(req.url ?? '/', 'http://simulator');
    const route = url.pathname.replace(/\/+$/, '');
    const answer = (status: number, payload: unknown) => {
      entry.status = status;
      sendJson(res, status, payload);
      events.emit('request', entry);
    };
    const fault = faults.shift();
    if (fault) {
      if (fault.hang) return events.emit('request', entry);
      const f = { ...DEFAULT_FAULT, ...fault };
      return answer(f.status, errorBody(f));
    }
    try {
      const method = ROUTES[route];
      if (!method) fail({ status: 404, errorCode: '404.001.01', errorMessage: 'Resource not found' });
      if (req.method !== method) {
        fail({ status: 405, errorCode: '405.001', errorMessage: `${req.method} Method Not Allowed` });
      }
      spikeArrest();
      if (route === '/oauth/v1/generate') return answer(200, generateToken(req, url.searchParams));
      requireToken(req);
      const body = entry.body;
      if (raw === '' || typeof body !== 'object' || body === null || Array.isArray(body)) {
        fail({ status: 400, errorCode: '400.002.05', errorMessage: 'Invalid Request Payload' });
      }
      const fields = body as Record<string, unknown>;
      switch (route) {
        case '/mpesa/stkpush/v1/processrequest':
          return answer(200, stkPush(fields));
        case '/mpesa/stkpushquery/v1/query':
          return answer(200, stkQuery(fields));
        case '/mpesa/b2c/v3/paymentrequest':
          return answer(200, b2c(fields));
        default:
          return answer(200, transactionStatus(fields));
      }
    } catch (error) {
      if (error instanceof Failure) return answer(error.failure.status, errorBody(error.failure));
      throw error;
    }
  }

  const snapshot = <T>(value: T): T => structuredClone(value);

  async function control(req: IncomingMessage, res: ServerResponse, pathname: string, raw: string) {
    const key = `${req.method} ${pathname}`;
    switch (key) {
      case 'GET /_requests':
        return sendJson(res, 200, { requests: requestLog });
      case 'DELETE /_requests':
        handle.reset();
        return sendJson(res, 200, { reset: true });
      case 'GET /_transactions':
        return sendJson(res, 200, { transactions: allTransactions });
      case 'GET /_callbacks':
        return sendJson(res, 200, { callbacks: callbackLog });
      case 'POST /_faults': {
        const body = parseBody(raw) as { count?: unknown } & Fault;
        const count = typeof body?.count === 'number' ? body.count : 1;
        if (!Number.isInteger(count) || count < 1)
          return sendJson(res, 400, { error: 'count: a positive integer' });
        const { count: _count, ...fault } = body;
        handle.failNext(count, fault);
        return sendJson(res, 200, { pending: faults.length });
      }
      default:
        return sendJson(res, 404, {
          error:
            'simulator routes: GET|DELETE /_requests, GET /_transactions, GET /_callbacks, POST /_faults',
        });
    }
  }

  const server = createServer((req, res) => {
    const path = req.url ?? '/';
    const pathname = path.split('?')[0] as string;
    const run = async () => {
      const raw = await readBody(req);
      if (pathname.startsWith('/_')) return control(req, res, pathname, raw);
      const entry: RecordedRequest = {
        seq: ++seq,
        method: req.method ?? 'GET',
        path,
        headers: { ...req.headers },
        body: parseBody(raw),
        time: iso(),
        status: null,
      };
      requestLog.push(entry);
      return daraja(req, res, entry, raw);
    };
    run().catch(() => {
      if (!res.headersSent && !res.destroyed) {
        sendJson(res, 500, errorBody(DEFAULT_FAULT));
      }
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const actualPort = (server.address() as AddressInfo).port;

  const handle: MpesaSimulator = {
    url: `http://${urlHost(host)}:${actualPort}`,
    port: actualPort,
    requests: () => snapshot(requestLog),
    callbacks: () => snapshot(callbackLog),
    transactions: () => snapshot(allTransactions),
    reset() {
      requestLog = [];
      callbackLog = [];
      b2cAttempts = new Map();
    },
    failNext(count, fault = {}) {
      for (let i = 0; i < count; i++) faults.push({ ...fault });
    },
    onRequest(listener) {
      events.on('request', listener);
      return () => events.off('request', listener);
    },
    onCallback(listener) {
      events.on('callback', listener);
      return () => events.off('callback', listener);
    },
    async close() {
      if (closed) return;
      closed = true;
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      closing.abort();
      await Promise.allSettled([...deliveries]);
      events.removeAllListeners();
      const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await stopped;
    },
  };
  return handle;
}
