import { pingMongo } from '@parametric/mongo';
import { Router } from 'express';
import type { Redis } from 'ioredis';
import type { Connection } from 'mongoose';

async function pingRedis(redis: Redis, timeoutMs = 2_000): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      redis.ping().then((r) => r === 'PONG'),
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

/** `/healthz`: the process is up. `/readyz`: it can serve (MongoDB and Redis answer). */
export function healthRoutes(deps: { connection: Connection; redis: Redis }): Router {
  const router = Router();
  router.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  router.get('/readyz', async (_req, res) => {
    const [mongo, redis] = await Promise.all([pingMongo(deps.connection), pingRedis(deps.redis)]);
    const ready = mongo && redis;
    res.status(ready ? 200 : 503).json({ status: ready ? 'ready' : 'not ready', checks: { mongo, redis } });
  });
  return router;
}
