import { createHmac } from 'node:crypto';

export const USER_AGENT = 'Service-Webhooks/1.0';

/**
 * The five headers of a delivery (docs/webhooks.md, "What a delivery looks like"). The signature
 * is lowercase hex HMAC-SHA256(secret, `${timestamp}.${rawBody}`) over exactly the bytes sent.
 */
export function deliveryHeaders(args: {
  secret: string;
  body: string;
  event: string;
  deliveryId: string;
  now: number;
}) {
  const timestamp = String(Math.floor(args.now / 1000));
  const signature = createHmac('sha256', args.secret).update(`${timestamp}.${args.body}`).digest('hex');
  return {
    'content-type': 'application/json',
    'user-agent': USER_AGENT,
    'x-service-event': args.event,
    'x-service-delivery': args.deliveryId,
    'x-service-timestamp': timestamp,
    'x-service-signature': signature,
  };
}
