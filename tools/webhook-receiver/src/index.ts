export { WEBHOOK_RECEIVER_BIN } from './bin-path';
export {
  type Behaviour,
  type BehaviourFn,
  type DeliveryPredicate,
  MAX_BODY_BYTES,
  type ReceivedDelivery,
  type ReceiveFailureReason,
  startWebhookReceiver,
  type WebhookReceiver,
  type WebhookReceiverOptions,
} from './receiver';
export {
  signWebhook,
  type VerifyFailureReason,
  type VerifyOptions,
  type VerifyResult,
  verifyWebhook,
  type WebhookEnvelope,
} from './verify';
