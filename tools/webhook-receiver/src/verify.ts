import { createHmac, timingSafeEqual } from 'node:crypto';

// Everything below the imports is shown to partners, word for word (less `export`), in
// docs/webhooks.md; test/doc-example.test.ts fails when the two differ. Edit both together.

export type VerifyFailureReason =
  | 'missing-headers'
  | 'bad-timestamp'
  | 'stale-timestamp'
  | 'bad-signature'
  | 'bad-json'
  | 'id-mismatch';

export interface WebhookEnvelope {
  id: string;
  event: string;
  createdAt: string;
  data: Record<string, unknown>;
}

export type VerifyResult =
  | { ok: true; deliveryId: string; event: string; timestamp: number; body: WebhookEnvelope }
  | { ok: false; reason: VerifyFailureReason };

export interface VerifyOptions {
  /** The request body exactly as received: bytes, not a string and not parsed JSON. */
  rawBody: Buffer;
  /** Request headers, for example `req.headers` of node:http. */
  headers: Record<string, string | string[] | undefined>;
  /** The webhook signing secret, exactly as the platform returned it. */
  secret: string;
  /** The current time in milliseconds (default `Date.now()`). */
  now?: number;
  /** How far the signing time may be from now, either way (default 300 s). */
  toleranceSeconds?: number;
}

/** Lowercase hex HMAC-SHA256, keyed with the secret's UTF-8 bytes, of `${timestamp}.${rawBody}`. */
export function signWebhook(secret: string, timestamp: string | number, rawBody: Buffer | string): string {
  return createHmac('sha256', Buffer.from(secret, 'utf8'))
    .update(`${timestamp}.`, 'utf8')
    .update(typeof rawBody === 'string' ? Buffer.from(rawBody, 'utf8') : rawBody)
    .digest('hex');
}

/** One header value, whatever the case of its name; a header sent more than once counts as missing. */
function headerValue(headers: VerifyOptions['headers'], name: string): string | undefined {
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() !== name) continue;
    if (Array.isArray(value)) return value.length === 1 ? value[0] : undefined;
    return value;
  }
  return undefined;
}

export function verifyWebhook(options: VerifyOptions): VerifyResult {
  const { rawBody, headers, secret, now = Date.now(), toleranceSeconds = 300 } = options;
  if (secret === '') throw new TypeError('verifyWebhook: the webhook secret is empty');

  const deliveryId = headerValue(headers, 'x-service-delivery');
  const timestampHeader = headerValue(headers, 'x-service-timestamp');
  const signature = headerValue(headers, 'x-service-signature');
  if (!deliveryId || !timestampHeader || !signature) return { ok: false, reason: 'missing-headers' };

  // Unix seconds, digits only. The signed text uses the header exactly as sent.
  if (!/^\d{1,12}$/.test(timestampHeader)) return { ok: false, reason: 'bad-timestamp' };
  const timestamp = Number(timestampHeader);
  if (Math.abs(Math.floor(now / 1000) - timestamp) > toleranceSeconds) {
    return { ok: false, reason: 'stale-timestamp' };
  }

  // Compare the hex texts in constant time; timingSafeEqual throws on different lengths.
  const expected = Buffer.from(signWebhook(secret, timestampHeader, rawBody), 'utf8');
  const given = Buffer.from(signature, 'utf8');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    return { ok: false, reason: 'bad-signature' };
  }

  // Parse only after the signature holds, and trust the signed body over unsigned headers.
  let body: WebhookEnvelope;
  try {
    body = JSON.parse(rawBody.toString('utf8'));
  } catch {
    return { ok: false, reason: 'bad-json' };
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body) || typeof body.event !== 'string') {
    return { ok: false, reason: 'bad-json' };
  }
  // x-service-delivery is not signed: de-duplicate on it only when it equals the signed body.id.
  if (body.id !== deliveryId) return { ok: false, reason: 'id-mismatch' };

  return { ok: true, deliveryId, event: body.event, timestamp, body };
}
