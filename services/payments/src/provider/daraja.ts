import { setMaxListeners } from 'node:events';
import { outbound } from '@parametric/tracing';
import CircuitBreaker from 'opossum';
import { z } from 'zod';
import { DarajaError, errorFromAnswer, INVALID_TOKEN } from './errors';
import { darajaTimestamp, stkPassword, type TimestampZone, toDarajaPhone } from './format';
import { parseResultCode } from './result-codes';

export interface DarajaConfig {
  /** `https://api.safaricom.co.ke`, `https://sandbox.safaricom.co.ke`, or the simulator's URL. */
  baseUrl: string;
  consumerKey: string;
  consumerSecret: string;
  /** STK BusinessShortCode (paybill) and its Lipa na M-Pesa Online passkey. */
  shortcode: string;
  passkey: string;
  /** B2C PartyA, also PartyA of Transaction Status. */
  b2cShortcode: string;
  /** The API operator's user name, and its password encrypted with Safaricom's certificate. */
  initiatorName: string;
  securityCredential: string;
  /** The zone of the STK `Timestamp` (Daraja's is unconfirmed; default EAT, UTC+3). */
  timestampZone?: TimestampZone;
  /** Limit of each HTTP request, answer body included. */
  timeoutMs: number;
  /** How long the breaker stays open before letting one trial request through (half-open). */
  breakerResetMs: number;
  /**
   * Called once with the client's opossum breaker when it is created, e.g. to observe its
   * state changes (`metrics.observeBreaker`).
   */
  onBreaker?: (breaker: CircuitBreaker) => void;
}

export type BreakerState = 'closed' | 'open' | 'half-open';

export interface StkPushInput {
  /** Whole KES. */
  amount: number;
  /** `+2547XXXXXXXX` or `+2541XXXXXXXX`: pays, and gets the prompt. */
  phone: string;
  /** Shown to the customer; Daraja allows 12 characters. */
  accountReference: string;
  /** Daraja allows 13 characters: longer descriptions are cut to 13. */
  description: string;
  /** Where Daraja POSTs the STK callback. */
  callbackUrl: string;
}

export type StkQueryResult =
  | { state: 'PENDING' }
  /** `resultCode` -1 when Daraja's code is not numeric; `rawResultCode` as sent. */
  | { state: 'DONE'; resultCode: number; rawResultCode: string; resultDesc: string };

export type B2cCommand = 'BusinessPayment' | 'SalaryPayment' | 'PromotionPayment';

export interface B2cInput {
  /** Ours, unique per payment: Daraja rejects a reused one (DUPLICATE), which guards against paying twice. */
  originatorConversationId: string;
  /** Whole KES. */
  amount: number;
  /** `+2547XXXXXXXX` or `+2541XXXXXXXX`: receives the money. */
  phone: string;
  /** 2 to 100 characters. */
  remarks: string;
  /** Up to 100 characters (`Occassion` on the wire). */
  occasion: string;
  resultUrl: string;
  queueTimeoutUrl: string;
  /** Default `BusinessPayment`. */
  commandId?: B2cCommand;
}

export interface TransactionStatusInput {
  /** The OriginatorConversationID of the payment asked about. */
  originatorConversationId: string;
  resultUrl: string;
  queueTimeoutUrl: string;
  /** 1 to 100 characters. */
  remarks: string;
}

/** Daraja's acknowledgement of an asynchronous request. */
export interface Accepted {
  conversationId: string;
  originatorConversationId: string;
}

export interface Daraja {
  stkPush(
    input: StkPushInput,
  ): Promise<{ merchantRequestId: string; checkoutRequestId: string; customerMessage: string }>;
  stkQuery(checkoutRequestId: string): Promise<StkQueryResult>;
  b2c(input: B2cInput): Promise<Accepted>;
  /** Asks about a payment; the answer arrives at `resultUrl` (`parseTransactionStatusResult`). The ids returned are the query's own. */
  transactionStatus(input: TransactionStatusInput): Promise<Accepted>;
  breakerState(): BreakerState;
  /** Shuts the breaker down, aborts requests in flight and waits for them; later calls fail UNAVAILABLE (`CLOSED`). */
  close(): Promise<void>;
}

