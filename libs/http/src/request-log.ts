import { randomUUID } from 'node:crypto';
import { type Logger, TRACE_BOUND } from '@parametric/logger';
import { exporting, parseTraceparent, runInTrace, startSpan, type TraceContext } from '@parametric/tracing';
import type { Express, NextFunction, Request, RequestHandler, Response } from 'express';
import { deadlineSeconds, startDeadline } from './deadline';

declare module 'node:http' {
  interface IncomingMessage {
    /** The request id: the caller's `x-request-id` when well-formed, else a UUID. */
    id: string;
    /** A logger whose lines carry `reqId`, `traceId` and `spanId`; made on first use. */
    log: Logger;
    /** This process's span of the request: its trace id (from `traceparent`, or new) and span id. */
    trace: TraceContext;
  }
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;
/** Probes hit every pod every few seconds; their successes are logged at debug, not info. */
const HEALTH_PATHS = new Set(['/healthz', '/readyz']);

/**
 * What every request gets first, in one middleware (each express layer a request walks costs
 * it a dispatch, and these ran as three): its metrics start, its id, its trace, its deadline
 * (deadline.ts) and one log line when it completes, with one `finish` and one `close` listener
 * for all of them.
 *
 * Request ids and the log line at the cost of nothing a request does not use: pino-http made
 * two child loggers per request (with their redaction and serialisers) before the handler ran,
 * whether anything logged or not: about a fifth of the gateway's CPU at its hot path. Here
 * `req.log` is made only when a handler logs, and the completion line is built only when its
 * level is enabled. The line keeps pino-http's shape (`reqId`, `req`, `res`, `responseTime`,
 * "request completed"/"request aborted"/"request errored").
 */
export function requestStart(
  app: Express,
  logger: Logger,
  options: {
    deadlineMs: number;
    /** Rewrites a path before it is logged, e.g. to hide a secret path segment. */
    loggedPath?: (path: string) => string;
    /** Request metrics (`@parametric/metrics`' `metrics.http`), started before anything else. */
    metrics?: RequestHandler;
  },
) {
  const loggedPath = options.loggedPath ?? ((path: string) => path);
  const { deadlineMs, metrics } = options;
  const seconds = deadlineSeconds(deadlineMs);
  Object.defineProperty(app.request, 'log', {
    configurable: true,
    get(this: Request): Logger {
      const { traceId, spanId } = this.trace;
      const child = logger.child({ reqId: this.id, traceId, spanId });
      // The mixin adds nothing to these lines: the child binds the fields already (and still has
      // them on a line logged after the request's async context is gone).
      (child as Logger & { [TRACE_BOUND]?: boolean })[TRACE_BOUND] = true;
      Object.defineProperty(this, 'log', { value: child, writable: true, configurable: true });
      return child;
    },
    set(this: Request, value: Logger) {
      Object.defineProperty(this, 'log', { value, writable: true, configurable: true });
    },
  });

  return (req: Request, res: Response, next: NextFunction): void => {
    // The metrics middleware only notes the start and listens for the finish: it goes on at once.
    metrics?.(req, res, noop);
    const incoming = req.headers['x-request-id'];
    const id = typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    req.id = id;
    res.setHeader('x-request-id', id);
    // A caller's well-formed `traceparent` is continued (its trace id, our own span id); else a
    // trace starts here. Only logs and exported spans use it: never identity, limits or keys.
    const span = startSpan(`${req.method}`, 'server', {
      parent: parseTraceparent(req.headers.traceparent),
      reqId: id,
      attributes: exporting() ? { 'http.request.method': req.method } : undefined,
    });
    req.trace = span.context;
    const startedAt = Date.now();
    const deadline = startDeadline(req, res, deadlineMs, seconds);
    const done = (): void => {
      clearTimeout(deadline);
      res.removeListener('finish', done);
      res.removeListener('close', done);
      logCompletion(logger, req, res, Date.now() - startedAt, loggedPath);
      if (exporting()) {
        span.setAttribute('http.response.status_code', res.statusCode);
        span.setAttribute('url.path', loggedPath(req.path ?? ''));
      }
      span.end(res.statusCode >= 500 ? `status ${res.statusCode}` : undefined);
    };
    res.on('finish', done);
    res.on('close', done);
    // Everything the request runs, and every line any logger writes meanwhile, is in its trace.
    runInTrace(span.context, next);
  };
}

const noop = () => {};

function logCompletion(
  logger: Logger,
  req: Request,
  res: Response,
  responseTime: number,
  loggedPath: (path: string) => string,
): void {
  const status = res.statusCode;
  const url = req.originalUrl ?? req.url ?? '';
  const at = url.indexOf('?');
  const path = at === -1 ? url : url.slice(0, at);
  const completed = res.writableEnded && !req.readableAborted;
  const level =
    status >= 500
      ? 'error'
      : status >= 400 || !completed
        ? 'warn'
        : HEALTH_PATHS.has(path)
          ? 'debug'
          : 'info';
  if (!logger.isLevelEnabled(level)) return;
  const line = {
    reqId: req.id,
    traceId: req.trace.traceId,
    spanId: req.trace.spanId,
    req: requestView(req, at === -1 ? loggedPath(path) : `${loggedPath(path)}?[query redacted]`),
    res: { statusCode: status, headers: pickHeaders(res.getHeader.bind(res), LOGGED_RESPONSE_HEADERS) },
    responseTime,
  };
  if (status >= 500) {
    logger[level]({ ...line, err: new Error(`failed with status code ${status}`) }, 'request errored');
  } else {
    logger[level](line, completed ? 'request completed' : 'request aborted');
  }
}

/**
 * The headers a completion line carries: what says who called, what was sent and what came back.
 * Named, not all but the secret ones: a header that authenticates is never written whatever a
 * caller calls it, and the line does not carry the signed context of an internal hop.
 */
const LOGGED_REQUEST_HEADERS = [
  'host',
  'user-agent',
  'content-type',
  'content-length',
  'accept',
  'idempotency-key',
  'x-forwarded-for',
] as const;
const LOGGED_RESPONSE_HEADERS = [
  'content-type',
  'content-length',
  'location',
  'retry-after',
  'idempotent-replayed',
  'x-ratelimit-remaining',
] as const;

function pickHeaders(
  header: (name: string) => string | string[] | number | undefined,
  names: readonly string[],
): Record<string, string | string[] | number> {
  const picked: Record<string, string | string[] | number> = {};
  for (const name of names) {
    const value = header(name);
    if (value !== undefined) picked[name] = value;
  }
  return picked;
}

/**
 * What is logged of a request. Query strings stay out of the log: a partner may put a key in
 * one (`?api_key=`); so do its headers but those named above.
 */
function requestView(req: Request, url: string) {
  const { headers } = req;
  return {
    id: req.id,
    method: req.method,
    url,
    headers: pickHeaders((name) => headers[name], LOGGED_REQUEST_HEADERS),
    remoteAddress: req.socket?.remoteAddress,
    remotePort: req.socket?.remotePort,
  };
}
