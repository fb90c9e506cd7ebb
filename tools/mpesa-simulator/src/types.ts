/** What the simulator is given (its options), what it records, and the handle tests hold. */
import type { TimestampZone } from './time';

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
