import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { signWebhook } from '../src';

export const SECRET = 'whsec-test-3f9d2c1b7a6e5d4c3b2a19f8e7d6c5b4a3928170f6e5d4c3b2a1908f7e6d5c4';

export interface SignedDelivery {
  id: string;
  event: string;
  rawBody: Buffer;
  headers: Record<string, string>;
}

/** A delivery exactly as the platform sends it (docs/webhooks.md, "What a delivery looks like"). */
export function signedDelivery(
  options: {
    secret?: string;
    id?: string;
    event?: string;
    data?: Record<string, unknown>;
    /** Signing time in ms (default now). */
    now?: number;
    /** Serialise the body differently (the signature covers whatever bytes this gives). */
    serialise?: (body: unknown) => string;
  } = {},
): SignedDelivery {
  const id = options.id ?? randomUUID();
  const event = options.event ?? 'payout.completed';
  const body = {
    id,
    event,
    createdAt: new Date(options.now ?? Date.now()).toISOString(),
    data: options.data ?? {
      payoutId: 'po_1',
      policyId: 'pol_1',
      amountUSDC: '12.50',
      mobileMoneyRef: 'QK7X1',
    },
  };
  const rawBody = Buffer.from((options.serialise ?? JSON.stringify)(body), 'utf8');
  const timestamp = String(Math.floor((options.now ?? Date.now()) / 1000));
  return {
    id,
    event,
    rawBody,
    headers: {
      'content-type': 'application/json',
      'user-agent': 'Service-Webhooks/1.0',
      'x-service-event': event,
      'x-service-delivery': id,
      'x-service-timestamp': timestamp,
      'x-service-signature': signWebhook(options.secret ?? SECRET, timestamp, rawBody),
    },
  };
}

/** Any body (JSON or not), correctly signed as delivery `d1` at `now` (ms): for the checks after the signature. */
export function signedText(text: string, now = Date.now()) {
  const rawBody = Buffer.from(text);
  const timestamp = String(Math.floor(now / 1000));
  const headers = {
    'x-service-delivery': 'd1',
    'x-service-timestamp': timestamp,
    'x-service-signature': signWebhook(SECRET, timestamp, rawBody),
  };
  return { rawBody, headers };
}

export interface HttpAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** One HTTP request on its own connection (no keep-alive agent left open after the test). */
export function request(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: Buffer | string } = {},
): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, {
      method: options.method ?? 'POST',
      headers: options.headers,
      agent: false,
    });
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          body: Buffer.concat(chunks).toString('utf8'),
        }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

export function post(url: string, delivery: { rawBody: Buffer; headers: Record<string, string> }) {
  return request(url, { method: 'POST', headers: delivery.headers, body: delivery.rawBody });
}
