import { basic, CONFIG, call, getToken, type Setup, setup, stkBody } from './helpers';

describe('gateway behaviour', () => {
  let t: Setup;
  afterEach(async () => {
    await t.close();
  });

  it('spike arrest: past maxRequestsPerSecond in one second, 500 500.003.02 until the second is over', async () => {
    t = await setup({ maxRequestsPerSecond: 3 });
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) {
      const answer = await t.post('/mpesa/stkpush/v1/processrequest', stkBody(t.clock.now(), t.sink.url));
      statuses.push(answer.status);
      if (answer.status === 500) {
        expect(answer.body).toEqual({
          requestId: expect.any(String),
          errorCode: '500.003.02',
          errorMessage: 'Error Occurred: Spike Arrest Violation',
        });
      }
    }
    // The token request counts too: 1 token + 2 pushes fill the second.
    expect(statuses).toEqual([200, 200, 500, 500, 500]);
    t.clock.advance(1000);
    expect(
      (await t.post('/mpesa/stkpush/v1/processrequest', stkBody(t.clock.now(), t.sink.url))).status,
    ).toBe(200);
  });

  it('records every request (method, path, headers, body, time, status); reset() and DELETE /_requests forget them', async () => {
    t = await setup();
    const token = await getToken(t.sim);
    const body = stkBody(t.clock.now(), t.sink.url);
    await call(t.sim.url, 'POST', '/mpesa/stkpush/v1/processrequest', {
      body,
      headers: { authorization: `Bearer ${token}` },
    });
    await call(t.sim.url, 'POST', '/mpesa/stkpush/v1/processrequest', { rawBody: '{not json' });

    const recorded = t.sim.requests();
    expect(recorded).toEqual([
      expect.objectContaining({
        seq: 1,
        method: 'GET',
        path: '/oauth/v1/generate?grant_type=client_credentials',
        body: null,
        time: '2026-03-01T09:00:00.000Z',
        status: 200,
      }),
      expect.objectContaining({
        seq: 2,
        method: 'POST',
        path: '/mpesa/stkpush/v1/processrequest',
        body,
        status: 200,
      }),
      expect.objectContaining({ seq: 3, body: '{not json', status: 401 }),
    ]);
    expect(recorded[1]?.headers.authorization).toBe(`Bearer ${token}`);

    const listed = await call(t.sim.url, 'GET', '/_requests');
    expect(listed.body.requests).toHaveLength(3);
    expect((await call(t.sim.url, 'DELETE', '/_requests')).status).toBe(200);
    expect(t.sim.requests()).toEqual([]);
    expect((await call(t.sim.url, 'GET', '/_requests')).body).toEqual({ requests: [] });

    await getToken(t.sim);
    t.sim.reset();
    expect(t.sim.requests()).toEqual([]);
  });

  it('lists transactions and sent callbacks', async () => {
    t = await setup();
    const push = await t.post(
      '/mpesa/stkpush/v1/processrequest',
      stkBody(t.clock.now(), `${t.sink.url}/stk`),
    );
    await t.sink.waitForCount(1);
    const transactions = await call(t.sim.url, 'GET', '/_transactions');
    expect(transactions.body.transactions).toEqual([
      expect.objectContaining({
        type: 'STK_PUSH',
        checkoutRequestId: push.body.CheckoutRequestID,
        state: 'COMPLETED',
        resultCode: 0,
      }),
    ]);
    const callbacks = await call(t.sim.url, 'GET', '/_callbacks');
    expect(callbacks.body.callbacks).toEqual([
      expect.objectContaining({ kind: 'STK_CALLBACK', url: `${t.sink.url}/stk`, status: 200 }),
    ]);
  });

  it('answers malformed JSON with 400.002.05, unknown routes 404.001.01 and wrong methods 405', async () => {
    t = await setup();
    const headers = { authorization: `Bearer ${await getToken(t.sim)}` };
    const bad = await call(t.sim.url, 'POST', '/mpesa/stkpush/v1/processrequest', { rawBody: '{', headers });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ errorCode: '400.002.05', errorMessage: 'Invalid Request Payload' });
    const unknown = await call(t.sim.url, 'POST', '/mpesa/reversal/v1/request', { body: {}, headers });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ errorCode: '404.001.01', errorMessage: 'Resource not found' });
    const wrongMethod = await call(t.sim.url, 'GET', '/mpesa/stkpush/v1/processrequest', { headers });
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.body.errorCode).toBe('405.001');
  });

  it('failNext() and POST /_faults answer the next requests with a fault, then behave again', async () => {
    t = await setup();
    t.sim.failNext(1);
    const auth = { authorization: basic(CONFIG.consumerKey, CONFIG.consumerSecret) };
    const path = '/oauth/v1/generate?grant_type=client_credentials';
    const first = await call(t.sim.url, 'GET', path, { headers: auth });
    expect(first.status).toBe(500);
    expect(first.body).toMatchObject({ errorCode: '500.003.1001', errorMessage: 'Internal Server Error' });

    const set = await call(t.sim.url, 'POST', '/_faults', {
      body: { count: 2, status: 503, errorCode: '503.001.01', errorMessage: 'Service Unavailable' },
    });
    expect(set.body).toEqual({ pending: 2 });
    for (let i = 0; i < 2; i++) {
      const answer = await call(t.sim.url, 'GET', path, { headers: auth });
      expect(answer.status).toBe(503);
      expect(answer.body.errorCode).toBe('503.001.01');
    }
    expect((await call(t.sim.url, 'GET', path, { headers: auth })).status).toBe(200);
    expect(t.sim.requests().map((r) => r.status)).toEqual([500, 503, 503, 200]);
  });

  it('a hanging fault never answers; close() drops the connection', async () => {
    t = await setup();
    t.sim.failNext(1, { hang: true });
    const pending = call(t.sim.url, 'GET', '/oauth/v1/generate?grant_type=client_credentials');
    const outcome = pending.then(
      () => 'answered',
      () => 'dropped',
    );
    // Wait until the request has arrived (it is recorded before its fault is applied).
    await new Promise<void>((resolve) => {
      const check = () => (t.sim.requests().length > 0 ? resolve() : setImmediate(check));
      check();
    });
    expect(t.sim.requests()[0]?.status).toBeNull();
    await t.sim.close();
    expect(await outcome).toBe('dropped');
  });
});
