import type { IncomingHttpHeaders } from 'node:http';
import { type Dispatcher, Pool } from 'undici';

export interface UpstreamReply {
  status: number;
  /** Response header, lower-case name; several values joined as fetch joins them. */
  header(name: string): string | undefined;
  /** The body's bytes as they came (forwarded answers pass them on as they are). */
  body: Buffer;
  /** The body as UTF-8 text. */
  readonly text: string;
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
 * An undici dispatch handler (its native interface, so undici wraps nothing) that gathers the
 * answer's bytes: `pool.request` made a readable stream per answer and read it back out into a
 * string, which a relayed answer has no use for. undici 8 hands the headers over already parsed
 * (lower-case names, a repeated header as a list), as its `request` gives them.
 */
function collect(
  resolve: (reply: UpstreamReply) => void,
  reject: (err: Error) => void,
): Dispatcher.DispatchHandler {
  let status = 0;
  let headers: IncomingHttpHeaders = {};
  const chunks: Buffer[] = [];
  return {
    // Optional in undici's types, but its Request refuses a handler without it.
    onRequestStart() {},
    onResponseStart(_controller, statusCode, responseHeaders) {
      status = statusCode;
      headers = responseHeaders;
    },
    onResponseData(_controller, chunk) {
      chunks.push(chunk);
    },
    onResponseEnd() {
      const body = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
      resolve({
        status,
        header: (name) => {
          // Own properties only: the parsed headers are a plain object, with a prototype.
          const value = Object.hasOwn(headers, name) ? headers[name] : undefined;
          return Array.isArray(value) ? value.join(', ') : value;
        },
        body,
        get text() {
          return body.toString('utf8');
        },
      });
    },
    onResponseError(_controller, err) {
      reject(err);
    },
  };
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
    request(base, path, init) {
      const { pool, prefix } = targetOf(base);
      return new Promise<UpstreamReply>((resolve, reject) => {
        pool.dispatch(
          {
            path: `${prefix}${path}`,
            method: init.method as 'GET',
            headers: init.headers,
            body: init.body,
            headersTimeout: init.timeoutMs,
            bodyTimeout: init.timeoutMs,
          },
          collect(resolve, reject),
        );
      });
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
