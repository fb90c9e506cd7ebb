import { EventEmitter } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type VerifyFailureReason, verifyWebhook } from './verify';

/** Bodies above this are answered 413 and recorded unverified. */
export const MAX_BODY_BYTES = 1024 * 1024;
/** Past this much, an oversized request is cut off instead of drained. */
const MAX_DRAIN_BYTES = 16 * MAX_BODY_BYTES;

export type ReceiveFailureReason = VerifyFailureReason | 'no-secret' | 'body-too-large';

/** One POST as the receiver saw it. */
export interface ReceivedDelivery {
  /** Request path, query string included (`/hooks`). */
  path: string;
  headers: Record<string, string | string[] | undefined>;
  /** The body as UTF-8 text (empty when it was too large). */
  rawBody: string;
  /** The parsed JSON body, or null when it is not JSON (parsed even when unverified, for inspection). */
  body: unknown;
  /** `x-service-delivery` as sent (unsigned: compare `verified`). */
  deliveryId: string | null;
  /** `x-service-event` as sent. */
  event: string | null;
  verified: boolean;
  reason?: ReceiveFailureReason;
  /** A verified copy of a delivery id that an earlier verified copy already had. */
  duplicate: boolean;
  /** ISO 8601 time the body was complete. */
  receivedAt: string;
  /** The status answered, once answered; null while delayed or hanging. */
  responseStatus: number | null;
}

export interface Behaviour {
  /** Default: 200 when verified (duplicates too), 413 when too large, else 401. */
  status?: number;
  /** Answer after this many milliseconds. */
  delayMs?: number;
  /** Never answer (until `close()`). */
  hang?: boolean;
  /** Response body; default a small JSON acknowledgement. */
  body?: string;
}

export type BehaviourFn = (delivery: ReceivedDelivery) => Behaviour | undefined;
export type DeliveryPredicate = (delivery: ReceivedDelivery) => boolean;

export interface WebhookReceiverOptions {
  /** Default 0: a free port. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** Signing secret; without one every delivery is recorded unverified (`no-secret`) and answered 401. */
  secret?: string;
  /** Initial behaviour (see `setBehaviour`). */
  respond?: BehaviourFn;
}

export interface WebhookReceiver {
  /** `http://HOST:PORT/hooks`; POSTs to any path are accepted. */
  readonly url: string;
  readonly port: number;
  /** Every POST, in arrival order. */
  readonly received: ReceivedDelivery[];
  /** Verified first copies only. */
  verified(): ReceivedDelivery[];
  /**
   * The secret deliveries are verified with; with `path` (e.g. `/hooks/org-b`), only deliveries
   * to that path, so that several organizations, each with its own secret, can point at one
   * receiver. A path without a secret of its own uses the default one.
   */
  setSecret(secret: string | undefined, path?: string): void;
  /** How to answer the next deliveries; `undefined` restores the default. */
  setBehaviour(fn: BehaviourFn | undefined): void;
  /** The first recorded delivery (already recorded or to come) that matches. */
  waitFor(predicate: DeliveryPredicate, timeoutMs?: number): Promise<ReceivedDelivery>;
  /** All matching deliveries, once there are at least `n` (default predicate: every delivery). */
  waitForCount(n: number, predicate?: DeliveryPredicate, timeoutMs?: number): Promise<ReceivedDelivery[]>;
  /** Called for each delivery as it is recorded; returns an unsubscribe function. */
  onDelivery(listener: (delivery: ReceivedDelivery) => void): () => void;
  /** Called when the secret changes (through `setSecret` or `PUT /_secret`); never given the secret. */
  onSecretChange(listener: (secretSet: boolean) => void): () => void;
  /** Stops listening, drops open connections (hanging requests included) and rejects pending waits. */
  close(): Promise<void>;
}

interface Waiter {
  check(): boolean;
  fail(error: Error): void;
}

function first(value: string | string[] | undefined): string | null {
  if (Array.isArray(value)) return value[0] ?? null;
  return value ?? null;
}

