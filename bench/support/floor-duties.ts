/**
 * The per-request duties of the duty floors (docs/performance.md, "The duty floor"): what the
 * platform must do for every request whatever its code looks like, each the cheapest way express
 * allows, for bench/support/floor-gateway.ts and bench/support/floor-policy.ts with
 * `FLOOR_DUTIES=1`. Per request: a request id (the caller's well-formed `x-request-id`, else a
 * UUID, echoed), a trace context (`traceparent` continued or started, held in an
 * AsyncLocalStorage for the request's logs), a deadline timer, the request-duration histogram and,
 * with `FLOOR_ACCESS_LINE=1` (the platform's services at `info`, bench/support/platform.ts
 * `BENCH_LOG_LEVEL`), one completion line through pino to stdout: the request id, trace ids,
 * method, path, status and time; no headers, so nothing in it needs hiding (the platform's line
 * carries a named few, libs/http/src/request-log.ts).
 *
 * Between the two processes of the policy read, the hop's duty: the service must know who the
 * caller is from something only the gateway could have written, fresh enough not to be replayed
 * (libs/http/src/internal-context.ts signs and checks it). Here the least that does it: the
 * organization, the request id and the time, as JSON under an HMAC-SHA256 of it, checked in
 * constant time and for age.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { createHmac, randomFillSync, randomUUID, timingSafeEqual } from 'node:crypto';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import pino from 'pino';
import { Histogram, Registry } from 'prom-client';

export interface DutyContext {
  traceId: string;
  spanId: string;
  reqId: string;
}

const trace = new AsyncLocalStorage<DutyContext>();

/** The context of the request being handled (inside the duties' middleware). */
export function dutyContext(): DutyContext | undefined {
  return trace.getStore();
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;
const TRACEPARENT = /^00-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}$/;

/**
 * The duties' middleware. `admit` is the caller's check (the API key, the signed context): false
 * after it answered the refusal itself.
 */
export function duties(service: string, admit: (req: Request, res: Response) => boolean): RequestHandler {
  const histogram = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request duration',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [new Registry()],
  });
  const accessLog =
    process.env.FLOOR_ACCESS_LINE === '1'
      ? pino(
          { base: { service }, timestamp: pino.stdTimeFunctions.isoTime },
          pino.destination({ dest: 1, sync: true }),
        )
      : undefined;
  return (req: Request, res: Response, next: NextFunction) => {
    const started = performance.now();
    const incoming = req.headers['x-request-id'];
    const reqId = typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    res.setHeader('x-request-id', reqId);
    const parent = TRACEPARENT.exec(String(req.headers.traceparent ?? ''));
    const context = { traceId: parent?.[1] ?? randomHex(16), spanId: randomHex(8), reqId };
    const deadline = setTimeout(() => res.destroy(), 15_000);
    res.on('finish', () => {
      clearTimeout(deadline);
      const seconds = (performance.now() - started) / 1000;
      histogram.observe(
        { method: req.method, route: req.route?.path ?? 'unmatched', status: String(res.statusCode) },
        seconds,
      );
      accessLog?.info(
        {
          reqId,
          traceId: context.traceId,
          spanId: context.spanId,
          method: req.method,
          path: req.path,
          statusCode: res.statusCode,
          responseTime: Math.round(seconds * 1000),
        },
        'request completed',
      );
    });
    if (!admit(req, res)) return;
    trace.run(context, next);
  };
}

// Random ids from a pooled buffer, one `randomFillSync` per 8 KiB, as libs/tracing/src/context.ts
// makes them: one synchronous `randomBytes` per id costs a call into the CSPRNG each time.
const pool = Buffer.alloc(8192);
let offset = pool.length;
function randomHex(bytes: number): string {
  if (offset + bytes > pool.length) {
    randomFillSync(pool);
    offset = 0;
  }
  const hex = pool.toString('hex', offset, offset + bytes);
  offset += bytes;
  return hex;
}

export function hmacHex(secret: string, value: string): string {
  return createHmac('sha256', secret).update(value).digest('hex');
}

/** How long a signed hop is good for, as libs/http/src/internal-context.ts `CONTEXT_MAX_AGE_MS`. */
const HOP_MAX_AGE_MS = 60_000;

/** The hop's headers: the caller's organization, the request id and the time, signed. */
export function signHop(
  secret: string,
  organizationId: string,
  context: DutyContext,
): Record<string, string> {
  const payload = JSON.stringify({ organizationId, requestId: context.reqId, issuedAt: Date.now() });
  return {
    'x-hop': payload,
    'x-hop-signature': hmacHex(secret, payload),
    'x-request-id': context.reqId,
    traceparent: `00-${context.traceId}-${context.spanId}-01`,
  };
}

/** A platform id (organizations, policies): a lower-case UUID. */
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The organization a signed hop acts for, or undefined when its signature, shape or age is wrong. */
export function verifyHop(secret: string, headers: Request['headers']): string | undefined {
  const payload = headers['x-hop'];
  const signature = headers['x-hop-signature'];
  if (typeof payload !== 'string' || typeof signature !== 'string') return undefined;
  const given = Buffer.from(signature, 'hex');
  const expected = Buffer.from(hmacHex(secret, payload), 'hex');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
  const hop = JSON.parse(payload) as { organizationId?: unknown; issuedAt?: unknown };
  if (typeof hop.organizationId !== 'string' || !UUID.test(hop.organizationId)) return undefined;
  if (typeof hop.issuedAt !== 'number' || Math.abs(Date.now() - hop.issuedAt) > HOP_MAX_AGE_MS)
    return undefined;
  return hop.organizationId;
}
