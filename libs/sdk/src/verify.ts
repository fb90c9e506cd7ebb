import {
  verifyWebhook as verifyDelivery,
  type VerifyResult as WebhookVerifyResult,
} from '@parametric/webhook-receiver';

/**
 * `verifyDetermination(record, jwks)` checks a signed determination against the platform's JWKS
 * (`GET /.well-known/jwks.json`): libs/determination-verify's own, as its README describes.
 */
export {
  type VerifyResult as DeterminationVerifyResult,
  verifyDetermination,
} from '@parametric/determination-verify';
export type { WebhookVerifyResult };

export interface VerifyWebhookOptions {
  /** How far the signing time may be from now, either way (default 300 s, docs/webhooks.md). */
  toleranceSeconds?: number;
  /** The current time in milliseconds (default `Date.now()`). */
  now?: number;
}

/**
 * Checks a webhook delivery as docs/webhooks.md ("Verifying a delivery") says: HMAC-SHA256 over
 * `{x-service-timestamp}.{raw body}` compared in constant time, the timestamp within the
 * tolerance, and the body parsed only then. It is the documented verifier of
 * tools/webhook-receiver (the code docs/webhooks.md shows, word for word), so the SDK, the page and
 * the local receiver cannot disagree. Never throws for a bad delivery: `{ ok: false, reason }`.
 */
export function verifyWebhook(
  rawBody: Buffer | Uint8Array | string,
  headers: Record<string, string | string[] | undefined> | Headers,
  secret: string,
  options: VerifyWebhookOptions = {},
): WebhookVerifyResult {
  const bytes =
    typeof rawBody === 'string'
      ? Buffer.from(rawBody, 'utf8')
      : Buffer.from(rawBody.buffer, rawBody.byteOffset, rawBody.byteLength);
  const plain = headers instanceof Headers ? Object.fromEntries(headers.entries()) : headers;
  return verifyDelivery({ rawBody: bytes, headers: plain, secret, ...options });
}
