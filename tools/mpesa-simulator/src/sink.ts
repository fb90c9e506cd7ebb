import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One POST a callback sink received. */
export interface ReceivedCallback {
  /** Path and query string, e.g. `/stk?token=abc`. */
  path: string;
  /** The parsed JSON body (null when it was not JSON). */
  body: unknown;
  receivedAt: string;
}

export type CallbackPredicate = (callback: ReceivedCallback) => boolean;

export interface CallbackSink {
  /** `http://127.0.0.1:PORT`; POST to any path under it. */
  readonly url: string;
  /** Every POST, in arrival order. */
  readonly received: ReceivedCallback[];
  /** The first callback (already received or to come) that matches. */
  waitFor(predicate: CallbackPredicate, timeoutMs?: number): Promise<ReceivedCallback>;
  /** All matching callbacks, once there are at least `n`. */
  waitForCount(n: number, predicate?: CallbackPredicate, timeoutMs?: number): Promise<ReceivedCallback[]>;
  /** Stops listening and rejects pending waits. */
  close(): Promise<void>;
}

/**
 * A merchant's callback endpoint for tests: records every POST (answering 200 with Daraja's
 * customary `{ ResultCode: 0, ResultDesc: "Accepted" }`) and lets a test wait for one.
 */
export async function startCallbackSink(
  options: { port?: number; host?: string } = {},
): Promise<CallbackSink> {
  const { port = 0, host = '127.0.0.1' } = options;
  const received: ReceivedCallback[] = [];
  const waiters = new Set<{ check(): void; fail(error: Error): void }>();

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.method === 'POST') {
        let body: unknown = null;
        try {
          body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        } catch {
          body = null;
        }
        received.push({ path: req.url ?? '/', body, receivedAt: new Date().toISOString() });
        for (const waiter of [...waiters]) waiter.check();
      }
      const answer = JSON.stringify({ ResultCode: 0, ResultDesc: 'Accepted' });
      res.writeHead(req.method === 'POST' ? 200 : 405, { 'content-type': 'application/json' });
      res.end(answer);
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
  let closed = false;

  function waitUntil<T>(description: string, timeoutMs: number, probe: () => T | undefined): Promise<T> {
    const immediate = probe();
    if (immediate !== undefined) return Promise.resolve(immediate);
    if (closed) return Promise.reject(new Error(`${description}: the callback sink is closed`));
    return new Promise<T>((resolve, reject) => {
      const waiter = {
        check() {
          const value = probe();
          if (value === undefined) return;
          done();
          resolve(value);
        },
        fail(error: Error) {
          done();
          reject(error);
        },
      };
      const timer = setTimeout(() => {
        const paths = received.map((c) => c.path).join(', ') || 'none';
        waiter.fail(new Error(`${description}: nothing matched within ${timeoutMs} ms (received: ${paths})`));
      }, timeoutMs);
      const done = () => {
        clearTimeout(timer);
        waiters.delete(waiter);
      };
      waiters.add(waiter);
    });
  }

  return {
    url: `http://${host}:${actualPort}`,
    received,
    waitFor(predicate, timeoutMs = 10_000) {
      return waitUntil('waitFor', timeoutMs, () => received.find(predicate));
    },
    waitForCount(n, predicate = () => true, timeoutMs = 10_000) {
      return waitUntil(`waitForCount(${n})`, timeoutMs, () => {
        const matching = received.filter(predicate);
        return matching.length >= n ? matching : undefined;
      });
    },
    async close() {
      if (closed) return;
      closed = true;
      for (const waiter of [...waiters]) waiter.fail(new Error('the callback sink was closed'));
      const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await stopped;
    },
  };
}
