import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * How the simulator answers `GET /v2/exchange-rates`:
 * - `ok`: Coinbase's shape with the configured rate;
 * - `down`: `500` with Coinbase's error shape;
 * - `hang`: never answers (until the client gives up or `close()`);
 * - `garbage`: `200` with an HTML page instead of JSON (a proxy or captive portal in the way).
 */
export const RATE_BEHAVIOURS = ['ok', 'down', 'hang', 'garbage'] as const;
export type RateBehaviour = (typeof RATE_BEHAVIOURS)[number];

/** The path Coinbase serves exchange rates on; `?currency=USDC` picks the base currency. */
export const EXCHANGE_RATES_PATH = '/v2/exchange-rates';

/**
 * Our extension, not Coinbase's: when a rate is given an `asOf` time, answers carry it in this
 * header (ISO 8601), so a client can measure the rate's age from the source's clock.
 */
export const RATE_TIMESTAMP_HEADER = 'x-rate-timestamp';

export const DEFAULT_KES_PER_USDC = '129.45';

/** Longest rate string the control API takes (anything, so tests can serve "0", "-1" or "abc"). */
const MAX_RATE_LENGTH = 64;
const MAX_CONTROL_BODY_BYTES = 64 * 1024;

export interface RateSimulatorOptions {
  /** Default 0: a free port. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** KES per 1 USDC as a decimal string; default "129.45". Served as given, valid or not. */
  kesPerUsdc?: string;
  /** Called with one line for each change made through the control API (the CLI prints them). */
  log?: (line: string) => void;
}

export interface RateSimulator {
  /** Base URL (`http://127.0.0.1:PORT`); rates are at `${url}/v2/exchange-rates?currency=USDC`. */
  readonly url: string;
  readonly port: number;
  /**
   * The KES rate to serve from now on (served verbatim: "0", "-3" or "abc" test a client's
   * checks). With `asOf`, answers carry it in `X-Rate-Timestamp`; `null` or absent sends none,
   * as Coinbase sends none.
   */
  setRate(kesPerUsdc: string, options?: { asOf?: Date | null }): void;
  setBehaviour(mode: RateBehaviour): void;
  /** How many requests reached `GET /v2/exchange-rates` (answered or not). */
  requests(): number;
  /** Stops listening and drops open connections, hanging requests included. */
  close(): Promise<void>;
}

function urlHost(host: string): string {
  if (host === '0.0.0.0' || host === '::' || host === '') return '127.0.0.1';
  return host.includes(':') ? `[${host}]` : host;
}

function sendJson(
  res: ServerResponse,
  status: number,
  payload: unknown,
  headers: Record<string, string> = {},
) {
  const text = JSON.stringify(payload);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': String(Buffer.byteLength(text)),
    ...headers,
  });
  res.end(text);
}

/** Coinbase's error body: `{ errors: [{ id, message }] }`. */
function sendError(res: ServerResponse, status: number, id: string, message: string) {
  sendJson(res, status, { errors: [{ id, message }] });
}

function readJson(req: IncomingMessage): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_CONTROL_BODY_BYTES) {
        req.destroy();
        reject(new Error('body too large'));
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      } catch {
        resolve(undefined);
      }
    });
    req.on('error', reject);
  });
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * A local stand-in for Coinbase's `GET /v2/exchange-rates?currency=USDC`: answers
 * `{ data: { currency: "USDC", rates: { KES: "129.45", USD: "1", USDC: "1" } } }` with a
 * rate tests (and `npm start`) control, and can be made to fail (`setBehaviour`).
 *
 * Control API: `PUT /_rate { kesPerUsdc, asOf? }`, `PUT /_behaviour { mode }`,
 * `GET /_requests` → `{ count }`.
 */
