import { createHmac } from 'node:crypto';
import {
  verifyWebhook as sdkVerifyWebhook,
  type WebhookEvent,
  type WebhookFailureReason,
  type WebhookVerifyResult,
} from '@parametric/sdk';

// The check itself is @parametric/sdk's verifyWebhook (libs/sdk/src/verify.ts), the one partners
// get; the receiver only adapts its call shape. docs/webhooks.md shows partners a self-contained
// copy, and test/doc-example.test.ts holds that copy to the SDK's verdicts case by case.

export type VerifyFailureReason = WebhookFailureReason;
export type WebhookEnvelope = WebhookEvent;
export type VerifyResult = WebhookVerifyResult;

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

export function verifyWebhook(options: VerifyOptions): VerifyResult {
  const { rawBody, headers, secret, ...timing } = options;
  return sdkVerifyWebhook(rawBody, headers, secret, timing);
}
