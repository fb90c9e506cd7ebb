import { basic, CONFIG, call, type Setup, setup } from './helpers';

const TOKEN_PATH = '/oauth/v1/generate?grant_type=client_credentials';

describe('OAuth token route', () => {
  let t: Setup;
  afterEach(async () => {
    await t.close();
  });

  it('issues a bearer token with expires_in as a string, one second short of its lifetime', async () => {
    t = await setup();
    const answer = await call(t.sim.url, 'GET', TOKEN_PATH, {
      headers: { authorization: basic(CONFIG.consumerKey, CONFIG.consumerSecret) },
    });
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({
      access_token: expect.stringMatching(/^[A-Za-z0-9]{28}$/),
      expires_in: '3599',
    });
  });

  it.each([
    ['a wrong secret', basic(CONFIG.consumerKey, 'nope')],
    ['a wrong key', basic('nope', CONFIG.consumerSecret)],
    ['no credentials', undefined],
    ['a bearer header', 'Bearer abc'],
  ])('rejects %s with 400 400.008.01', async (_label, authorization) => {
    t = await setup();
    const answer = await call(t.sim.url, 'GET', TOKEN_PATH, {
      headers: authorization ? { authorization } : {},
    });
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({
      requestId: expect.any(String),
      errorCode: '400.008.01',
      errorMessage: 'Invalid Authentication passed',
    });
  });

  it('rejects another grant type with 400.008.02', async () => {
    t = await setup();
    const answer = await call(t.sim.url, 'GET', '/oauth/v1/generate?grant_type=password', {
      headers: { authorization: basic(CONFIG.consumerKey, CONFIG.consumerSecret) },
    });
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ errorCode: '400.008.02', errorMessage: 'Invalid grant type passed' });
  });

  it('accepts a token until its lifetime ends, then answers 401 Invalid Access Token', async () => {
    t = await setup({ tokenTtlSeconds: 120 });
    const issued = await call(t.sim.url, 'GET', TOKEN_PATH, {
      headers: { authorization: basic(CONFIG.consumerKey, CONFIG.consumerSecret) },
    });
    expect(issued.body.expires_in).toBe('119');
    const headers = { authorization: `Bearer ${issued.body.access_token}` };
    const query = { CheckoutRequestID: 'ws_CO_unknown' };

    t.clock.advance(119_999);
    const stillValid = await call(t.sim.url, 'POST', '/mpesa/stkpushquery/v1/query', {
      body: query,
      headers,
    });
    // Past the token check: the (deliberately empty) query body is what is wrong.
    expect(stillValid.body).toMatchObject({
      errorCode: '400.002.02',
      errorMessage: 'Bad Request - Invalid BusinessShortCode',
    });

    t.clock.advance(1);
    const expired = await call(t.sim.url, 'POST', '/mpesa/stkpushquery/v1/query', { body: query, headers });
    expect(expired.status).toBe(401);
    expect(expired.body).toEqual({
      requestId: expect.any(String),
      errorCode: '404.001.03',
      errorMessage: 'Invalid Access Token',
    });
  });

  it('answers 401 404.001.03 for an unknown token and 404.001.04 without a bearer header', async () => {
    t = await setup();
    const unknown = await call(t.sim.url, 'POST', '/mpesa/b2c/v3/paymentrequest', {
      body: {},
      headers: { authorization: 'Bearer not-a-token' },
    });
    expect(unknown.status).toBe(401);
    expect(unknown.body.errorCode).toBe('404.001.03');
    const none = await call(t.sim.url, 'POST', '/mpesa/b2c/v3/paymentrequest', { body: {} });
    expect(none.status).toBe(401);
    expect(none.body).toMatchObject({
      errorCode: '404.001.04',
      errorMessage: 'Invalid Authentication Header',
    });
  });
});