/** A path deliveries can be sent to: absolute, no query, not one of the receiver's own. */
function isPath(value: unknown): value is string {
  return typeof value === 'string' && /^\/[^?#\s]*$/.test(value) && !value.startsWith('/_');
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

function urlHost(host: string): string {
  if (host === '0.0.0.0' || host === '::' || host === '') return '127.0.0.1';
  return host.includes(':') ? `[${host}]` : host;
}

function summarise(delivery: ReceivedDelivery): string {
  const state = delivery.verified ? (delivery.duplicate ? 'duplicate' : 'verified') : delivery.reason;
  return `${delivery.event ?? '-'} ${delivery.deliveryId ?? '-'} ${state}`;
}

/** Reads at most `limit` bytes; beyond that drains (up to MAX_DRAIN_BYTES) and reports `tooLarge`. */
function readBody(req: IncomingMessage, limit: number): Promise<{ body: Buffer; tooLarge: boolean }> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_DRAIN_BYTES) {
        req.destroy();
        return;
      }
      if (size <= limit) chunks.push(chunk);
    });
    req.on('end', () => resolve({ body: Buffer.concat(chunks), tooLarge: size > limit }));
    req.on('error', reject);
    req.on('close', () => {
      if (!req.complete) reject(new Error('request aborted'));
    });
  });
}

