import { createLogger } from '@parametric/logger';
import { startWebhookReceiver, verifyWebhook } from '@parametric/webhook-receiver';
import { type RunningWebhooks, startWebhooks } from '../src/service';
import { type Platform, startPlatform, webhooksTestConfig } from './support';

/**
 * Two replicas: the one behind the gateway answers the partner API only, the other runs the
 * delivery workers with a cache that would keep endpoints for ten minutes. Changes made
 * through the first must reach deliveries made by the second at once.
 */
describe('endpoint changes across replicas', () => {
  let p: Platform;
  let worker: RunningWebhooks;
  beforeAll(async () => {
    p = await startPlatform({ RUN_WORKERS: 'false' });
    worker = await startWebhooks(
      webhooksTestConfig({
        MONGO_DB: p.config.MONGO_DB,
        REDIS_PREFIX: p.config.REDIS_PREFIX,
        WEBHOOK_SECRET_KEY: p.config.WEBHOOK_SECRET_KEY,
        ENDPOINT_CACHE_MS: '600000',
      }),
      createLogger({ name: 'webhooks-worker-replica', level: 'silent' }),
    );
  });
  afterAll(async () => {
    await worker.stop();
    await p.stop();
  });

  it('signs the next delivery with a secret rotated on another replica, and sends it to a URL changed there', async () => {
    const first = await startWebhookReceiver();
    const moved = await startWebhookReceiver();
    try {
      const org = await p.connectedOrg(first);
      // A delivery made: the worker replica now holds this endpoint.
      await p.emitKybEvent(org.id);
      await first.waitFor((d) => d.verified);

      const rotated = await p.gateway.api('POST', '/organizations/me/webhook/rotate-secret', {
        key: org.apiKey,
      });
      expect(rotated.status).toBe(200);
      const secret = rotated.body.data.secret as string;
      first.setSecret(secret);
      await p.emitKybEvent(org.id);
      const second = await first.waitForCount(2);
      const got = second[1];
      if (!got) throw new Error('no second delivery');
      const raw = Buffer.from(got.rawBody);
      expect(verifyWebhook({ rawBody: raw, headers: got.headers, secret })).toMatchObject({ ok: true });
      expect(verifyWebhook({ rawBody: raw, headers: got.headers, secret: org.secret })).toMatchObject({
        ok: false,
      });

      const put = await p.gateway.api('PUT', '/organizations/me/webhook', {
        key: org.apiKey,
        body: { url: moved.url },
      });
      expect(put.status).toBe(200);
      moved.setSecret(secret);
      await p.emitKybEvent(org.id);
      const third = await moved.waitFor(() => true);
      expect(third.verified).toBe(true);
      expect(first.received).toHaveLength(2);
    } finally {
      await first.close();
      await moved.close();
    }
  });
});
