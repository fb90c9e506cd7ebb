import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { verifyWebhook, type WebhookEvent } from '@parametric/sdk';

/**
 * The partner's webhook endpoint of this example: a plain node:http server that takes the POSTs
 * of one path, checks each with the SDK's verifyWebhook (docs/webhooks.md, "Verifying a
 * delivery"), answers 204 to a good one and 401 to a bad one, and keeps the verified events,
 * de-duplicated on their delivery id (deliveries come at least once).
 */
export interface Receiver {
  /** `http://HOST:PORT/PATH` as bound (port 0 picks a free one). */
  url: string;
  /**
   * The signing secret, once `PUT /organizations/me/webhook` answered it. Until then deliveries
   * wait for it (an event queued before the URL was set may arrive before the answer is read).
   */
  setSecret(secret: string): void;
  /** The first verified event `matches` accepts, waiting at most `timeoutMs`; a refused delivery fails the wait. */
  waitFor(what: string, matches: (event: WebhookEvent) => boolean, timeoutMs: number): Promise<WebhookEvent>;
  close(): Promise<void>;
}

/** How long a delivery waits for the secret before it is answered 503 (and retried by the platform). */
const SECRET_WAIT_MS = 10_000;

export async function startReceiver(options: {
  host: string;
  port: number;
  path: string;
  /** Called with each new verified event, as it arrives. */
  onEvent?: (event: WebhookEvent) => void;
}): Promise<Receiver> {
  let giveSecret: (secret: string) => void = () => {};
  const secret = new Promise<string>((resolve) => {
    giveSecret = resolve;
  });
  const events: WebhookEvent[] = [];
  const seen = new Set<string>();
  const refusals: string[] = [];
  const listeners = new Set<() => void>();
  const changed = () => {
    for (const listener of listeners) listener();
  };

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method !== 'POST' || new URL(req.url ?? '/', 'http://receiver').pathname !== options.path) {
      res.writeHead(404).end();
      return;
    }
    // The signature covers the bytes as sent: verify those, never JSON parsed and serialised again.
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const rawBody = Buffer.concat(chunks);
    let timer: NodeJS.Timeout | undefined;
    const known = await Promise.race([
      secret,
      new Promise<undefined>((resolve) => {
        timer = setTimeout(() => resolve(undefined), SECRET_WAIT_MS);
      }),
    ]);
    clearTimeout(timer);
    if (known === undefined) {
      res.writeHead(503).end('no webhook secret yet');
      return;
    }
    const result = verifyWebhook(rawBody, req.headers, known, { toleranceSeconds: 300 });
    if (!result.ok) {
      refusals.push(`${req.headers['x-service-event'] ?? 'a delivery'}: ${result.reason}`);
      res.writeHead(401).end(result.reason);
      changed();
      return;
    }
    if (!seen.has(result.deliveryId)) {
      seen.add(result.deliveryId);
      events.push(result.body);
      options.onEvent?.(result.body);
    }
    res.writeHead(204).end();
    changed();
  }

  const server = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const { address, port } = server.address() as AddressInfo;
  const host = address.includes(':') ? `[${address}]` : address;

  return {
    url: `http://${host}:${port}${options.path}`,
    setSecret: giveSecret,
    waitFor(what, matches, timeoutMs) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const refused = refusals[0];
          const found = events.find(matches);
          if (refused === undefined && found === undefined) return;
          listeners.delete(check);
          clearTimeout(timer);
          if (refused !== undefined) reject(new Error(`a delivery failed verification (${refused})`));
          else resolve(found as WebhookEvent);
        };
        const timer = setTimeout(() => {
          listeners.delete(check);
          reject(new Error(`no ${what} within ${timeoutMs / 1000} s`));
        }, timeoutMs);
        listeners.add(check);
        check();
      });
    },
    close() {
      return new Promise((resolve) => {
        // Answers already under way are finished first (the platform records each as delivered
        // when it reads the 204); a connection still open after a moment is cut.
        const cut = setTimeout(() => server.closeAllConnections(), 2_000);
        server.close(() => {
          clearTimeout(cut);
          resolve();
        });
        server.closeIdleConnections();
      });
    },
  };
}
