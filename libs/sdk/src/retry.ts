/**
 * Which requests the SDK sends again, and when (libs/sdk/README.md, "Retries"). A request is
 * retried only when repeating it cannot do a thing twice: a GET or HEAD, or a request carrying an
 * `Idempotency-Key` (docs/api.md, "Retries and idempotency"), resent with that same key. Other
 * writes are never resent: after a timeout the caller reads before repeating one.
 */

export interface RetryOptions {
  /** Attempts in all, the first included (default 4; 1 turns retries off). */
  maxAttempts?: number;
  /** The most the SDK waits between attempts of one call, added up (default 30 000 ms). */
  maxTotalWaitMs?: number;
  /** The first backoff when the answer gives no `Retry-After` (default 250 ms), doubled each time. */
  baseDelayMs?: number;
  /** The longest single backoff without `Retry-After` (default 5 000 ms). */
  maxDelayMs?: number;
}

/** The statuses that say "try again later": the API's request deadline and rate limits (docs/api.md). */
export const RETRIED_STATUSES: ReadonlySet<number> = new Set([429, 503]);

type Fetch = (request: Request) => Promise<Response>;

/** Whether sending `request` again is safe: a read, or a write the API de-duplicates by its key. */
export function isRetryable(request: Request): boolean {
  return request.method === 'GET' || request.method === 'HEAD' || request.headers.has('idempotency-key');
}

/**
 * `Retry-After` in milliseconds: delay-seconds or an HTTP date (RFC 9110); undefined when
 * absent or unreadable.
 */
export function retryAfterMs(response: Response, now = Date.now()): number | undefined {
  const value = response.headers.get('retry-after')?.trim();
  if (!value) return undefined;
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

function sleep(ms: number, signal: AbortSignal | null): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * `fetch`, retrying what `isRetryable` allows on a network error, `429` or `503`: at most
 * `maxAttempts` sends, waiting `Retry-After` when the answer has one (else exponential backoff
 * with full jitter), and never more than `maxTotalWaitMs` in all. When it stops, the caller gets
 * the last answer, or the last network error when there was none.
 */
export function retryingFetch(base: Fetch, options: RetryOptions = {}): Fetch {
  const maxAttempts = Math.max(1, options.maxAttempts ?? 4);
  const maxTotalWaitMs = options.maxTotalWaitMs ?? 30_000;
  const baseDelayMs = options.baseDelayMs ?? 250;
  const maxDelayMs = options.maxDelayMs ?? 5_000;

  return async (request) => {
    if (!isRetryable(request) || maxAttempts === 1) return base(request);
    let waitedMs = 0;
    for (let attempt = 1; ; attempt++) {
      // Every attempt sends a copy, so the original's body is still there for the next one.
      let response: Response | undefined;
      let error: unknown;
      try {
        response = await base(request.clone());
        if (!RETRIED_STATUSES.has(response.status)) return response;
      } catch (err) {
        // The caller's own abort ends the call; any other failure to get an answer is the network's.
        if (request.signal.aborted) throw err;
        error = err;
      }
      const backoff = Math.random() * Math.min(maxDelayMs, baseDelayMs * 2 ** (attempt - 1));
      const delay = (response && retryAfterMs(response)) ?? backoff;
      if (attempt >= maxAttempts || waitedMs + delay > maxTotalWaitMs) {
        if (response) return response;
        throw error;
      }
      // Let go of the refused answer's connection before waiting.
      await response?.body?.cancel().catch(() => undefined);
      await sleep(delay, request.signal);
      waitedMs += delay;
    }
  };
}