/** Failure percentage, over the breaker's rolling 10 s window, at which it opens. */
export const BREAKER_ERROR_THRESHOLD_PERCENTAGE = 50;
/** Minimum requests in the window before the breaker may open. */
export const BREAKER_VOLUME_THRESHOLD = 3;
/** A token is used until this long before Daraja says it expires. */
export const TOKEN_REFRESH_MARGIN_SECONDS = 60;

const tokenAnswer = z.object({
  access_token: z.string().min(1),
  // Daraja has been seen to send "3599" as well as 3599.
  expires_in: z.union([z.number(), z.string().regex(/^\d+$/).transform(Number)]),
});

const responseCode = z.union([z.string(), z.number()]).transform(String);

const stkPushAnswer = z.object({
  MerchantRequestID: z.string().min(1),
  CheckoutRequestID: z.string().min(1),
  ResponseCode: responseCode,
  ResponseDescription: z.string().optional(),
  CustomerMessage: z.string().optional(),
});

const stkQueryAnswer = z.object({
  ResponseCode: responseCode,
  ResponseDescription: z.string().optional(),
  ResultCode: z.union([z.string(), z.number()]).optional(),
  ResultDesc: z.string().optional(),
});

const asyncAnswer = z.object({
  ConversationID: z.string().min(1),
  OriginatorConversationID: z.string().min(1),
  ResponseCode: responseCode,
  ResponseDescription: z.string().optional(),
});

interface Answer {
  status: number;
  body: unknown;
}

/**
 * A typed client of Safaricom Daraja: STK push and query, B2C and Transaction Status.
 * Every HTTP request (token requests too) has a `timeoutMs` limit and goes through one
 * circuit breaker. Only UNAVAILABLE failures count against the breaker: an answer Daraja
 * gave on purpose (rejections, duplicates, throttling) shows it is up. The breaker opens when
 * at least half of the requests in its 10 s window failed (and at least 3 were made), fails
 * fast for `breakerResetMs`, then lets one trial request through.
 *
 * The access token is fetched on first use, cached until 60 s before it expires, and fetched
 * again once when Daraja answers `404.001.03` Invalid Access Token.
 */
