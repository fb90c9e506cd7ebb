import { startLocalRedis } from '@parametric/local-redis';
import { parseExposition } from '@parametric/metrics';
import { call, startTestGateway, type TestGateway } from './support';

const redisDegraded = async (gateway: TestGateway) => {
  const metrics = await gateway.ops('GET', '/metrics');
  expect(metrics.status).toBe(200);
  const sample = parseExposition(String(metrics.body)).find(
    (s) => s.name === 'dependency_degraded' && s.labels.dependency === 'redis',
  );
  return sample?.value;
};

describe('health endpoints', () => {
  it('/readyz stays 200 while Redis is gone (rate limits fall back to memory): the degradation is in its body and in dependency_degraded, and a partner request is still served', async () => {
    const redis = await startLocalRedis({});
    const gateway = await startTestGateway({ REDIS_URL: redis.url });
    const base = gateway.gateway.partnerUrl.replace(/\/api$/, '');
    try {
      const org = await gateway.register();
      expect((await call('GET', `${base}/healthz`)).body).toEqual({ status: 'ok' });
      const ready = await call('GET', `${base}/readyz`);
      expect([ready.status, ready.body]).toEqual([
        200,
        { status: 'ready', checks: { mongo: true }, degraded: [] },
      ]);
      expect(await redisDegraded(gateway)).toBe(0);

      await redis.stop();
      const degraded = await call('GET', `${base}/readyz`);
      expect([degraded.status, degraded.body]).toEqual([
        200,
        { status: 'ready', checks: { mongo: true }, degraded: ['redis'] },
      ]);
      expect(await redisDegraded(gateway)).toBe(1);
      const served = await gateway.api('GET', '/organizations/me', { key: org.apiKey });
      expect([served.status, served.body.data.id]).toEqual([200, org.id]);
      expect((await call('GET', `${base}/healthz`)).status).toBe(200);
    } finally {
      await gateway.stop();
      await redis.stop();
    }
  });
});
