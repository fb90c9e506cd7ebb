/**
 * What went wrong, in terms a caller can act on:
 * - `UNAVAILABLE`: Daraja could not be reached or answered badly (network error, timeout, 5xx,
 *   an unreadable answer) or the breaker is open. Retry later. For B2C, retry with the SAME
 *   OriginatorConversationID: if the first request did get through, Daraja answers DUPLICATE.
 * - `THROTTLED`: spike arrest / quota (`500.003.02`, `500.003.03`, HTTP 429) or "unable to lock
 *   subscriber" (a push already pending for that number). Back off, then retry.
 * - `DUPLICATE`: `500.002.1001` Duplicate OriginatorConversationID: that B2C was already
 *   accepted; never pay again, find its outcome (Result callback or Transaction Status).
 * - `REJECTED`: Daraja refused the request as made: a 4xx validation error, bad consumer
 *   credentials, an access token refused even after a refresh, wrong STK password or shortcode,
 *   or input this client refuses before sending. Retrying the same request will not help.
 * - `PROCESSING`: `500.001.1001` "The transaction is being processed" (STK query maps it to
 *   `{ state: 'PENDING' }` instead of throwing).
 */
export type DarajaErrorKind = 'UNAVAILABLE' | 'THROTTLED' | 'DUPLICATE' | 'REJECTED' | 'PROCESSING';

/** Why, when the failure happened on our side of the wire (no Daraja error code). */
export type DarajaErrorDetail =
  | 'BREAKER_OPEN'
  | 'TIMEOUT'
  | 'NETWORK'
  | 'BAD_RESPONSE'
  | 'CLOSED'
  | 'INVALID_INPUT';

/** Every failure of the Daraja client. `message` is safe to log: no keys, tokens or passwords. */
export class DarajaError extends Error {
  override readonly name = 'DarajaError';
  /** Daraja's `errorCode` (e.g. `500.002.1001`), or a non-zero `ResponseCode`. */
  readonly errorCode?: string;
  /** The HTTP status Daraja answered with. */
  readonly status?: number;
  /** Daraja's `requestId`, for support tickets. */
  readonly requestId?: string;
  readonly detail?: DarajaErrorDetail;

  constructor(
    readonly kind: DarajaErrorKind,
    message: string,
    extra: { errorCode?: string; status?: number; requestId?: string; detail?: DarajaErrorDetail } = {},
  ) {
    super(message);
    this.errorCode = extra.errorCode;
    this.status = extra.status;
    this.requestId = extra.requestId;
    this.detail = extra.detail;
  }

  /** Whether the same call may succeed later (UNAVAILABLE, THROTTLED, PROCESSING). */
  get retriable(): boolean {
    return this.kind === 'UNAVAILABLE' || this.kind === 'THROTTLED' || this.kind === 'PROCESSING';
  }
}

/** Daraja's invalid or expired access token: refresh the token once and retry. */
export const INVALID_TOKEN = '404.001.03';

/** Maps a non-2xx Daraja answer (`{ requestId, errorCode, errorMessage }`) to a DarajaError. */
export function errorFromAnswer(what: string, status: number, body: unknown): DarajaError {
  const fields = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  const errorCode = typeof fields.errorCode === 'string' ? fields.errorCode : undefined;
  const errorMessage = typeof fields.errorMessage === 'string' ? fields.errorMessage : undefined;
  const requestId = typeof fields.requestId === 'string' ? fields.requestId : undefined;
  const extra = { errorCode, status, requestId };
  const message = `${what}: Daraja answered ${status}${errorCode ? ` ${errorCode}` : ''}${errorMessage ? ` "${errorMessage}"` : ''}`;

  if (errorCode === '500.003.02' || errorCode === '500.003.03' || status === 429) {
    return new DarajaError('THROTTLED', message, extra);
  }
  if (errorCode === '500.002.1001') return new DarajaError('DUPLICATE', message, extra);
  if (errorCode === INVALID_TOKEN) return new DarajaError('REJECTED', message, extra);
  if (errorCode === '500.001.1001') {
    const text = errorMessage ?? '';
    if (/being processed/i.test(text)) return new DarajaError('PROCESSING', message, extra);
    if (/unable to lock subscriber/i.test(text)) return new DarajaError('THROTTLED', message, extra);
    if (/wrong credentials|merchant does not exist|invalid/i.test(text)) {
      return new DarajaError('REJECTED', message, extra);
    }
    return new DarajaError('UNAVAILABLE', message, extra);
  }
  if (status >= 400 && status < 500) return new DarajaError('REJECTED', message, extra);
  return new DarajaError('UNAVAILABLE', message, extra);
}
