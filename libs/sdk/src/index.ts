export { type ClientOptions, createClient, type PartnerClient } from './client';
export { IDEMPOTENCY_KEY_OPERATIONS } from './idempotent';
export { isRetryable, RETRIED_STATUSES, type RetryOptions, retryAfterMs, retryingFetch } from './retry';
export type { components, operations, paths, webhooks } from './schema';
export {
  type DeterminationVerifyOptions,
  type DeterminationVerifyResult,
  type VerifyWebhookOptions,
  verifyDetermination,
  verifyWebhook,
  type WebhookEvent,
  type WebhookFailureReason,
  type WebhookVerifyResult,
} from './verify';
