import { startTestGateway, type TestGateway } from './support';

describe('error envelope', () => {
  let t: TestGateway;
  let apiKey: string;
  beforeAll(async () => {
    t = await startTestGateway();
    ({ apiKey } = await t.register());
  });
  afterAll(async () => {
    await t.stop();
  });

  it('answers an unknown path with 404 NOT_FOUND in the envelope', async () => {
    const reply = await t.api('GET', '/no/such/thing', { key: apiKey });
    expect(reply.status).toBe(404);
    expect(reply.body).toEqual({ success: false, error: { code: 'NOT_FOUND', message: expect.any(String) } });
  });

  it.each([
    ['GET', '/me/wallet'],
    ['POST', '/me/wallet/fund'],
    ['GET', '/me/reserve'],
    ['POST', '/me/reserve/deposit'],
    ['POST', '/me/reserve/withdraw'],
  ])('answers the removed endpoint %s %s with 404 NOT_FOUND', async (method, path) => {
    const reply = await t.api(method, path, {
      key: apiKey,
      body: method === 'POST' ? { amount: 100 } : undefined,
    });
    expect(reply.status).toBe(404);
    expect(reply.body.error.code).toBe('NOT_FOUND');
  });

  it('answers malformed JSON with 400 INVALID_INPUT', async () => {
    const reply = await t.api('PUT', '/organizations/me/settings', {
      key: apiKey,
      raw: '{"brandColor": "#123456",',
      headers: { 'content-type': 'application/json' },
    });
    expect(reply.status).toBe(400);
    expect(reply.body.error).toEqual({ code: 'INVALID_INPUT', message: 'Malformed JSON body' });
  });

  it('answers a body that is not JSON with 400 INVALID_INPUT', async () => {
    const reply = await t.api('PUT', '/organizations/me/settings', {
      key: apiKey,
      raw: 'brandColor=%23123456',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(reply.status).toBe(400);
    expect(reply.body.error).toEqual({
      code: 'INVALID_INPUT',
      message: 'Content-Type must be application/json',
    });
  });

  it('answers a body over 1 MiB with 400 INVALID_INPUT and writes nothing', async () => {
    const before = await t.db.collection('organizations').countDocuments();
    const reply = await t.api('POST', '/auth/register-organization', {
      raw: JSON.stringify({ name: 'x'.repeat(1024 * 1024), type: 'COOPERATIVE', countryCode: 'KE' }),
      headers: { 'content-type': 'application/json' },
    });
    expect(reply.status).toBe(400);
    expect(reply.body.error.code).toBe('INVALID_INPUT');
    expect(await t.db.collection('organizations').countDocuments()).toBe(before);
  });

  it('answers a JSON body that is not an object with 400 INVALID_INPUT', async () => {
    const reply = await t.api('PUT', '/organizations/me/settings', {
      key: apiKey,
      raw: '"just a string"',
      headers: { 'content-type': 'application/json' },
    });
    expect(reply.status).toBe(400);
    expect(reply.body.error.code).toBe('INVALID_INPUT');
  });

  it('never leaks a stack trace or framework page', async () => {
    const reply = await t.api('PUT', '/organizations/me/settings', {
      key: apiKey,
      raw: '{bad',
      headers: { 'content-type': 'application/json' },
    });
    const text = JSON.stringify(reply.body);
    expect(text).not.toMatch(/at .*\.(ts|js):\d+|SyntaxError|node_modules|<html/i);
    expect(reply.headers.get('x-powered-by')).toBeNull();
    expect(reply.headers.get('content-type')).toContain('application/json');
  });

  it('answers every refusal with an x-request-id too, so a partner can quote it to ops', async () => {
    const replies = [
      await t.api('GET', '/organizations/me'), // 401: no key
      await t.api('GET', '/organizations/me', { key: 'pk_live_not-a-real-key' }), // 401: bad key
      await t.api('GET', '/no/such/thing', { key: apiKey }), // 404
      await t.api('PUT', '/organizations/me/settings', {
        key: apiKey,
        raw: '{"brandColor": ',
        headers: { 'content-type': 'application/json' },
      }), // 400
    ];
    for (const reply of replies) {
      expect(reply.status).toBeGreaterThanOrEqual(400);
      expect(reply.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    }
  });

  it('echoes a request id on every response', async () => {
    const reply = await t.api('GET', '/organizations/me', {
      key: apiKey,
      headers: { 'x-request-id': 'partner-trace-42' },
    });
    expect(reply.headers.get('x-request-id')).toBe('partner-trace-42');
    expect((await t.api('GET', '/organizations/me', { key: apiKey })).headers.get('x-request-id')).toMatch(
      /^[0-9a-f-]{36}$/,
    );
  });
});
