import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * `verifyDetermination(record, jwks, { acceptSandbox }?)` checks a signed determination against the
 * platform's JWKS (`GET /.well-known/jwks.json`): libs/determination-verify's own, as its README
 * describes.
 */
export {
  type VerifyOptions as DeterminationVerifyOptions,
  type VerifyResult as DeterminationVerifyResult,
  verifyDetermination,
} from '@parametric/determination-verify';

/** Why a delivery was refused; the same reasons as the receiver docs/webhooks.md shows. */
export type WebhookFailureReason =
  | 'missing-headers'
  | 'bad-timestamp'
  | 'stale-timestamp'
  | 'bad-signature'
  | 'bad-json'
  | 'id-mismatch';

/** A delivery's body (docs/webhooks.md, "What a delivery looks like"). */
export interface WebhookEvent {
  id: string;
  event: string;
  createdAt: string;
  data: Record<string, unknown>;
}

export type WebhookVerifyResult =
  | { ok: true; deliveryId: string; event: string; timestamp: number; body: WebhookEvent }
  | { ok: false; reason: WebhookFailureReason };

export interface VerifyWebhookOptions {
  /** How far the signing time may be from now, either way (default 300 s, docs/webhooks.md). */
  toleranceSeconds?: number;
  /** The current time in milliseconds (default `Date.now()`). */
  now?: number;
}

type HeaderBag = Record<string, string | string[] | undefined> | Headers;

/** One header, whatever the case of its name; sent more than once, it counts as missing. */
function header(headers: HeaderBag, name: string): string | undefined {
  if (headers instanceof Headers) {
    // Headers joins a repeated header with ", "; a timestamp, signature or delivery id has no comma.
    const value = headers.get(name);
    return value === null || value.includes(',') ? undefined : value;
  }
  const values = Object.entries(headers)
    .filter(([key]) => key.toLowerCase() === name)
    .flatMap(([, value]) => (value === undefined ? [] : Array.isArray(value) ? value : [value]));
  return values.length === 1 ? values[0] : undefined;
}

/**
 * Checks a webhook delivery as docs/webhooks.md ("Verifying a delivery") says: lowercase hex
 * HMAC-SHA256, keyed with the secret, over `{x-service-timestamp}.{raw body}`, compared in constant
 * time; the timestamp within `toleranceSeconds` of now; the body parsed only then, its `id` equal
 * to `x-service-delivery`. `rawBody` is the bytes as received (not JSON parsed and serialised
 * again). A bad delivery is `{ ok: false, reason }`, never an exception; an empty secret throws.
 */
export function verifyWebhook(
  rawBody: Uint8Array | string,
  headers: HeaderBag,
  secret: string,
  options: VerifyWebhookOptions = {},
): WebhookVerifyResult {
  if (secret === '') throw new TypeError('verifyWebhook: the webhook secret is empty');
  const { toleranceSeconds = 300, now = Date.now() } = options;
  const bytes = typeof rawBody === 'string' ? Buffer.from(rawBody, 'utf8') : rawBody;

  const deliveryId = header(headers, 'x-service-delivery');
  const signedAt = header(headers, 'x-service-timestamp');
  const signature = header(headers, 'x-service-signature');
  if (!deliveryId || !signedAt || !signature) return { ok: false, reason: 'missing-headers' };
  if (!/^\d{1,12}$/.test(signedAt)) return { ok: false, reason: 'bad-timestamp' };
  const timestamp = Number(signedAt);
  if (Math.abs(Math.floor(now / 1000) - timestamp) > toleranceSeconds)
    return { ok: false, reason: 'stale-timestamp' };

  // The header exactly as sent is what was signed; timingSafeEqual needs equal lengths.
  const mac = createHmac('sha256', Buffer.from(secret, 'utf8')).update(`${signedAt}.`, 'utf8').update(bytes);
  const expected = Buffer.from(mac.digest('hex'), 'utf8');
  const given = Buffer.from(signature, 'utf8');
  if (given.length !== expected.length || !timingSafeEqual(given, expected))
    return { ok: false, reason: 'bad-signature' };

  let body: unknown;
  try {
    body = JSON.parse(Buffer.from(bytes).toString('utf8'));
  } catch {
    return { ok: false, reason: 'bad-json' };
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    return { ok: false, reason: 'bad-json' };
  const event = body as WebhookEvent;
  if (typeof event.event !== 'string') return { ok: false, reason: 'bad-json' };
  // Only the timestamp and the body are signed: de-duplicate on x-service-delivery only when it is body.id.
  if (event.id !== deliveryId) return { ok: false, reason: 'id-mismatch' };
  return { ok: true, deliveryId, event: event.event, timestamp, body: event };
}
