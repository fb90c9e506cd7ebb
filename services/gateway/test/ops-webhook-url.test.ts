import { createLogger } from '@parametric/logger';
import { type RunningWebhooks, startWebhooks } from '../../webhooks/src/service';
import { webhooksTestConfig } from '../../webhooks/test/support';
import { startTestGateway, type TestGateway } from './support';

/**
 * Row 11: the ops view of an organization showed `webhookUrl: null` while the partner view showed
 * the URL. The webhooks service owns the URL; both views read it from there.
 */
describe('the webhook URL on the ops view of an organization (row 11)', () => {
  let webhooks: RunningWebhooks;
  let t: TestGateway;

  beforeAll(async () => {
    webhooks = await startWebhooks(
      webhooksTestConfig({ RUN_WORKERS: 'false' }),
      createLogger({ name: 'webhooks-test', level: 'silent' }),
    );
    t = await startTestGateway({ WEBHOOKS_URL: webhooks.url });
  });
  afterAll(async () => {
    await t?.stop();
    await webhooks?.stop();
  });

  const partnerView = async (apiKey: string) => {
    const reply = await t.api('GET', '/organizations/me', { key: apiKey });
    expect(reply.status).toBe(200);
    return reply.body.data.webhookUrl;
  };
  const opsView = async (id: string) => {
    const reply = await t.ops('GET', `/organizations/${id}`);
    expect(reply.status).toBe(200);
    return reply.body.data.webhookUrl;
  };

  it('is what the partner sees: null before one is set, then the URL set, then the changed one', async () => {
    const { id, apiKey } = await t.register();
    expect(await opsView(id)).toBeNull();
    expect(await partnerView(apiKey)).toBeNull();

    const first = 'http://127.0.0.1:9/hooks/first';
    const set = await t.api('PUT', '/organizations/me/webhook', { key: apiKey, body: { url: first } });
    expect(set.status).toBe(200);
    expect(await partnerView(apiKey)).toBe(first);
    expect(await opsView(id)).toBe(first);

    const second = 'http://127.0.0.1:9/hooks/second';
    const changed = await t.api('PUT', '/organizations/me/webhook', { key: apiKey, body: { url: second } });
    expect(changed.status).toBe(200);
    // Ops read first this time: nothing either view cached may hold the old URL.
    expect(await opsView(id)).toBe(second);
    expect(await partnerView(apiKey)).toBe(second);
  });

  it('shows each organization its own URL', async () => {
    const a = await t.register();
    const b = await t.register();
    const url = 'http://127.0.0.1:9/hooks/only-a';
    await t.api('PUT', '/organizations/me/webhook', { key: a.apiKey, body: { url } });
    expect(await opsView(a.id)).toBe(url);
    expect(await opsView(b.id)).toBeNull();
  });

  it('answers 503 rather than null when the webhooks service cannot be asked', async () => {
    const { createServer } = await import('node:http');
    const silent = createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const port = (silent.address() as { port: number }).port;
    const cut = await startTestGateway({ WEBHOOKS_URL: `http://127.0.0.1:${port}` });
    try {
      const { id } = await cut.register();
      const reply = await cut.ops('GET', `/organizations/${id}`);
      expect([reply.status, reply.body.error.code]).toEqual([503, 'SERVICE_UNAVAILABLE']);
      // The write actions do not depend on it.
      const kyb = await cut.ops('POST', `/organizations/${id}/kyb`, { body: { status: 'VERIFIED' } });
      expect(kyb.status).toBe(200);
    } finally {
      await cut.stop();
      silent.closeAllConnections();
      await new Promise((resolve) => silent.close(resolve));
    }
  });
});
