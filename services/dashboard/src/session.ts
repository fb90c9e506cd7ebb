/**
 * The signed-in user's session (docs/dashboard.md, "Sign-in cookie"). The access token lives in
 * this module's memory only: never localStorage, never a cookie a script can read. The refresh
 * token is in an HttpOnly cookie the gateway sets on `/api/auth/cookie`, which this code never
 * sees: it only asks the gateway to spend it. Every call goes to the public partner API.
 */

export interface Tokens {
  accessToken: string;
  expiresIn: number;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly retryAfter?: number,
    /** The API's field problems of a `400` (`[{ field, message }]`). */
    readonly details: readonly { field?: string; message: string }[] = [],
  ) {
    super(message);
  }
}

/** Sent on every cookie route: a page of another site cannot send it (no CORS preflight is granted). */
const DASHBOARD_HEADERS = { 'X-Requested-By': 'dashboard' };
/** Refresh a minute before the access token lapses. */
const REFRESH_EARLY_SECONDS = 60;

let accessToken: string | null = null;
let refreshTimer: ReturnType<typeof setTimeout> | undefined;
let refreshing: Promise<boolean> | null = null;
const listeners = new Set<(signedIn: boolean) => void>();

export function onSessionChange(listener: (signedIn: boolean) => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

function setTokens(tokens: Tokens | null) {
  accessToken = tokens?.accessToken ?? null;
  clearTimeout(refreshTimer);
  if (tokens) {
    const inMs = Math.max(5, tokens.expiresIn - REFRESH_EARLY_SECONDS) * 1000;
    refreshTimer = setTimeout(() => void refresh(), inMs);
  }
  for (const listener of listeners) listener(tokens !== null);
}

async function errorOf(response: Response): Promise<ApiError> {
  let code = 'HTTP_ERROR';
  let message = response.statusText;
  let retryAfter: number | undefined;
  let details: { field?: string; message: string }[] = [];
  try {
    const body = (await response.json()) as {
      error?: { code?: string; message?: string; retryAfter?: number; details?: unknown };
    };
    code = body.error?.code ?? code;
    message = body.error?.message ?? message;
    // A 429's wait is in `details.retryAfter` (docs/api.md, "Rate limits").
    retryAfter =
      body.error?.retryAfter ?? (body.error?.details as { retryAfter?: number } | undefined)?.retryAfter;
    if (Array.isArray(body.error?.details)) details = body.error.details;
  } catch {
    // Not the API's JSON: keep the status text.
  }
  return new ApiError(response.status, code, message, retryAfter, details);
}

async function post(path: string, body?: unknown): Promise<Response> {
  return fetch(path, {
    method: 'POST',
    credentials: 'same-origin',
    headers:
      body === undefined ? DASHBOARD_HEADERS : { ...DASHBOARD_HEADERS, 'Content-Type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

export async function signIn(email: string, password: string): Promise<void> {
  const response = await post('/api/auth/cookie/login', { email, password });
  if (!response.ok) throw await errorOf(response);
  setTokens(((await response.json()) as { data: Tokens }).data);
}

/**
 * Spends the cookie's refresh token for a new access token (silently: on load, before the access
 * token lapses, and after a 401). Concurrent callers share one refresh: a refresh token works
 * once, and a second spend of it would revoke the session.
 */
export function refresh(): Promise<boolean> {
  refreshing ??= (async () => {
    try {
      const response = await post('/api/auth/cookie/refresh');
      if (!response.ok) {
        setTokens(null);
        return false;
      }
      setTokens(((await response.json()) as { data: Tokens }).data);
      return true;
    } catch {
      return false;
    } finally {
      refreshing = null;
    }
  })();
  return refreshing;
}

export async function signOut(): Promise<void> {
  try {
    await post('/api/auth/cookie/logout');
  } finally {
    setTokens(null);
  }
}

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/**
 * A call to the partner API with the user's bearer token (a body is sent as JSON). A 401 (the
 * token lapsed, the session was revoked, the user deactivated) is retried once after a refresh:
 * a 401 means nothing was done, so a write may be sent again. If the refresh fails too the user
 * is signed out, whatever the call.
 */
export async function api<T>(path: string, method: Method = 'GET', body?: unknown): Promise<T> {
  const send = () =>
    fetch(`/api${path}`, {
      method,
      credentials: 'omit',
      headers: {
        ...(accessToken ? { Authorization: `Bearer ${accessToken}` } : {}),
        ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  let response = await send();
  if (response.status === 401 && (await refresh())) response = await send();
  if (response.status === 401) setTokens(null);
  if (!response.ok) throw await errorOf(response);
  return (await response.json()) as T;
}

/**
 * Redeems an invitation (the link an administrator passed on: docs/dashboard.md, "Invitations")
 * and signs the new user in with the password just set. Whoever was signed in in this browser
 * is signed out first, so their session does not linger behind the new one.
 */
export async function acceptInvitation(token: string, password: string): Promise<void> {
  const response = await fetch('/api/auth/accept-invitation', {
    method: 'POST',
    credentials: 'omit',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ token, password }),
  });
  if (!response.ok) throw await errorOf(response);
  const { data } = (await response.json()) as { data: { user: { email: string } } };
  if (accessToken) await signOut();
  await signIn(data.user.email, password);
}

/** Fetched without a token: public documents (the signing keys). */
export async function publicJson<T>(path: string): Promise<T> {
  const response = await fetch(`/api${path}`, { credentials: 'omit' });
  if (!response.ok) throw await errorOf(response);
  return (await response.json()) as T;
}
