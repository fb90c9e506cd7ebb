import { Pool } from 'undici';

export interface UpstreamReply {
  status: number;
  /** Response header, lower-case name; several values joined as fetch joins them. */
  header(name: string): string | undefined;
  text: string;
}

export interface Upstreams {
  /**
   * One request to a service, over a kept-alive connection of that service's pool. Rejects when
   * the service refuses the connection, sends no headers within `timeoutMs`, or lets the body
   * stall that long.
   */
  request(
    base: string,
    path: string,
    init: { method: string; headers: Record<string, string | string[]>; body?: string; timeoutMs: number },
  ): Promise<UpstreamReply>;
  /** Closes every pool: waits for requests in flight up to `graceMs`, then cuts them. */
  close(graceMs?: number): Promise<void>;
}

/**
 * Keep-alive connection pools to the services, one per origin (undici): a connection per
 * request, as `fetch` without a shared agent makes, costs a TCP handshake and several times
 * the CPU of the request itself on the gateway's hot path.
 */
export function upstreams(options: { connections: number }): Upstreams {
  const pools = new Map<string, Pool>();
  /** `http://host:port/prefix` → the pool for the origin and the prefix to put before paths. */
  const targets = new Map<string, { pool: Pool; prefix: string }>();
  const targetOf = (base: string) => {
    let target = targets.get(base);
    if (!target) {
      const url = new URL(base);
      let pool = pools.get(url.origin);
      if (!pool) {
        pool = new Pool(url.origin, { connections: options.connections });
        pools.set(url.origin, pool);
      }
      target = { pool, prefix: url.pathname.replace(/\/+$/, '') };
      targets.set(base, target);
    }
    return target;
  };
  return {
    async request(base, path, init) {
      const { pool, prefix } = targetOf(base);
      const reply = await pool.request({
        path: `${prefix}${path}`,
        method: init.method as 'GET',
        headers: init.headers,
        body: init.body,
        headersTimeout: init.timeoutMs,
        bodyTimeout: init.timeoutMs,
      });
      const text = await reply.body.text();
      const { headers } = reply;
      return {
        status: reply.statusCode,
        header: (name) => {
          const value = headers[name];
          return Array.isArray(value) ? value.join(', ') : value;
        },
        text,
      };
    },
    async close(graceMs = 5_000) {
      await Promise.all(
        [...pools.values()].map(async (pool) => {
          let timer: NodeJS.Timeout | undefined;
          const late = new Promise<'late'>((resolve) => {
            timer = setTimeout(() => resolve('late'), graceMs);
          });
          const closed = await Promise.race([pool.close().then(() => 'closed' as const), late]);
          clearTimeout(timer);
          if (closed === 'late') await pool.destroy();
        }),
      );
      pools.clear();
      targets.clear();
    },
  };
}
