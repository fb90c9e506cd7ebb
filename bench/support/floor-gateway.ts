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
import express, { type Response } from 'express';
import { Redis } from 'ioredis';
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { Pool } from 'undici';
import { duties, dutyContext, hmacHex, signHop } from './floor-duties';

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
 * code looks like (bench/support/floor-duties.ts), and the API key authenticated by its peppered
 * HMAC (keys are stored hashed, services/gateway/src/credentials/secrets.ts) looked up in a map,
 * as a warm principal cache would. A forwarded read carries the signed hop, its request id and
 * its trace to the service (`FLOOR_HOP_SECRET`).
 */
const withDuties = process.env.FLOOR_DUTIES === '1';
if (withDuties) {
  const pepper = required('FLOOR_API_KEY_PEPPER');
  const keyHashes = new Map([[hmacHex(pepper, required('FLOOR_API_KEY')), organizationId]]);
  app.use(
    '/api',
    duties('duties', (req, res) => {
      const key = req.headers['x-api-key'];
      if (typeof key === 'string' && keyHashes.get(hmacHex(pepper, key)) === organizationId) return true;
      res.status(401).json({ error: { code: 'UNAUTHORIZED' } });
      return false;
    }),
  );
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
  const hopSecret = withDuties ? required('FLOOR_HOP_SECRET') : '';
  app.get('/api/policies/:id', async (req, res) => {
    if (!(await spendPoint(res))) return;
    const context = dutyContext();
    const reply = await pool.request({
      path: `/policies/${encodeURIComponent(req.params.id)}`,
      method: 'GET',
      // The caller's organization: the one thing the service must be told, signed with the duties.
      headers: context
        ? signHop(hopSecret, organizationId, context)
        : { 'x-organization-id': organizationId },
    });
    const text = await reply.body.text();
    res.status(reply.statusCode).type('application/json').send(text);
  });
}

const server = app.listen(Number(required('PORT')), '127.0.0.1');
process.on('SIGTERM', () => server.close(() => redis.quit().finally(() => process.exit(0))));
