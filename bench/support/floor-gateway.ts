/**
 * The design floor of the gateway's hot paths (issue 24, target 3): what the cheapest gateway
 * that still does the work the design requires would cost, as its own process like the gateway.
 * bench/gateway.ts and bench/policy.ts load it in the same run as the platform and bare express.
 *
 * - `GET /api/organizations/me` (when `FLOOR_ME_BODY` is set): one partner rate-limit point,
 *   then the caller's organization as JSON. The gateway answers this read from its cache of
 *   resolved callers plus one Redis round trip (services/gateway/src/auth/principal.ts), so the
 *   floor is express, that round trip, and the body.
 * - `GET /api/policies/:id` (when `FLOOR_POLICY_URL` is set): the same point, then the read
 *   forwarded over a pooled keep-alive connection to bench/support/floor-policy.ts, its answer
 *   relayed as it came, as services/gateway/src/forwarding/routes.ts relays the policy service's.
 *
 * Authentication is not part of the floor: the caller is `FLOOR_ORGANIZATION_ID`, as a cached
 * principal would be. What the platform does beyond this (request ids, logs, metrics, the signed
 * context, deadlines) is exactly the overhead the comparison is there to show.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { createHmac, randomFillSync, randomUUID } from 'node:crypto';
import express, { type NextFunction, type Request, type Response } from 'express';
import { Redis } from 'ioredis';
import pino from 'pino';
import { Histogram, Registry } from 'prom-client';
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { Pool } from 'undici';

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} must be set`);
  return value;
}

const organizationId = required('FLOOR_ORGANIZATION_ID');
// The gateway's partner limit exactly (services/gateway/src/gateway.ts, `limits.partner`, and
// services/gateway/src/rate-limit/limits.ts): the same prefix, name, points and window, so each
// request consumes from the very Redis key the gateway's requests consume from
// (`<prefix>:rl:partner:org:<id>`, services/gateway/src/auth/principal.ts `organizationLimitKey`).
const points = Number(process.env.RATE_LIMIT_POINTS ?? 100);
const durationSeconds = Number(process.env.RATE_LIMIT_WINDOW_SECONDS ?? 60);
// Auto-pipelined, as libs/redis/src/fail-fast.ts makes the gateway's client: concurrent requests'
// points go out in one write, which is most of what a Redis round trip costs on loopback.
const redis = new Redis(required('REDIS_URL'), { enableAutoPipelining: true });
const limiter = new RateLimiterRedis({
  storeClient: redis,
  keyPrefix: `${process.env.REDIS_PREFIX ?? 'platform'}:rl:partner`,
  points,
  duration: durationSeconds,
});
const limitKey = `org:${organizationId}`;

/**
 * One point, and the `X-RateLimit-*` headers every partner answer carries
 * (services/gateway/src/rate-limit/limiter.ts); false after answering 429 when it is spent.
 */
async function spendPoint(res: Response): Promise<boolean> {
  let state: RateLimiterRes;
  let over = false;
  try {
    state = await limiter.consume(limitKey);
  } catch (err) {
    if (!(err instanceof RateLimiterRes)) throw err;
    state = err;
    over = true;
  }
  res.setHeader('X-RateLimit-Limit', String(points));
  res.setHeader('X-RateLimit-Remaining', String(Math.max(0, state.remainingPoints)));
  res.setHeader('X-RateLimit-Reset', String(Math.ceil((Date.now() + state.msBeforeNext) / 1000)));
  if (over) res.status(429).json({ error: { code: 'RATE_LIMIT_EXCEEDED' } });
  return !over;
}

const app = express();
// As libs/http/src/app.ts sets up every platform app: a floor doing work the platform does not
// (hashing each body for an ETag) would flatter the platform.
app.disable('x-powered-by');
app.set('etag', false);

/**
 * `FLOOR_DUTIES=1`: the floor plus what the platform must do for every request whatever its
 * code looks like (docs/performance.md, "The duty floor"), each the cheapest way express allows:
 * a request id (the caller's well-formed `x-request-id`, else a UUID, echoed), a trace context
 * (`traceparent` continued or started, held in an AsyncLocalStorage for the request's logs), a
 * deadline timer, the request-duration histogram, and the API key authenticated by its peppered
 * HMAC (keys are stored hashed, services/gateway/src/credentials/secrets.ts) looked up in a map,
 * as a warm principal cache would. With `FLOOR_ACCESS_LINE=1` (the platform's services at `info`,
 * bench/support/platform.ts `BENCH_LOG_LEVEL`), one completion line per request through pino to
 * stdout: the request id, trace ids, method, path, status and time; no headers, so nothing in it
 * needs hiding (the platform's line carries a named few, libs/http/src/request-log.ts).
 */
if (process.env.FLOOR_DUTIES === '1') {
  const pepper = required('FLOOR_API_KEY_PEPPER');
  const keyHashes = new Map([[hmac(pepper, required('FLOOR_API_KEY')), organizationId]]);
  const trace = new AsyncLocalStorage<{ traceId: string; spanId: string; reqId: string }>();
  const histogram = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request duration',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [new Registry()],
  });
  const accessLog =
    process.env.FLOOR_ACCESS_LINE === '1'
      ? pino(
          { base: { service: 'duties' }, timestamp: pino.stdTimeFunctions.isoTime },
          pino.destination({ dest: 1, sync: true }),
        )
      : undefined;
  const REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;
  const TRACEPARENT = /^00-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}$/;
  app.use('/api', (req: Request, res: Response, next: NextFunction) => {
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
    const key = req.headers['x-api-key'];
    if (typeof key !== 'string' || keyHashes.get(hmac(pepper, key)) !== organizationId) {
      res.status(401).json({ error: { code: 'UNAUTHORIZED' } });
      return;
    }
    trace.run(context, next);
  });
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

function hmac(pepper: string, value: string): string {
  return createHmac('sha256', pepper).update(value).digest('hex');
}

app.get('/readyz', async (_req, res) => {
  res.status((await redis.ping()) === 'PONG' ? 200 : 503).end();
});

const meBody = process.env.FLOOR_ME_BODY;
if (meBody) {
  // Held as an object and written out per request, as the gateway writes its view of the cached
  // organization per request; the bench checks the bytes equal the gateway's before measuring.
  const organization: unknown = JSON.parse(meBody);
  app.get('/api/organizations/me', async (_req, res) => {
    if (await spendPoint(res)) res.json(organization);
  });
}

const policyUrl = process.env.FLOOR_POLICY_URL;
if (policyUrl) {
  // One kept-alive pool to the service, as services/gateway/src/forwarding/upstreams.ts keeps
  // (its default size, services/gateway/src/config.ts FORWARD_CONNECTIONS).
  const pool = new Pool(policyUrl, { connections: 128 });
  app.get('/api/policies/:id', async (req, res) => {
    if (!(await spendPoint(res))) return;
    const reply = await pool.request({
      path: `/policies/${encodeURIComponent(req.params.id)}`,
      method: 'GET',
      // The caller's organization: the one thing the service must be told (the platform signs it).
      headers: { 'x-organization-id': organizationId },
    });
    const text = await reply.body.text();
    res.status(reply.statusCode).type('application/json').send(text);
  });
}

const server = app.listen(Number(required('PORT')), '127.0.0.1');
process.on('SIGTERM', () => server.close(() => redis.quit().finally(() => process.exit(0))));
