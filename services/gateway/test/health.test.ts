import { startLocalRedis } from '@parametric/local-redis';
import { createLogger } from '@parametric/logger';
import { startGateway } from '../src/gateway';
import { call, testConfig } from './support';

describe('health endpoints', () => {
  it('/healthz answers while the process runs; /readyz reports MongoDB and Redis, and 503 once Redis is gone', async () => {
    const redis = await startLocalRedis({});
    const gateway = await startGateway(
      testConfig({ REDIS_URL: redis.url }),
      createLogger({ name: 'gw', level: 'silent' }),
    );
    const base = gateway.partnerUrl.replace(/\/api$/, '');
    try {
      expect((await call('GET', `${base}/healthz`)).body).toEqual({ status: 'ok' });
      const ready = await call('GET', `${base}/readyz`);
      expect(ready.status).toBe(200);
      expect(ready.body).toEqual({ status: 'ready', checks: { mongo: true, redis: true } });

      await redis.stop();
      const notReady = await call('GET', `${base}/readyz`);
      expect(notReady.status).toBe(503);
      expect(notReady.body.checks).toEqual({ mongo: true, redis: false });
      expect((await call('GET', `${base}/healthz`)).status).toBe(200);
    } finally {
      await gateway.stop();
      await redis.stop();
    }
  });
});
