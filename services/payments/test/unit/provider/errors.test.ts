import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { eventually } from '@parametric/test-harness';
import { createDaraja, type Daraja, DarajaError } from '../../../src/provider';
import {
  B2C,
  darajaError,
  PUSH,
  payoutInput,
  pushInput,
  SIM,
  type Started,
  startDaraja,
  TOKEN,
} from './support';

/** An HTTP server that accepts requests and never answers them. */
async function startSilentServer() {
  const seen: string[] = [];
  const server: Server = createServer((req) => {
    seen.push(`${req.method} ${req.url}`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    async close() {
      const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await stopped;
    },
  };
}

describe('Daraja client errors', () => {
  const cleanup: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const fn of cleanup.splice(0).reverse()) await fn();
  });
  async function start(options: Parameters<typeof startDaraja>[0] = {}): Promise<Started> {
    const s = await startDaraja(options);
    cleanup.push(() => s.close());
    return s;
  }
  function client(baseUrl: string, overrides: { timeoutMs?: number; breakerResetMs?: number } = {}): Daraja {
    const daraja = createDaraja({ baseUrl, ...SIM, timeoutMs: 2000, breakerResetMs: 30_000, ...overrides });
    cleanup.push(() => daraja.close());
    return daraja;
  }

  it('a reused OriginatorConversationID is DUPLICATE (500.002.1001), not retriable', async () => {
    const s = await start();
    const input = payoutInput(s.sink.url);
    await s.daraja.b2c(input);
    const error = await darajaError(s.daraja.b2c({ ...input, amount: 9999 }));
    expect(error).toBeInstanceOf(DarajaError);
    expect(error).toMatchObject({
      kind: 'DUPLICATE',
      errorCode: '500.002.1001',
      status: 500,
      retriable: false,
    });
    expect(error.requestId).toEqual(expect.any(String));
    expect(error.message).toContain('Duplicate OriginatorConversationID.');
  });

  it('spike arrest is THROTTLED (500.003.02) and retriable', async () => {
    const s = await start({ sim: { maxRequestsPerSecond: 2 } });
    await s.daraja.stkPush(pushInput(s.sink.url)); // the token request and the push: 2 this second
    const error = await darajaError(s.daraja.stkPush(pushInput(s.sink.url)));
    expect(error).toMatchObject({ kind: 'THROTTLED', errorCode: '500.003.02', status: 500, retriable: true });
    expect(s.daraja.breakerState()).toBe('closed');
  });

  it('wrong consumer credentials are REJECTED at the token request (400.008.01)', async () => {
    const s = await start({ config: { consumerSecret: 'not-the-secret' } });
    const error = await darajaError(s.daraja.stkPush(pushInput(s.sink.url)));
    expect(error).toMatchObject({ kind: 'REJECTED', errorCode: '400.008.01', status: 400, retriable: false });
    expect(s.calls()).toEqual([TOKEN]);
    expect(error.message).not.toContain('not-the-secret');
  });

  it('a wrong passkey is REJECTED (500.001.1001 Wrong credentials), and does not count against the breaker', async () => {
    const s = await start({ config: { passkey: 'stale-passkey' } });
    for (let i = 0; i < 4; i++) {
      const error = await darajaError(s.daraja.stkPush(pushInput(s.sink.url)));
      expect(error).toMatchObject({ kind: 'REJECTED', errorCode: '500.001.1001', status: 500 });
    }
    expect(s.daraja.breakerState()).toBe('closed');
  });

  it("a field Daraja refuses is REJECTED with Daraja's message (400.002.02)", async () => {
    const s = await start();
    const error = await darajaError(
      s.daraja.stkPush(pushInput(s.sink.url, { accountReference: 'POLICY-0000001' })),
    );
    expect(error).toMatchObject({ kind: 'REJECTED', errorCode: '400.002.02', status: 400 });
    expect(error.message).toContain('Bad Request - Invalid AccountReference');
  });

  it('a 5xx from Daraja is UNAVAILABLE and retriable', async () => {
    const s = await start();
    s.sim.failNext(1, { status: 503, errorCode: '503.001.01', errorMessage: 'Service Unavailable' });
    const error = await darajaError(s.daraja.b2c(payoutInput(s.sink.url)));
    expect(error).toMatchObject({
      kind: 'UNAVAILABLE',
      errorCode: '503.001.01',
      status: 503,
      retriable: true,
    });
  });

  it('a server that never answers: UNAVAILABLE (TIMEOUT) after timeoutMs', async () => {
    const silent = await startSilentServer();
    cleanup.push(() => silent.close());
    const daraja = client(silent.url, { timeoutMs: 200 });
    const error = await darajaError(daraja.stkPush(pushInput('http://127.0.0.1:9')));
    expect(error).toMatchObject({ kind: 'UNAVAILABLE', detail: 'TIMEOUT' });
    expect(error.message).toContain('did not answer within 200 ms');
    expect(silent.seen).toEqual(['GET /oauth/v1/generate?grant_type=client_credentials']);
  });

  it('nobody listening: UNAVAILABLE (NETWORK)', async () => {
    const silent = await startSilentServer();
    const url = silent.url;
    await silent.close(); // the port is free again: connections are refused
    const error = await darajaError(client(url).b2c(payoutInput('http://127.0.0.1:9')));
    expect(error).toMatchObject({ kind: 'UNAVAILABLE', detail: 'NETWORK' });
  });

  it('an answer that is not Daraja JSON: UNAVAILABLE (BAD_RESPONSE)', async () => {
    const server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<html>captive portal</html>');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanup.push(
      () =>
        new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        }),
    );
    const { port } = server.address() as AddressInfo;
    const error = await darajaError(client(`http://127.0.0.1:${port}`).stkQuery('ws_CO_1'));
    expect(error).toMatchObject({ kind: 'UNAVAILABLE', detail: 'BAD_RESPONSE' });
  });

  it('the breaker opens after failures, fails fast without reaching Daraja, then half-opens and closes', async () => {
    const s = await start({ config: { breakerResetMs: 300 } });
    s.sim.failNext(3);
    const kinds: string[] = [];
    while (s.daraja.breakerState() === 'closed' && kinds.length < 10) {
      kinds.push((await darajaError(s.daraja.b2c(payoutInput(s.sink.url)))).kind);
    }
    expect(kinds).toEqual(['UNAVAILABLE', 'UNAVAILABLE', 'UNAVAILABLE']); // volumeThreshold 3
    expect(s.daraja.breakerState()).toBe('open');
    expect(s.calls()).toEqual([TOKEN, TOKEN, TOKEN]); // each failed at its token request

    for (let i = 0; i < 3; i++) {
      const error = await darajaError(s.daraja.b2c(payoutInput(s.sink.url)));
      expect(error).toMatchObject({ kind: 'UNAVAILABLE', detail: 'BREAKER_OPEN' });
    }
    expect(s.sim.requests()).toHaveLength(3); // failing fast: not one request reached Daraja

    // Waiting out breakerResetMs (300 ms) is the behaviour under test; polled, not slept.
    await eventually(() => expect(s.daraja.breakerState()).toBe('half-open'), { interval: 20 });
    await s.daraja.b2c(payoutInput(s.sink.url));
    expect(s.daraja.breakerState()).toBe('closed');
    expect(s.calls().slice(3)).toEqual([TOKEN, B2C]);
  });

  it('timeouts count against the breaker', async () => {
    const silent = await startSilentServer();
    cleanup.push(() => silent.close());
    const daraja = client(silent.url, { timeoutMs: 100 });
    for (let i = 0; i < 3; i++) {
      expect(await darajaError(daraja.b2c(payoutInput('http://127.0.0.1:9')))).toMatchObject({
        detail: 'TIMEOUT',
      });
    }
    expect(daraja.breakerState()).toBe('open');
    expect(await darajaError(daraja.b2c(payoutInput('http://127.0.0.1:9')))).toMatchObject({
      detail: 'BREAKER_OPEN',
    });
    expect(silent.seen).toHaveLength(3);
  });

  it('close() aborts a request in flight, and later calls fail as CLOSED', async () => {
    const s = await start();
    await s.daraja.stkPush(pushInput(s.sink.url)); // a cached token
    s.sim.failNext(1, { hang: true });
    const pending = darajaError(s.daraja.stkPush(pushInput(s.sink.url)));
    await eventually(() => expect(s.calls()).toEqual([TOKEN, PUSH, PUSH]), { interval: 10 });
    await s.daraja.close();
    expect(await pending).toMatchObject({ kind: 'UNAVAILABLE', detail: 'CLOSED' });
    expect(await darajaError(s.daraja.stkQuery('ws_CO_1'))).toMatchObject({
      kind: 'UNAVAILABLE',
      detail: 'CLOSED',
    });
  });
});
