import { startTestGateway, type TestGateway } from './support';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('organizations', () => {
  let t: TestGateway;
  beforeAll(async () => {
    t = await startTestGateway();
  });
  afterAll(async () => {
    await t.stop();
  });

  const organizationsCount = () => t.db.collection('organizations').countDocuments();

  describe('POST /auth/register-organization', () => {
    it('creates an organization with the spec defaults and shows its key and secret once', async () => {
      const reply = await t.api('POST', '/auth/register-organization', {
        body: {
          name: 'Nakuru Growers',
          type: 'COOPERATIVE',
          countryCode: 'KE',
          contactEmail: 'ops@nakuru.coop',
          contactPhone: '+254712345678',
        },
      });
      expect(reply.status).toBe(201);
      expect(reply.body.success).toBe(true);
      const org = reply.body.data.organization;
      expect(org).toEqual({
        id: expect.stringMatching(UUID),
        name: 'Nakuru Growers',
        type: 'COOPERATIVE',
        countryCode: 'KE',
        contactEmail: 'ops@nakuru.coop',
        contactPhone: '+254712345678',
        kybStatus: 'NOT_STARTED',
        serviceTier: 'DETERMINATION',
        isActive: true,
        environment: 'live',
        webhookUrl: null,
        settings: { brandColor: null, contactPhone: '+254712345678' },
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
        apiKey: expect.stringMatching(/^pik_reg_[0-9A-Za-z]{40}$/),
        apiSecret: expect.stringMatching(/^pis_[0-9A-Za-z]{48}$/),
      });
      // The key works at once.
      expect((await t.api('GET', '/organizations/me', { key: org.apiKey })).status).toBe(200);
    });

    it('stores only hashes of the key and secret', async () => {
      const { id, apiKey, apiSecret } = await t.register();
      const stored = await t.db.collection('api_keys').findOne({ _id: id as never });
      const serialized = JSON.stringify(stored);
      expect(serialized).not.toContain(apiKey);
      expect(serialized).not.toContain(apiSecret);
      expect(stored?.keyHash).toMatch(/^[0-9a-f]{64}$/);
    });

    it.each([
      ['a market we do not serve', { countryCode: 'UG' }, 'countryCode'],
      ['an unknown organization type', { type: 'BANKISH' }, 'type'],
      ['a one-letter name', { name: 'A' }, 'name'],
      ['a malformed email', { contactEmail: 'not-an-email' }, 'contactEmail'],
      ['a phone number that is not E.164', { contactPhone: '0712345678' }, 'contactPhone'],
      ['an unknown field', { kybStatus: 'VERIFIED' }, 'kybStatus'],
    ])(
      'rejects %s with 400 INVALID_INPUT naming the field, and creates nothing',
      async (_what, change, field) => {
        const before = await organizationsCount();
        const reply = await t.api('POST', '/auth/register-organization', {
          body: { name: 'Valid Name', type: 'COOPERATIVE', countryCode: 'GH', ...change },
        });
        expect(reply.status).toBe(400);
        expect(reply.body.success).toBe(false);
        expect(reply.body.error.code).toBe('INVALID_INPUT');
        expect(reply.body.error.details).toEqual(
          expect.arrayContaining([expect.objectContaining({ field })]),
        );
        expect(await organizationsCount()).toBe(before);
      },
    );

    it('rejects a missing required field with its name in details', async () => {
      const reply = await t.api('POST', '/auth/register-organization', {
        body: { type: 'COOPERATIVE', countryCode: 'KE' },
      });
      expect(reply.status).toBe(400);
      expect(reply.body.error.details).toEqual([{ field: 'name', message: expect.any(String) }]);
    });
  });

  describe('GET /organizations/me', () => {
    it('returns the organization’s fields and never the key, secret or webhook secret', async () => {
      const { id, apiKey } = await t.register({ countryCode: 'GH', type: 'LENDER' });
      const reply = await t.api('GET', '/organizations/me', { key: apiKey });
      expect(reply.status).toBe(200);
      const org = reply.body.data;
      expect(org.id).toBe(id);
      expect(org.countryCode).toBe('GH');
      for (const field of [
        'name',
        'type',
        'kybStatus',
        'serviceTier',
        'isActive',
        'webhookUrl',
        'settings',
      ]) {
        expect(org).toHaveProperty(field);
      }
      for (const hidden of ['apiKey', 'apiSecret', 'webhookSecret', 'keyHash', 'outbox'])
        expect(org).not.toHaveProperty(hidden);
    });

    it('shows each organization only itself', async () => {
      const a = await t.register({ name: 'Org A' });
      const b = await t.register({ name: 'Org B' });
      expect((await t.api('GET', '/organizations/me', { key: a.apiKey })).body.data.name).toBe('Org A');
      expect((await t.api('GET', '/organizations/me', { key: b.apiKey })).body.data.name).toBe('Org B');
    });
  });

  describe('PUT /organizations/me/settings', () => {
    it('writes brandColor and contactPhone and answers the stored settings', async () => {
      const { apiKey } = await t.register();
      const reply = await t.api('PUT', '/organizations/me/settings', {
        key: apiKey,
        body: { brandColor: '#1A2B3C', contactPhone: '+233201234567' },
      });
      expect(reply.status).toBe(200);
      expect(reply.body.data).toEqual({ brandColor: '#1A2B3C', contactPhone: '+233201234567' });
      expect((await t.api('GET', '/organizations/me', { key: apiKey })).body.data.settings).toEqual({
        brandColor: '#1A2B3C',
        contactPhone: '+233201234567',
      });
    });

    it('silently discards every other key (webhook URL, name, KYB status, tier) and still answers 200', async () => {
      const { apiKey } = await t.register({ name: 'Keeps Its Name' });
      const reply = await t.api('PUT', '/organizations/me/settings', {
        key: apiKey,
        body: {
          brandColor: '#00FF00',
          webhookUrl: 'https://evil.example/hook',
          name: 'Renamed',
          kybStatus: 'VERIFIED',
          serviceTier: 'DETERMINATION_AND_SETTLEMENT',
          isActive: false,
        },
      });
      expect(reply.status).toBe(200);
      expect(reply.body.data).toEqual({ brandColor: '#00FF00', contactPhone: null });
      const me = (await t.api('GET', '/organizations/me', { key: apiKey })).body.data;
      expect(me).toMatchObject({
        name: 'Keeps Its Name',
        kybStatus: 'NOT_STARTED',
        serviceTier: 'DETERMINATION',
        isActive: true,
        webhookUrl: null,
      });
    });

    it('rejects a malformed colour or phone with 400 and changes nothing', async () => {
      const { apiKey } = await t.register();
      await t.api('PUT', '/organizations/me/settings', { key: apiKey, body: { brandColor: '#ABCDEF' } });
      for (const body of [
        { brandColor: 'red' },
        { brandColor: '#12345' },
        { contactPhone: '12345' },
        { brandColor: '#GGGGGG' },
      ]) {
        const reply = await t.api('PUT', '/organizations/me/settings', { key: apiKey, body });
        expect(reply.status).toBe(400);
        expect(reply.body.error.code).toBe('INVALID_INPUT');
        expect(reply.body.error.details[0].field).toBe(Object.keys(body)[0]);
      }
      expect((await t.api('GET', '/organizations/me', { key: apiKey })).body.data.settings.brandColor).toBe(
        '#ABCDEF',
      );
    });

    it('clears a value with null', async () => {
      const { apiKey } = await t.register();
      await t.api('PUT', '/organizations/me/settings', { key: apiKey, body: { brandColor: '#ABCDEF' } });
      const reply = await t.api('PUT', '/organizations/me/settings', {
        key: apiKey,
        body: { brandColor: null },
      });
      expect(reply.body.data.brandColor).toBeNull();
    });

    it("changes only the caller's organization", async () => {
      const a = await t.register();
      const b = await t.register();
      await t.api('PUT', '/organizations/me/settings', { key: a.apiKey, body: { brandColor: '#111111' } });
      expect(
        (await t.api('GET', '/organizations/me', { key: b.apiKey })).body.data.settings.brandColor,
      ).toBeNull();
    });
  });
});

describe('GET /organizations/me when the webhooks service does not answer', () => {
  it('answers 503 SERVICE_UNAVAILABLE rather than claiming there is no webhook URL', async () => {
    // A webhooks service that accepts connections and never answers.
    const { createServer } = await import('node:http');
    const silent = createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const port = (silent.address() as { port: number }).port;
    const t = await startTestGateway({ WEBHOOKS_URL: `http://127.0.0.1:${port}` });
    try {
      const { apiKey } = await t.register();
      const reply = await t.api('GET', '/organizations/me', { key: apiKey });
      expect(reply.status).toBe(503);
      expect(reply.body.error.code).toBe('SERVICE_UNAVAILABLE');
      expect(JSON.stringify(reply.body)).not.toContain('webhookUrl');
    } finally {
      await t.stop();
      silent.closeAllConnections();
      await new Promise((resolve) => silent.close(resolve));
    }
  });
});