export function createDaraja(config: DarajaConfig, deps: { now?: () => Date } = {}): Daraja {
  const now = deps.now ?? (() => new Date());
  const zone = config.timestampZone ?? 'EAT';
  const base = config.baseUrl.replace(/\/+$/, '');
  const basic = `Basic ${Buffer.from(`${config.consumerKey}:${config.consumerSecret}`, 'utf8').toString('base64')}`;

  const closing = new AbortController();
  // Every request in flight listens on it (and stops listening when done): many at once is normal.
  setMaxListeners(0, closing.signal);
  const inFlight = new Set<Promise<unknown>>();

  /** One HTTP exchange with a deadline; non-2xx answers become DarajaErrors. */
  async function exchange(what: string, path: string, init: RequestInit): Promise<unknown> {
    const controller = new AbortController();
    const onClose = () => controller.abort();
    closing.signal.addEventListener('abort', onClose);
    const timer = setTimeout(() => controller.abort(), config.timeoutMs);
    let answer: Answer;
    try {
      // Daraja may continue our trace; the request's trace id is all it learns.
      const response = await outbound(`mpesa ${what}`, (traceparent) =>
        fetch(`${base}${path}`, {
          ...init,
          headers: traceparent ? { ...(init.headers as Record<string, string>), traceparent } : init.headers,
          signal: controller.signal,
        }),
      );
      const text = await response.text();
      let body: unknown = text;
      try {
        body = text === '' ? null : JSON.parse(text);
      } catch {
        // not JSON: classified below by status
      }
      answer = { status: response.status, body };
    } catch (err) {
      if (closing.signal.aborted) {
        throw new DarajaError('UNAVAILABLE', `${what}: the Daraja client is closed`, { detail: 'CLOSED' });
      }
      if (controller.signal.aborted) {
        throw new DarajaError('UNAVAILABLE', `${what}: Daraja did not answer within ${config.timeoutMs} ms`, {
          detail: 'TIMEOUT',
        });
      }
      const cause = (err as { cause?: { code?: unknown } }).cause?.code;
      throw new DarajaError(
        'UNAVAILABLE',
        `${what}: Daraja unreachable${cause ? ` (${String(cause)})` : ''}`,
        {
          detail: 'NETWORK',
        },
      );
    } finally {
      clearTimeout(timer);
      closing.signal.removeEventListener('abort', onClose);
    }
    if (answer.status < 200 || answer.status > 299) throw errorFromAnswer(what, answer.status, answer.body);
    return answer.body;
  }

  const breaker = new CircuitBreaker((step: () => Promise<unknown>) => step(), {
    // Each request enforces timeoutMs itself (aborting it); the breaker adds no timer of its own.
    timeout: false,
    resetTimeout: config.breakerResetMs,
    errorThresholdPercentage: BREAKER_ERROR_THRESHOLD_PERCENTAGE,
    volumeThreshold: BREAKER_VOLUME_THRESHOLD,
    errorFilter: (err: unknown) => err instanceof DarajaError && err.kind !== 'UNAVAILABLE',
  });
  config.onBreaker?.(breaker);

  /** One HTTP request through the breaker; every failure comes out as a DarajaError. */
  async function request(what: string, path: string, init: RequestInit): Promise<unknown> {
    const run = (async () => {
      try {
        return await breaker.fire(() => exchange(what, path, init));
      } catch (err) {
        if (err instanceof DarajaError) throw err;
        const code = (err as { code?: unknown } | null)?.code;
        if (code === 'EOPENBREAKER') {
          throw new DarajaError('UNAVAILABLE', `${what}: Daraja circuit breaker is open, failing fast`, {
            detail: 'BREAKER_OPEN',
          });
        }
        if (code === 'ESHUTDOWN') {
          throw new DarajaError('UNAVAILABLE', `${what}: the Daraja client is closed`, { detail: 'CLOSED' });
        }
        throw new DarajaError('UNAVAILABLE', `${what}: ${(err as Error).message}`);
      }
    })();
    inFlight.add(run);
    try {
      return await run;
    } finally {
      inFlight.delete(run);
    }
  }

  function parse<T>(what: string, schema: z.ZodType<T>, body: unknown): T {
    const parsed = schema.safeParse(body);
    if (!parsed.success) {
      throw new DarajaError('UNAVAILABLE', `${what}: unexpected answer from Daraja`, {
        detail: 'BAD_RESPONSE',
      });
    }
    return parsed.data;
  }

  // ---- access token ---------------------------------------------------------------------

  let cached: { token: string; refreshAt: number } | undefined;
  let fetching: Promise<string> | undefined;

  async function fetchToken(): Promise<string> {
    const body = await request('token', '/oauth/v1/generate?grant_type=client_credentials', {
      method: 'GET',
      headers: { authorization: basic },
    });
    const { access_token, expires_in } = parse('token', tokenAnswer, body);
    const lifetime = Math.max(expires_in - TOKEN_REFRESH_MARGIN_SECONDS, 0);
    cached = { token: access_token, refreshAt: now().getTime() + lifetime * 1000 };
    return access_token;
  }

  function token(): Promise<string> {
    if (cached && now().getTime() < cached.refreshAt) return Promise.resolve(cached.token);
    fetching ??= fetchToken().finally(() => {
      fetching = undefined;
    });
    return fetching;
  }

  /** A bearer-authenticated POST; on Invalid Access Token, one fresh token and one retry. */
  async function post(what: string, path: string, payload: unknown): Promise<unknown> {
    const send = (bearer: string) =>
      request(what, path, {
        method: 'POST',
        headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' },
        body: JSON.stringify(payload),
      });
    const first = await token();
    try {
      return await send(first);
    } catch (err) {
      if (!(err instanceof DarajaError) || err.errorCode !== INVALID_TOKEN) throw err;
      if (cached?.token === first) cached = undefined;
      return send(await token());
    }
  }

  // ---- inputs -----------------------------------------------------------------------------

  const invalid = (what: string, message: string) =>
    new DarajaError('REJECTED', `${what}: ${message}`, { detail: 'INVALID_INPUT' });

  function msisdn(what: string, phone: string): string {
    const converted = toDarajaPhone(phone);
    if (converted === null)
      throw invalid(what, 'phone must be a Safaricom number, +2547XXXXXXXX or +2541XXXXXXXX');
    return converted;
  }

  function wholeKes(what: string, amount: number): number {
    if (!Number.isSafeInteger(amount) || amount < 1)
      throw invalid(what, 'amount must be a whole number of KES, at least 1');
    return amount;
  }

  function stkCredentials() {
    const timestamp = darajaTimestamp(now(), zone);
    return {
      BusinessShortCode: config.shortcode,
      Password: stkPassword(config.shortcode, config.passkey, timestamp),
      Timestamp: timestamp,
    };
  }

  function accepted(what: string, body: unknown): Accepted {
    const answer = parse(what, asyncAnswer, body);
    if (answer.ResponseCode !== '0') {
      throw new DarajaError('REJECTED', `${what}: Daraja answered ResponseCode ${answer.ResponseCode}`, {
        errorCode: answer.ResponseCode,
      });
    }
    return {
      conversationId: answer.ConversationID,
      originatorConversationId: answer.OriginatorConversationID,
    };
  }

  return {
    async stkPush(input) {
      const what = 'STK push';
      const phone = msisdn(what, input.phone);
      const body = await post(what, '/mpesa/stkpush/v1/processrequest', {
        ...stkCredentials(),
        TransactionType: 'CustomerPayBillOnline',
        Amount: wholeKes(what, input.amount),
        PartyA: phone,
        PartyB: config.shortcode,
        PhoneNumber: phone,
        CallBackURL: input.callbackUrl,
        AccountReference: input.accountReference,
        TransactionDesc: input.description.slice(0, 13),
      });
      const answer = parse(what, stkPushAnswer, body);
      if (answer.ResponseCode !== '0') {
        throw new DarajaError('REJECTED', `${what}: Daraja answered ResponseCode ${answer.ResponseCode}`, {
          errorCode: answer.ResponseCode,
        });
      }
      return {
        merchantRequestId: answer.MerchantRequestID,
        checkoutRequestId: answer.CheckoutRequestID,
        customerMessage: answer.CustomerMessage ?? answer.ResponseDescription ?? '',
      };
    },

    async stkQuery(checkoutRequestId) {
      const what = 'STK query';
      let body: unknown;
      try {
        body = await post(what, '/mpesa/stkpushquery/v1/query', {
          ...stkCredentials(),
          CheckoutRequestID: checkoutRequestId,
        });
      } catch (err) {
        if (err instanceof DarajaError && err.kind === 'PROCESSING') return { state: 'PENDING' };
        throw err;
      }
      const answer = parse(what, stkQueryAnswer, body);
      if (answer.ResultCode === undefined || answer.ResultCode === '') return { state: 'PENDING' };
      const { resultCode, rawResultCode } = parseResultCode(answer.ResultCode);
      return { state: 'DONE', resultCode, rawResultCode, resultDesc: answer.ResultDesc ?? '' };
    },

    async b2c(input) {
      const what = 'B2C payment';
      const body = await post(what, '/mpesa/b2c/v3/paymentrequest', {
        OriginatorConversationID: input.originatorConversationId,
        InitiatorName: config.initiatorName,
        SecurityCredential: config.securityCredential,
        CommandID: input.commandId ?? 'BusinessPayment',
        Amount: wholeKes(what, input.amount),
        PartyA: config.b2cShortcode,
        PartyB: msisdn(what, input.phone),
        Remarks: input.remarks,
        QueueTimeOutURL: input.queueTimeoutUrl,
        ResultURL: input.resultUrl,
        Occassion: input.occasion,
      });
      return accepted(what, body);
    },

    async transactionStatus(input) {
      const what = 'Transaction Status';
      const body = await post(what, '/mpesa/transactionstatus/v1/query', {
        Initiator: config.initiatorName,
        SecurityCredential: config.securityCredential,
        CommandID: 'TransactionStatusQuery',
        // The Daraja documentation's name for the id of the payment asked about.
        OriginalConversationID: input.originatorConversationId,
        PartyA: config.b2cShortcode,
        IdentifierType: '4',
        ResultURL: input.resultUrl,
        QueueTimeOutURL: input.queueTimeoutUrl,
        Remarks: input.remarks,
        Occasion: '',
      });
      return accepted(what, body);
    },

    breakerState() {
      if (breaker.opened) return 'open';
      if (breaker.halfOpen) return 'half-open';
      return 'closed';
    },

    async close() {
      breaker.shutdown();
      closing.abort();
      await Promise.allSettled([...inFlight]);
    },
  };
}
