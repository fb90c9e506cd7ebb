import { createServer, type Server } from 'node:http';
import net, { type AddressInfo } from 'node:net';
import {
  type Express,
  type NextFunction,
  type Request,
  type RequestHandler,
  type Response,
  Router,
} from 'express';
import { messageClasses } from './message-shapes';

/** A dependency check: true when the dependency answers (bounded by `healthRoutes`). */
export type HealthCheck = () => Promise<boolean>;

/**
 * `/healthz`: the process is up. `/readyz`: every check of `checks` (what the pod cannot serve
 * without) answers true within `timeoutMs` (a hung or failing check counts as down), else 503
 * with which one failed. The `degraded` checks are dependencies the pod serves without (a
 * fallback covers them): one that is down is listed under `degraded` in the body, and the pod
 * stays ready, so losing a shared dependency does not take every replica out of its Service.
 */
export function healthRoutes(
  checks: Record<string, HealthCheck>,
  options: { timeoutMs?: number; degraded?: Record<string, HealthCheck> } = {},
) {
  const { timeoutMs = 2_000, degraded = {} } = options;
  const router = Router();
  router.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  router.get('/readyz', async (_req, res) => {
    const [status, optional] = await Promise.all([
      runChecks(checks, timeoutMs),
      runChecks(degraded, timeoutMs),
    ]);
    const ready = Object.values(status).every(Boolean);
    const down = Object.keys(optional).filter((name) => !optional[name]);
    res.status(ready ? 200 : 503).json({
      status: ready ? 'ready' : 'not ready',
      checks: status,
      ...(Object.keys(degraded).length > 0 ? { degraded: down } : {}),
    });
  });
  // Every other request passes by without entering the router: leaving an express router costs
  // a turn of the event loop (setImmediate), on every request of every service. The stack stays
  // visible to the tests that list mounted routes.
  return Object.assign(
    (req: Request, res: Response, next: NextFunction) =>
      HEALTH_PATH.test(req.path) ? router(req, res, next) : next(),
    { stack: router.stack },
  );
}

const HEALTH_PATH = /^\/(healthz|readyz)\/?$/i;

/**
 * `GET /metrics`: the service's Prometheus exposition (`metrics.handler` of `@parametric/metrics`).
 * Like `/healthz` and `/readyz` it needs no signed context: the internal ports are reachable only
 * inside the cluster, where Prometheus scrapes them. Other requests pass by without entering a
 * router, as with `healthRoutes`.
 */
export function metricsRoutes(handler: RequestHandler) {
  const router = Router();
  router.get('/metrics', handler);
  return Object.assign(
    (req: Request, res: Response, next: NextFunction) =>
      METRICS_PATH.test(req.path) ? router(req, res, next) : next(),
    { stack: router.stack },
  );
}

const METRICS_PATH = /^\/metrics\/?$/i;

/** Every check's answer, each within `timeoutMs`, by name. */
export async function runChecks(
  checks: Record<string, HealthCheck>,
  timeoutMs: number,
): Promise<Record<string, boolean>> {
  const names = Object.keys(checks);
  const results = await Promise.all(
    names.map((name) => withinTime((checks[name] as HealthCheck)(), timeoutMs)),
  );
  return Object.fromEntries(names.map((name, i) => [name, results[i] as boolean]));
}

async function withinTime(check: Promise<boolean>, timeoutMs: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      check,
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(false), timeoutMs);
      }),
    ]);
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}

export interface Listening {
  server: Server;
  /** `http://host:port` (loopback when bound to all interfaces). */
  url: string;
  /** Stops accepting connections and waits for the open ones to finish. */
  close(): Promise<void>;
}

/**
 * After SIGTERM, how long a connection with nothing in flight stays open: a request the client
 * has already sent may still be in the socket's buffer, unparsed, and closing the connection
 * then would reset it unanswered.
 */
const DRAIN_GRACE_MS = 500;

/** Listens and resolves once bound (port 0 picks a free one). */
export async function listen(app: Express, port: number, host: string): Promise<Listening> {
  const server = createServer(messageClasses(app), app);
  server.listen(port, host);
  await new Promise((resolve, reject) => server.once('listening', resolve).once('error', reject));
  const bound = (server.address() as AddressInfo).port;
  let draining = false;
  // While draining, every answer closes its connection, so keep-alive clients move elsewhere.
  server.prependListener('request', (_req, res) => {
    if (draining) res.shouldKeepAlive = false;
  });
  return {
    server,
    url: `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${bound}`,
    close: () =>
      new Promise<void>((resolve) => {
        draining = true;
        let sweeper: NodeJS.Timeout | undefined;
        // net's close, not http's: http's also drops every connection without a request in
        // progress at once, including one whose request is still unread in its buffer.
        net.Server.prototype.close.call(server, () => {
          clearInterval(sweeper);
          resolve();
        });
        // From a timer, never directly: after the process was held off the CPU, timers run before
        // the event loop's poll phase has read the sockets that became readable meanwhile, so a
        // request already in a buffer would look idle. `setImmediate` runs after that poll phase.
        const closeIdle = () => setImmediate(() => server.closeIdleConnections());
        const grace = setTimeout(() => {
          closeIdle();
          sweeper = setInterval(closeIdle, 100);
          sweeper.unref();
        }, DRAIN_GRACE_MS);
        grace.unref();
      }),
  };
}
