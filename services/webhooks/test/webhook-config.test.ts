import { eventually } from '@parametric/test-harness';
import { type Platform, startPlatform } from './support';

describe('webhook configuration (production rules: https and public addresses only)', () => {
  let p: Platform;
  beforeAll(async () => {
    p = await startPlatform({ ALLOW_INSECURE_WEBHOOKS: 'false' });
  });
  afterAll(async () => {
    await p.stop();
  });

  const get = (apiKey: string) => p.gateway.api('GET', '/organizations/me/webhook', { key: apiKey });

  it('shows no webhook before one is set', async () => {
    const { apiKey } = await p.gateway.register();
    const reply = await get(apiKey);
    expect(reply.status).toBe(200);
    expect(reply.body.data).toEqual({ url: null, secretSet: false, secret: null });
  });

  it('sets an https URL and generates a 256-bit secret the first time; a new URL keeps the secret', async () => {
    const { apiKey } = await p.gateway.register();
    const first = await p.gateway.api('PUT', '/organizations/me/webhook', {
      key: apiKey,
      body: { url: 'https://93.184.216.34/hooks' },
    });
    expect(first.status).toBe(200);
    expect(first.body.data).toEqual({
      url: 'https://93.184.216.34/hooks',
      secretSet: true,
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9_-]{43}$/),
    });
    expect(Buffer.from((first.body.data.secret as string).slice(6), 'base64url')).toHaveLength(32);
    const second = await p.gateway.api('PUT', '/organizations/me/webhook', {
      key: apiKey,
      body: { url: 'https://93.184.216.35/v2' },
    });
    expect(second.body.data.secret).toBe(first.body.data.secret);
    expect((await get(apiKey)).body.data).toEqual(second.body.data);
    expect((await p.gateway.api('GET', '/organizations/me', { key: apiKey })).body.data.webhookUrl).toBe(
      'https://93.184.216.35/v2',
    );
  });

  it('stores the secret encrypted, never in plaintext', async () => {
    const { id, apiKey } = await p.gateway.register();
    const reply = await p.gateway.api('PUT', '/organizations/me/webhook', {
      key: apiKey,
      body: { url: 'https://93.184.216.34/hooks' },
    });
    const stored = await p.db.collection('webhook_endpoints').findOne({ _id: id as never });
    expect(JSON.stringify(stored)).not.toContain(reply.body.data.secret);
    expect(stored?.secretSealed).toMatch(/^v1\./);
  });

  // Every refused kind of URL is test/domain/webhook-url.test.ts; two prove the route's answer.
  it.each([
    ['http://93.184.216.34/hooks', /https/],
    ['https://10.0.0.8/hooks', /private|reserved/],
  ])('rejects %s with 400 INVALID_INPUT on the url field, changing nothing', async (url, reason) => {
    const { apiKey } = await p.gateway.register();
    await p.gateway.api('PUT', '/organizations/me/webhook', {
      key: apiKey,
      body: { url: 'https://93.184.216.34/ok' },
    });
    const reply = await p.gateway.api('PUT', '/organizations/me/webhook', { key: apiKey, body: { url } });
    expect(reply.status).toBe(400);
    expect(reply.body.error.code).toBe('INVALID_INPUT');
    expect(reply.body.error.details).toEqual([{ field: 'url', message: expect.stringMatching(reason) }]);
    expect((await get(apiKey)).body.data.url).toBe('https://93.184.216.34/ok');
  });

  it('rejects a missing url, a non-string url and unknown fields', async () => {
    const { apiKey } = await p.gateway.register();
    for (const body of [{}, { url: 42 }, { url: 'https://93.184.216.34/x', secret: 'mine' }]) {
      const reply = await p.gateway.api('PUT', '/organizations/me/webhook', { key: apiKey, body });
      expect(reply.status).toBe(400);
      expect(reply.body.error.code).toBe('INVALID_INPUT');
    }
    expect((await get(apiKey)).body.data.url).toBeNull();
  });

  it('rotating the secret returns a new one once, and without a webhook is 400', async () => {
    const { apiKey } = await p.gateway.register();
    const none = await p.gateway.api('POST', '/organizations/me/webhook/rotate-secret', { key: apiKey });
    expect(none.status).toBe(400);
    const set = await p.gateway.api('PUT', '/organizations/me/webhook', {
      key: apiKey,
      body: { url: 'https://93.184.216.34/hooks' },
    });
    const rotated = await p.gateway.api('POST', '/organizations/me/webhook/rotate-secret', { key: apiKey });
    expect(rotated.status).toBe(200);
    expect(Object.keys(rotated.body.data)).toEqual(['secret']);
    expect(rotated.body.data.secret).not.toBe(set.body.data.secret);
    expect((await get(apiKey)).body.data.secret).toBe(rotated.body.data.secret);
  });

  it("keeps each organization's webhook to itself", async () => {
    const a = await p.gateway.register();
    const b = await p.gateway.register();
    await p.gateway.api('PUT', '/organizations/me/webhook', {
      key: a.apiKey,
      body: { url: 'https://93.184.216.34/a' },
    });
    expect((await get(b.apiKey)).body.data).toEqual({ url: null, secretSet: false, secret: null });
  });

  it('refuses delivery to an address that became private after configuration (DNS rebinding), at connect time', async () => {
    const org = await p.gateway.register();
    await p.gateway.api('PUT', '/organizations/me/webhook', {
      key: org.apiKey,
      body: { url: 'https://93.184.216.34/hooks' },
    });
    // What a rebinding attacker achieves: the stored target now leads to our own loopback receiver.
    await p.db
      .collection('webhook_endpoints')
      .updateOne({ _id: org.id as never }, { $set: { url: p.receiver.url } });
    await p.emitKybEvent(org.id);
    const row = await eventually(
      async () => {
        const [first] = await p.deliveryRows(org.id);
        expect(first?.attempts).toBeGreaterThan(0);
        return first;
      },
      { message: 'a recorded delivery attempt' },
    );
    expect(row?.lastError).toMatch(/blocked address|https/);
    expect(p.receiver.received).toHaveLength(0);
  });
});
