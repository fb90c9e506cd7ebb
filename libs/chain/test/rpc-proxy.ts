import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A JSON-RPC HTTP front for a real chain node, for tests: forwards every request to
 * `upstream` (which a test may repoint at a restarted node), counts requests, and can leave
 * chosen methods unanswered to make calls time out. With the node gone it drops the
 * connection, as an unreachable node would.
 */
export interface RpcProxy {
  readonly url: string;
  /** Requests received so far (answered or not). */
  readonly requests: number;
  upstream: string;
  /** Requests whose JSON-RPC method this accepts get no answer at all. */
  hang: ((method: string) => boolean) | undefined;
  close(): Promise<void>;
}

export async function startRpcProxy(upstream: string): Promise<RpcProxy> {
  let requests = 0;
  const server = http.createServer((req, res) => {
    requests++;
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      let method = '';
      try {
        method = String((JSON.parse(body.toString()) as { method?: unknown }).method ?? '');
      } catch {}
      if (proxy.hang?.(method)) return;
      fetch(proxy.upstream, { method: 'POST', headers: { 'content-type': 'application/json' }, body })
        .then(async (up) => {
          res.writeHead(up.status, { 'content-type': 'application/json' });
          res.end(await up.text());
        })
        .catch(() => res.destroy());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const proxy: RpcProxy = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    get requests() {
      return requests;
    },
    upstream,
    hang: undefined,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return proxy;
}
