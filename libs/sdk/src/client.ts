import { randomUUID } from 'node:crypto';
import createFetchClient, { type Client, type Middleware } from 'openapi-fetch';
import { IDEMPOTENCY_KEY_OPERATIONS } from './idempotent';
import { type RetryOptions, retryingFetch } from './retry';
import type { paths } from './schema';

/** A typed client of every partner route: `client.GET('/farmers', { params: { query } })`. */
export type PartnerClient = Client<paths>;

interface CommonOptions {
  /** The API's base URL, ending with its prefix: `https://…/api` (docs/api.md). */
  baseUrl: string;
  /** Retries of reads and keyed writes (libs/sdk/README.md, "Retries"); `{ maxAttempts: 1 }` turns them off. */
  retry?: RetryOptions;
  /** The fetch to send with (default the global one). */
  fetch?: (request: Request) => Promise<Response>;
  /** Headers added to every request. */
  headers?: Record<string, string>;
}

/**
 * How the client authenticates (docs/api.md, "Authentication"): the organization's API key, a
 * dashboard user's access token, or neither (registration, sign-in and the signing keys need
 * none). The API refuses both at once, so the type does too.
 */
export type ClientOptions = CommonOptions &
  (
    | { apiKey: string; accessToken?: never }
    | { accessToken: string; apiKey?: never }
    | { apiKey?: undefined; accessToken?: undefined }
  );

/**
 * Gives every call of an operation that takes an `Idempotency-Key` one, unless the caller chose
 * it: made once per call, before the first attempt, so each retry carries the same key and the
 * API answers a repeat with what the first attempt did.
 */
const idempotencyKeys: Middleware = {
  onRequest({ request, schemaPath }) {
    if (request.headers.has('idempotency-key')) return undefined;
    if (!IDEMPOTENCY_KEY_OPERATIONS.has(`${request.method} ${schemaPath}`)) return undefined;
    const headers = new Headers(request.headers);
    headers.set('idempotency-key', randomUUID());
    return new Request(request, { headers });
  },
};

export function createClient(options: ClientOptions): PartnerClient {
  if (options.apiKey !== undefined && options.accessToken !== undefined) {
    // The API answers 400 to both; the types refuse it, and so does this for untyped callers.
    throw new TypeError('createClient: pass apiKey or accessToken, not both');
  }
  const headers: Record<string, string> = { ...options.headers };
  if (options.apiKey !== undefined) headers['x-api-key'] = options.apiKey;
  if (options.accessToken !== undefined) headers.authorization = `Bearer ${options.accessToken}`;
  const base = options.fetch ?? ((request: Request) => fetch(request));
  const client = createFetchClient<paths>({
    baseUrl: options.baseUrl,
    headers,
    fetch: retryingFetch(base, options.retry),
  });
  client.use(idempotencyKeys);
  return client;
}
