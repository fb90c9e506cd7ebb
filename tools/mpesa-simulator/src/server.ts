import type { EventEmitter } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { b2c } from './api/b2c';
import { generateToken, requireToken } from './api/oauth';
import { stkPush } from './api/stk-push';
import { stkQuery } from './api/stk-query';
import { transactionStatus } from './api/transaction-status';
import type { Context } from './context';
import { DEFAULT_FAULT, errorBody, Failure, fail } from './failure';
import type { Fault, RecordedRequest } from './types';

const MAX_BODY_BYTES = 1024 * 1024;

/** Daraja's routes and their methods; each has its handler module under api/. */
const ROUTES: Record<string, 'GET' | 'POST'> = {
  '/oauth/v1/generate': 'GET',
  '/mpesa/stkpush/v1/processrequest': 'POST',
  '/mpesa/stkpushquery/v1/query': 'POST',
  '/mpesa/b2c/v3/paymentrequest': 'POST',
  '/mpesa/transactionstatus/v1/query': 'POST',
};

const HANDLERS: Record<string, (ctx: Context, body: Record<string, unknown>) => unknown> = {
  '/mpesa/stkpush/v1/processrequest': stkPush,
  '/mpesa/stkpushquery/v1/query': stkQuery,
  '/mpesa/b2c/v3/paymentrequest': b2c,
  '/mpesa/transactionstatus/v1/query': transactionStatus,
};

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
    req.on('close', () => {
      if (!req.complete) reject(new Error('request aborted'));
    });
  });
}

function parseBody(raw: string): unknown {
  if (raw === '') return null;
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}

function sendJson(res: ServerResponse, status: number, payload: unknown): void {
  const body = JSON.stringify(payload);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

/** Daraja's gateway: more requests than allowed in the last second are refused. */
function spikeArrest(ctx: Context): void {
  const { maxRequestsPerSecond, now } = ctx.settings;
  if (!maxRequestsPerSecond) return;
  const { acceptedAt } = ctx.state;
  const t = now().getTime();
  while (acceptedAt.length > 0 && (acceptedAt[0] as number) <= t - 1000) acceptedAt.shift();
  if (acceptedAt.length >= maxRequestsPerSecond) {
    fail({ status: 500, errorCode: '500.003.02', errorMessage: 'Error Occurred: Spike Arrest Violation' });
  }
  acceptedAt.push(t);
}

/** One Daraja request: a pending fault, else the route's checks and its handler. */
function daraja(
  ctx: Context,
  events: EventEmitter,
  req: IncomingMessage,
  res: ServerResponse,
  entry: RecordedRequest,
  raw: string,
) {
  const url = new URL(req.url ?? '/', 'http://simulator');
  const route = url.pathname.replace(/\/+$/, '');
  const answer = (status: number, payload: unknown) => {
    entry.status = status;
    sendJson(res, status, payload);
    events.emit('request', entry);
  };
  const fault = ctx.state.faults.shift();
  if (fault) {
    if (fault.hang) return events.emit('request', entry);
    const f = { ...DEFAULT_FAULT, ...fault };
    return answer(f.status, errorBody(ctx.state, f));
  }
  try {
    const method = ROUTES[route];
    if (!method) fail({ status: 404, errorCode: '404.001.01', errorMessage: 'Resource not found' });
    if (req.method !== method) {
      fail({ status: 405, errorCode: '405.001', errorMessage: `${req.method} Method Not Allowed` });
    }
    spikeArrest(ctx);
    if (route === '/oauth/v1/generate') return answer(200, generateToken(ctx, req, url.searchParams));
    requireToken(ctx, req);
    const body = entry.body;
    if (raw === '' || typeof body !== 'object' || body === null || Array.isArray(body)) {
      fail({ status: 400, errorCode: '400.002.05', errorMessage: 'Invalid Request Payload' });
    }
    const handler = HANDLERS[route] as (typeof HANDLERS)[string];
    return answer(200, handler(ctx, body as Record<string, unknown>));
  } catch (error) {
    if (error instanceof Failure) return answer(error.failure.status, errorBody(ctx.state, error.failure));
    throw error;
  }
}

/** What the `/_…` control routes act through (the simulator's handle). */
export interface Controls {
  reset(): void;
  failNext(count: number, fault?: Fault): void;
}

function control(
  ctx: Context,
  controls: Controls,
  req: IncomingMessage,
  res: ServerResponse,
  pathname: string,
  raw: string,
) {
  const { state } = ctx;
  switch (`${req.method} ${pathname}`) {
    case 'GET /_requests':
      return sendJson(res, 200, { requests: state.requests });
    case 'DELETE /_requests':
      controls.reset();
      return sendJson(res, 200, { reset: true });
    case 'GET /_transactions':
      return sendJson(res, 200, { transactions: state.transactions });
    case 'GET /_callbacks':
      return sendJson(res, 200, { callbacks: state.callbacks });
    case 'POST /_faults': {
      const body = parseBody(raw) as { count?: unknown } & Fault;
      const count = typeof body?.count === 'number' ? body.count : 1;
      if (!Number.isInteger(count) || count < 1)
        return sendJson(res, 400, { error: 'count: a positive integer' });
      const { count: _count, ...fault } = body;
      controls.failNext(count, fault);
      return sendJson(res, 200, { pending: state.faults.length });
    }
    default:
      return sendJson(res, 404, {
        error: 'simulator routes: GET|DELETE /_requests, GET /_transactions, GET /_callbacks, POST /_faults',
      });
  }
}

/**
 * The HTTP server: Daraja's routes (each request recorded first) and the simulator's own `/_…`
 * control routes (not recorded). Emits `request` on `events` once a request is answered (or
 * left hanging by a fault).
 */
export function createSimulatorServer(ctx: Context, events: EventEmitter, controls: Controls): Server {
  return createServer((req, res) => {
    const path = req.url ?? '/';
    const pathname = path.split('?')[0] as string;
    const run = async () => {
      const raw = await readBody(req);
      if (pathname.startsWith('/_')) return control(ctx, controls, req, res, pathname, raw);
      const entry: RecordedRequest = {
        seq: ++ctx.state.seq,
        method: req.method ?? 'GET',
        path,
        headers: { ...req.headers },
        body: parseBody(raw),
        time: ctx.settings.now().toISOString(),
        status: null,
      };
      ctx.state.requests.push(entry);
      return daraja(ctx, events, req, res, entry, raw);
    };
    run().catch(() => {
      if (!res.headersSent && !res.destroyed) {
        sendJson(res, 500, errorBody(ctx.state, DEFAULT_FAULT));
      }
    });
  });
}