export async function startRateSimulator(options: RateSimulatorOptions = {}): Promise<RateSimulator> {
  const { port = 0, host = '127.0.0.1', log = () => undefined } = options;
  let kesPerUsdc = options.kesPerUsdc ?? DEFAULT_KES_PER_USDC;
  let asOf: Date | null = null;
  let mode: RateBehaviour = 'ok';
  let count = 0;

  function setRate(rate: string, rateOptions: { asOf?: Date | null } = {}): void {
    if (typeof rate !== 'string' || rate.length === 0 || rate.length > MAX_RATE_LENGTH) {
      throw new TypeError(`kesPerUsdc must be a string of 1 to ${MAX_RATE_LENGTH} characters`);
    }
    const at = rateOptions.asOf ?? null;
    if (at !== null && !(at instanceof Date && Number.isFinite(at.getTime()))) {
      throw new TypeError('asOf must be a valid Date or null');
    }
    kesPerUsdc = rate;
    asOf = at;
  }

  function setBehaviour(next: RateBehaviour): void {
    if (!RATE_BEHAVIOURS.includes(next)) {
      throw new TypeError(`mode must be one of ${RATE_BEHAVIOURS.join(', ')}`);
    }
    mode = next;
  }

  function serveRates(req: IncomingMessage, res: ServerResponse, query: URLSearchParams): void {
    count += 1;
    req.resume();
    if (mode === 'hang') return;
    if (mode === 'down') {
      sendError(res, 500, 'internal_server_error', 'Internal server error');
      return;
    }
    if (mode === 'garbage') {
      const page = '<html><head><title>Gateway</title></head><body>Please sign in</body></html>';
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(page);
      return;
    }
    const currency = (query.get('currency') ?? '').toUpperCase();
    if (currency !== 'USDC') {
      sendError(
        res,
        400,
        'invalid_request',
        `Invalid currency (${currency || 'none'}): the simulator quotes USDC only`,
      );
      return;
    }
    const headers: Record<string, string> = {};
    if (asOf) headers[RATE_TIMESTAMP_HEADER] = asOf.toISOString();
    sendJson(
      res,
      200,
      { data: { currency: 'USDC', rates: { KES: kesPerUsdc, USD: '1', USDC: '1' } } },
      headers,
    );
  }

  async function control(req: IncomingMessage, res: ServerResponse, pathname: string): Promise<void> {
    if (req.method === 'GET' && pathname === '/_requests') {
      req.resume();
      sendJson(res, 200, { count });
      return;
    }
    if (req.method !== 'PUT' || (pathname !== '/_rate' && pathname !== '/_behaviour')) {
      req.resume();
      sendJson(res, 405, { error: 'PUT /_rate, PUT /_behaviour or GET /_requests' });
      return;
    }
    const body = await readJson(req);
    if (pathname === '/_rate') {
      const rate = isObject(body) ? body.kesPerUsdc : undefined;
      const at = isObject(body) ? body.asOf : undefined;
      const when = typeof at === 'string' ? new Date(at) : null;
      if (
        typeof rate !== 'string' ||
        rate.length === 0 ||
        rate.length > MAX_RATE_LENGTH ||
        (at !== undefined && at !== null && typeof at !== 'string') ||
        (when !== null && !Number.isFinite(when.getTime()))
      ) {
        sendJson(res, 400, {
          error: `expected { "kesPerUsdc": "<1 to ${MAX_RATE_LENGTH} characters>", "asOf"?: "<ISO 8601>" | null }`,
        });
        return;
      }
      setRate(rate, { asOf: when });
      log(`rate set: ${rate} KES per USDC${when ? ` as of ${when.toISOString()}` : ''}`);
      sendJson(res, 200, { kesPerUsdc, asOf: asOf ? (asOf as Date).toISOString() : null });
      return;
    }
    const next = isObject(body) ? body.mode : undefined;
    if (typeof next !== 'string' || !RATE_BEHAVIOURS.includes(next as RateBehaviour)) {
      sendJson(res, 400, { error: `expected { "mode": one of ${RATE_BEHAVIOURS.join(', ')} }` });
      return;
    }
    setBehaviour(next as RateBehaviour);
    log(`behaviour set: ${next}`);
    sendJson(res, 200, { mode });
  }

  const server = createServer((req, res) => {
    const parsed = new URL(req.url ?? '/', 'http://simulator.invalid');
    const { pathname } = parsed;
    if (pathname === EXCHANGE_RATES_PATH) {
      if (req.method !== 'GET') {
        req.resume();
        sendError(res, 405, 'method_not_allowed', 'GET only');
        return;
      }
      serveRates(req, res, parsed.searchParams);
      return;
    }
    if (pathname.startsWith('/_')) {
      control(req, res, pathname).catch(() => {
        if (!res.headersSent && !res.destroyed) sendJson(res, 400, { error: 'bad request' });
      });
      return;
    }
    req.resume();
    sendError(res, 404, 'not_found', `Not found; rates are at GET ${EXCHANGE_RATES_PATH}?currency=USDC`);
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const actualPort = (server.address() as AddressInfo).port;
  let closing: Promise<void> | undefined;

  return {
    url: `http://${urlHost(host)}:${actualPort}`,
    port: actualPort,
    setRate,
    setBehaviour,
    requests: () => count,
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
  };
}