function sendJson(res: ServerResponse, status: number, payload: unknown): void {
  const text = JSON.stringify(payload);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/**
 * A local HTTP endpoint that records, verifies and de-duplicates platform webhooks, for
 * tests (simulated slow, failing or dead partners) and for developers (`npx webhook-receiver`).
 */
export async function startWebhookReceiver(options: WebhookReceiverOptions = {}): Promise<WebhookReceiver> {
  const { port = 0, host = '127.0.0.1' } = options;
  let defaultSecret = options.secret;
  /** Secrets of their own, by path (`PUT /_secret { secret, path }`). */
  const pathSecrets = new Map<string, string>();
  const secretFor = (pathname: string) => pathSecrets.get(pathname) ?? defaultSecret;
  let behaviour = options.respond;
  const received: ReceivedDelivery[] = [];
  const seen = new Set<string>();
  const waiters = new Set<Waiter>();
  const timers = new Set<NodeJS.Timeout>();
  const events = new EventEmitter();
  let closed = false;

  function record(delivery: ReceivedDelivery): void {
    received.push(delivery);
    events.emit('delivery', delivery);
    for (const waiter of [...waiters]) waiter.check();
  }

  function answer(res: ServerResponse, delivery: ReceivedDelivery): void {
    const defaultStatus = delivery.verified ? 200 : delivery.reason === 'body-too-large' ? 413 : 401;
    let chosen: Behaviour;
    try {
      chosen = behaviour?.(delivery) ?? {};
    } catch (error) {
      chosen = { status: 500, body: `behaviour threw: ${(error as Error).message}` };
    }
    if (chosen.hang) return;
    const status = chosen.status ?? defaultStatus;
    const send = () => {
      if (res.destroyed) return;
      delivery.responseStatus = status;
      const headers: Record<string, string> = {};
      let text = chosen.body;
      if (text === undefined) {
        text = JSON.stringify(
          delivery.verified ? { received: true, duplicate: delivery.duplicate } : { error: delivery.reason },
        );
      }
      headers['content-type'] = parseJson(text) === null ? 'text/plain; charset=utf-8' : 'application/json';
      if (delivery.reason === 'body-too-large') headers.connection = 'close';
      res.writeHead(status, headers);
      res.end(text);
    };
    if (chosen.delayMs !== undefined && chosen.delayMs > 0) {
      const timer = setTimeout(() => {
        timers.delete(timer);
        send();
      }, chosen.delayMs);
      timers.add(timer);
    } else {
      send();
    }
  }

  async function receive(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
    const { body: raw, tooLarge } = await readBody(req, MAX_BODY_BYTES);
    const rawBody = tooLarge ? '' : raw.toString('utf8');
    const delivery: ReceivedDelivery = {
      path,
      headers: { ...req.headers },
      rawBody,
      body: tooLarge ? null : parseJson(rawBody),
      deliveryId: first(req.headers['x-service-delivery']),
      event: first(req.headers['x-service-event']),
      verified: false,
      duplicate: false,
      receivedAt: new Date().toISOString(),
      responseStatus: null,
    };
    const secret = secretFor(path.split('?')[0] as string);
    if (tooLarge) {
      delivery.reason = 'body-too-large';
    } else if (!secret) {
      delivery.reason = 'no-secret';
    } else {
      const result = verifyWebhook({ rawBody: raw, headers: req.headers, secret });
      if (result.ok) {
        delivery.verified = true;
        delivery.duplicate = seen.has(result.deliveryId);
        seen.add(result.deliveryId);
      } else {
        delivery.reason = result.reason;
      }
    }
    record(delivery);
    answer(res, delivery);
  }

  async function setSecretFromRequest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const { body, tooLarge } = await readBody(req, 64 * 1024);
    const parsed = tooLarge ? null : parseJson(body.toString('utf8'));
    const { secret: value, path } = (parsed ?? {}) as { secret?: unknown; path?: unknown };
    if (typeof value !== 'string' || value === '' || (path !== undefined && !isPath(path))) {
      sendJson(res, 400, {
        error: 'expected a JSON body { "secret": "<non-empty string>", "path"?: "/<path deliveries go to>" }',
      });
      return;
    }
    setSecret(value, path);
    sendJson(res, 200, path === undefined ? { secretSet: true } : { secretSet: true, path });
  }

  function setSecret(value: string | undefined, path?: string): void {
    const given = value === '' ? undefined : value;
    if (path === undefined) defaultSecret = given;
    else if (given === undefined) pathSecrets.delete(path);
    else pathSecrets.set(path, given);
    events.emit('secret', given !== undefined);
  }

  const server = createServer((req, res) => {
    const path = req.url ?? '/';
    const pathname = path.split('?')[0];
    const handle = async () => {
      if (req.method === 'POST') return receive(req, res, path);
      if (req.method === 'GET' && pathname === '/_received') {
        const deliveries = received
          .slice()
          .reverse()
          .map(({ rawBody: _omitted, ...rest }) => rest);
        return sendJson(res, 200, { deliveries });
      }
      if (req.method === 'PUT' && pathname === '/_secret') return setSecretFromRequest(req, res);
      req.resume();
      if (pathname === '/_received' || pathname === '/_secret') {
        return sendJson(res, 405, { error: 'method not allowed' });
      }
      return sendJson(res, 404, {
        error:
          'POST webhooks to any path; GET /_received lists them; PUT /_secret { "secret": "...", "path"?: "/hooks/..." }',
      });
    };
    handle().catch(() => {
      // The client went away mid-body: nothing to answer.
      if (!res.headersSent && !res.destroyed) sendJson(res, 400, { error: 'bad request' });
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const actualPort = (server.address() as AddressInfo).port;

  function waitUntil<T>(description: string, timeoutMs: number, probe: () => T | undefined): Promise<T> {
    const immediate = probe();
    if (immediate !== undefined) return Promise.resolve(immediate);
    if (closed) return Promise.reject(new Error(`${description}: the receiver is closed`));
    return new Promise<T>((resolve, reject) => {
      const waiter: Waiter = {
        check() {
          const value = probe();
          if (value === undefined) return false;
          done();
          resolve(value);
          return true;
        },
        fail(error) {
          done();
          reject(error);
        },
      };
      const timer = setTimeout(() => {
        const summary = received.slice(-5).map(summarise).join('; ') || 'none';
        waiter.fail(
          new Error(
            `${description}: nothing matched within ${timeoutMs} ms (${received.length} received; latest: ${summary})`,
          ),
        );
      }, timeoutMs);
      const done = () => {
        clearTimeout(timer);
        waiters.delete(waiter);
      };
      waiters.add(waiter);
    });
  }

  return {
    url: `http://${urlHost(host)}:${actualPort}/hooks`,
    port: actualPort,
    received,
    verified: () => received.filter((d) => d.verified && !d.duplicate),
    setSecret,
    setBehaviour(fn) {
      behaviour = fn;
    },
    waitFor(predicate, timeoutMs = 10_000) {
      return waitUntil('waitFor', timeoutMs, () => received.find(predicate));
    },
    waitForCount(n, predicate = () => true, timeoutMs = 10_000) {
      return waitUntil(`waitForCount(${n})`, timeoutMs, () => {
        const matching = received.filter(predicate);
        return matching.length >= n ? matching : undefined;
      });
    },
    onDelivery(listener) {
      events.on('delivery', listener);
      return () => events.off('delivery', listener);
    },
    onSecretChange(listener) {
      events.on('secret', listener);
      return () => events.off('secret', listener);
    },
    async close() {
      if (closed) return;
      closed = true;
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      for (const waiter of [...waiters]) waiter.fail(new Error('the webhook receiver was closed'));
      events.removeAllListeners();
      const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await stopped;
    },
  };
}
