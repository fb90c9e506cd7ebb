import { once } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AppError, createApp, finishApp, MAX_BODY_BYTES, MAX_JSON_DEPTH } from '@parametric/http';
import { createLogger } from '@parametric/logger';
import { eventually } from '@parametric/test-harness';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Every log line the app writes, parsed. */
const logLines: Record<string, unknown>[] = [];
const logger = createLogger({
  name: 'http-app-test',
  level: 'info',
  destination: {
    write(line: string) {
      logLines.push(JSON.parse(line) as Record<string, unknown>);
    },
  },
});

let server: Server;
let baseUrl: string;
let echoCalls = 0;

beforeAll(async () => {
  const app = createApp(logger);
  app.get('/ok', (_req, res) => res.json({ success: true, data: { ok: true } }));
  app.post('/echo', (req, res) => {
    echoCalls += 1;
    res.json({ success: true, data: { body: req.body ?? null } });
  });
  app.post('/keys/rotate', (_req, res) => res.status(201).json({ success: true, data: { rotated: true } }));
  app.get('/conflict', async () => {
    await new Promise((resolve) => setImmediate(resolve));
    throw AppError.conflict('Policy already exists', [{ field: 'externalRef', message: 'already used' }]);
  });
  app.get('/unavailable', async () => {
    await Promise.resolve();
    throw new AppError('SERVICE_UNAVAILABLE', 'Pricing service is unavailable');
  });
  app.get('/boom', async () => {
    await new Promise((resolve) => setImmediate(resolve));
    throw new Error('db password=hunter2');
  });
  app.get('/boom-sync', () => {
    throw new Error('db password=hunter2');
  });
  app.get('/healthz', (_req, res) => res.json({ status: 'ok' }));
  app.get('/handler-logs', (req, res) => {
    req.log.info({ step: 'inside' }, 'handler line');
    res.json({ success: true, data: { ok: true } });
  });
  app.get('/items/:id', (req, res) => res.json({ success: true, data: { id: req.params.id } }));
  app.get('/set-cookie', (_req, res) => {
    res.setHeader('set-cookie', 'session=cookie-secret-987');
    res.json({ success: true, data: { ok: true } });
  });
  finishApp(app, logger);
  server = app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

beforeEach(() => {
  logLines.length = 0;
  echoCalls = 0;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
});

/** Request lines are written when the response finishes, which can be just after the client has it. */
function loggedLines(predicate: (line: Record<string, unknown>) => boolean) {
  return eventually(
    () => {
      const lines = logLines.filter(predicate);
      if (lines.length === 0) throw new Error(`logged so far: ${JSON.stringify(logLines.map((l) => l.msg))}`);
      return lines;
    },
    { timeout: 2_000, interval: 10, message: 'a matching log line' },
  );
}

function postRaw(path: string, body: string | undefined, contentType?: string) {
  return fetch(`${baseUrl}${path}`, {
    method: 'POST',
    headers: contentType ? { 'content-type': contentType } : {},
    body: body === undefined ? undefined : new Blob([body]),
  });
}

describe('finishApp: unknown routes', () => {
  it('answers an unknown path with 404 NOT_FOUND in the error envelope', async () => {
    const response = await fetch(`${baseUrl}/no/such/route`);
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({
      success: false,
      error: { code: 'NOT_FOUND', message: expect.any(String) },
    });
  });

  it('answers a known path with an unrouted method with 404 NOT_FOUND', async () => {
    const response = await fetch(`${baseUrl}/ok`, { method: 'DELETE' });
    expect(response.status).toBe(404);
    expect(await response.json()).toMatchObject({ success: false, error: { code: 'NOT_FOUND' } });
  });
});

describe('JSON bodies', () => {
  it('parses a JSON body for the handler', async () => {
    const response = await postRaw(
      '/echo',
      JSON.stringify({ crop: 'maize', hectares: 4 }),
      'application/json',
    );
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ success: true, data: { body: { crop: 'maize', hectares: 4 } } });
  });

  it('answers malformed JSON with 400 INVALID_INPUT "Malformed JSON body"', async () => {
    const response = await postRaw('/echo', '{"crop": "maize",', 'application/json');
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      success: false,
      error: { code: 'INVALID_INPUT', message: 'Malformed JSON body' },
    });
    expect(echoCalls).toBe(0);
  });

  it('accepts a JSON body of exactly 1 MiB', async () => {
    const overhead = JSON.stringify({ pad: '' }).length;
    const body = JSON.stringify({ pad: 'x'.repeat(MAX_BODY_BYTES - overhead) });
    expect(Buffer.byteLength(body)).toBe(MAX_BODY_BYTES);
    const response = await postRaw('/echo', body, 'application/json');
    expect(response.status).toBe(200);
    expect(echoCalls).toBe(1);
  });

  it('answers a body over 1 MiB with 400 INVALID_INPUT', async () => {
    const overhead = JSON.stringify({ pad: '' }).length;
    const body = JSON.stringify({ pad: 'x'.repeat(MAX_BODY_BYTES - overhead + 1) });
    expect(Buffer.byteLength(body)).toBe(MAX_BODY_BYTES + 1);
    const response = await postRaw('/echo', body, 'application/json');
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      success: false,
      error: { code: 'INVALID_INPUT', message: expect.any(String) },
    });
    expect(echoCalls).toBe(0);
  });

  it.each([
    ['text/plain', '{"crop":"maize"}'],
    ['application/x-www-form-urlencoded', 'crop=maize'],
    ['multipart/form-data; boundary=x', '--x\r\n\r\nmaize\r\n--x--'],
  ])('answers a POST with content type %s and a body with 400 INVALID_INPUT', async (contentType, body) => {
    const response = await postRaw('/echo', body, contentType);
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      success: false,
      error: { code: 'INVALID_INPUT', message: expect.any(String) },
    });
    expect(echoCalls).toBe(0);
  });

  it('answers a POST with a body and no content type with 400 INVALID_INPUT', async () => {
    const response = await postRaw('/echo', '{"crop":"maize"}');
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ success: false, error: { code: 'INVALID_INPUT' } });
    expect(echoCalls).toBe(0);
  });

  it('lets a POST with no body and no content type through', async () => {
    const response = await fetch(`${baseUrl}/keys/rotate`, { method: 'POST' });
    expect(response.status).toBe(201);
    expect(await response.json()).toEqual({ success: true, data: { rotated: true } });
  });
});

describe('errorHandler', () => {
  it('renders an AppError thrown in an async handler with its code, status, message and details', async () => {
    const response = await fetch(`${baseUrl}/conflict`);
    expect(response.status).toBe(409);
    expect(await response.json()).toEqual({
      success: false,
      error: {
        code: 'CONFLICT',
        message: 'Policy already exists',
        details: [{ field: 'externalRef', message: 'already used' }],
      },
    });
  });

  it('uses the status of the AppError code', async () => {
    const response = await fetch(`${baseUrl}/unavailable`);
    expect(response.status).toBe(503);
    expect(await response.json()).toEqual({
      success: false,
      error: { code: 'SERVICE_UNAVAILABLE', message: 'Pricing service is unavailable' },
    });
  });

  it.each(['/boom', '/boom-sync'])(
    'answers an unexpected error thrown in %s with a generic 500 that leaks nothing',
    async (path) => {
      const response = await fetch(`${baseUrl}${path}`);
      expect(response.status).toBe(500);
      const text = await response.text();
      expect(JSON.parse(text)).toEqual({
        success: false,
        error: { code: 'INTERNAL_ERROR', message: 'An unexpected error occurred' },
      });
      for (const leaked of ['hunter2', 'password', 'stack', 'Error:', '.ts:', 'node_modules']) {
        expect(text).not.toContain(leaked);
      }
    },
  );

  it('logs an unexpected error at level error with the request id returned to the client', async () => {
    const response = await fetch(`${baseUrl}/boom`);
    expect(response.status).toBe(500);
    const requestId = response.headers.get('x-request-id');
    expect(requestId).toMatch(UUID);

    const errorLines = logLines.filter((line) => line.level === 50 && line.requestId === requestId);
    expect(errorLines).toHaveLength(1);
    expect(errorLines[0]).toMatchObject({
      service: 'http-app-test',
      err: { message: 'db password=hunter2' },
    });
  });

  it('keeps the request id the client sent in the error log line', async () => {
    const response = await fetch(`${baseUrl}/boom`, { headers: { 'x-request-id': 'partner-trace-42' } });
    expect(response.headers.get('x-request-id')).toBe('partner-trace-42');
    expect(
      logLines.filter((line) => line.level === 50 && line.requestId === 'partner-trace-42'),
    ).toHaveLength(1);
  });
});

describe('request ids', () => {
  it('generates a uuid when the request has none and returns it in x-request-id', async () => {
    const first = await fetch(`${baseUrl}/ok`);
    const second = await fetch(`${baseUrl}/ok`);
    expect(first.headers.get('x-request-id')).toMatch(UUID);
    expect(second.headers.get('x-request-id')).toMatch(UUID);
    expect(first.headers.get('x-request-id')).not.toBe(second.headers.get('x-request-id'));
  });

  it.each(['req-123', 'a1B2.c3:d4-e5', 'x'.repeat(64), '550e8400-e29b-41d4-a716-446655440000'])(
    'echoes the well-formed incoming id %s',
    async (id) => {
      const response = await fetch(`${baseUrl}/ok`, { headers: { 'x-request-id': id } });
      expect(response.headers.get('x-request-id')).toBe(id);
    },
  );

  it.each([
    ['200 characters long', 'a'.repeat(200)],
    ['65 characters long', 'a'.repeat(65)],
    ['containing spaces', 'abc def'],
    ['containing markup', '<script>alert(1)</script>'],
    ['containing a newline escape', 'abc\\ninjected'],
  ])('replaces an incoming id %s with a generated uuid', async (_label, id) => {
    const response = await fetch(`${baseUrl}/ok`, { headers: { 'x-request-id': id } });
    expect(response.status).toBe(200);
    expect(response.headers.get('x-request-id')).toMatch(UUID);
  });

  it('returns x-request-id on 404 and 500 responses too', async () => {
    expect((await fetch(`${baseUrl}/missing`)).headers.get('x-request-id')).toMatch(UUID);
    expect((await fetch(`${baseUrl}/boom`)).headers.get('x-request-id')).toMatch(UUID);
  });
});

describe('response headers', () => {
  it.each(['/ok', '/missing', '/boom', '/conflict'])('never sends x-powered-by (GET %s)', async (path) => {
    const response = await fetch(`${baseUrl}${path}`);
    await response.arrayBuffer();
    expect(response.headers.has('x-powered-by')).toBe(false);
  });
});

describe('request logging', () => {
  it('logs each request with the headers that say who called and what was sent, never a credential', async () => {
    const response = await fetch(`${baseUrl}/ok`, {
      headers: {
        'x-api-key': 'pk_live_request_log_key',
        authorization: 'Bearer request-log-token',
        'x-internal-signature': 'deadbeefsignature',
        'x-internal-context': 'eyJzaWduZWQtY29udGV4dCI6MX0',
        cookie: 'session=request-log-cookie',
        // A credential under a name no list of secrets could know.
        'x-partner-token': 'partner-own-token',
        'x-request-id': 'log-check-1',
        'user-agent': 'acme-agri-sync/2.1',
        'idempotency-key': 'log-check-key-1',
      },
    });
    expect(response.status).toBe(200);
    await response.arrayBuffer();

    const requestLines = await loggedLines((line) => line.msg === 'request completed');
    expect(requestLines).toHaveLength(1);
    const line = requestLines[0] as {
      reqId: string;
      req: { headers: Record<string, unknown> };
      res: { statusCode: number; headers: Record<string, unknown> };
    };
    expect(line.reqId).toBe('log-check-1');
    expect(line.req.headers).toMatchObject({
      'user-agent': 'acme-agri-sync/2.1',
      'idempotency-key': 'log-check-key-1',
    });
    expect(line.res).toMatchObject({
      statusCode: 200,
      headers: { 'content-type': expect.stringContaining('json') },
    });
    const all = JSON.stringify(logLines);
    for (const leaked of [
      'pk_live_request_log_key',
      'request-log-token',
      'deadbeefsignature',
      'eyJzaWduZWQtY29udGV4dCI6MX0',
      'request-log-cookie',
      'partner-own-token',
    ]) {
      expect(all).not.toContain(leaked);
    }
  });

  it('gives a handler a logger whose lines carry the request id', async () => {
    const response = await fetch(`${baseUrl}/handler-logs`, {
      headers: { 'x-request-id': 'handler-trace-7' },
    });
    await response.arrayBuffer();
    const [line] = await loggedLines((l) => l.msg === 'handler line');
    expect(line).toMatchObject({ reqId: 'handler-trace-7', step: 'inside' });
    const [completed] = await loggedLines((l) => l.msg === 'request completed');
    expect(completed).toMatchObject({
      reqId: 'handler-trace-7',
      req: { method: 'GET', url: '/handler-logs' },
      res: { statusCode: 200 },
    });
  });

  it('logs a client error at warn and keeps health probes out of the info log', async () => {
    await (await fetch(`${baseUrl}/healthz`)).arrayBuffer();
    await (await fetch(`${baseUrl}/conflict`)).arrayBuffer();
    const [conflict] = await loggedLines((l) => l.msg === 'request completed');
    expect(conflict).toMatchObject({ level: 40, req: { url: '/conflict' }, res: { statusCode: 409 } });
    expect(logLines.filter((l) => (l.req as { url?: string } | undefined)?.url === '/healthz')).toEqual([]);
  });

  it('does not log a set-cookie response header', async () => {
    const response = await fetch(`${baseUrl}/set-cookie`);
    await response.arrayBuffer();
    expect(response.headers.get('set-cookie')).toBe('session=cookie-secret-987');
    expect(await loggedLines((line) => line.msg === 'request completed')).toHaveLength(1);
    expect(JSON.stringify(logLines)).not.toContain('cookie-secret-987');
  });
});

describe('hostile requests (issue 14)', () => {
  it.each(['deflate', 'gzip', 'br'])(
    'answers a garbage %s-encoded body with 400 INVALID_INPUT, not 500, and never reaches the handler',
    async (encoding) => {
      const reply = await fetch(`${baseUrl}/echo`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-encoding': encoding },
        body: new Blob([Buffer.from('this is not compressed at all')]),
      });
      expect(reply.status).toBe(400);
      expect(await reply.json()).toEqual({
        success: false,
        error: { code: 'INVALID_INPUT', message: `Malformed ${encoding} body` },
      });
      expect(echoCalls).toBe(0);
    },
  );

  it('refuses JSON nested deeper than the documented limit with 400, before any handler', async () => {
    const deep = `${'['.repeat(5_000)}${']'.repeat(5_000)}`;
    const reply = await postRaw('/echo', deep, 'application/json');
    expect(reply.status).toBe(400);
    expect(((await reply.json()) as { error: unknown }).error).toEqual({
      code: 'INVALID_INPUT',
      message: `JSON body nests deeper than ${MAX_JSON_DEPTH} levels`,
    });
    expect(echoCalls).toBe(0);
    const fine = `${'{"a":'.repeat(MAX_JSON_DEPTH - 1)}1${'}'.repeat(MAX_JSON_DEPTH - 1)}`;
    expect((await postRaw('/echo', fine, 'application/json')).status).toBe(200);
  });

  it('answers bad percent-encoding in a path with 400 INVALID_INPUT, not a logged 500', async () => {
    const reply = await fetch(`${baseUrl}/items/%E0%A4%A`);
    expect(reply.status).toBe(400);
    expect(((await reply.json()) as { error: unknown }).error).toEqual({
      code: 'INVALID_INPUT',
      message: 'Malformed percent-encoding in the request path',
    });
    expect(logLines.some((line) => line.msg === 'unhandled error')).toBe(false);
  });

  it('never logs the query string: keys sent as ?api_key= stay out of the log', async () => {
    await fetch(`${baseUrl}/ok?api_key=pik_reg_secretsecret123&other=1`);
    const [line] = await loggedLines((l) => l.msg === 'request completed');
    expect(JSON.stringify(line)).not.toContain('pik_reg_secretsecret123');
    expect(JSON.stringify(logLines)).not.toContain('pik_reg_secretsecret123');
    expect((line as { req: { url: string } }).req.url).toBe('/ok?[query redacted]');
  });

  it.each(['5000.00000000000001', '0.1000000000000000000001', '12345678901234567890', '1e400'])(
    'refuses the number %s that a double cannot hold exactly, instead of rounding it',
    async (literal) => {
      const reply = await postRaw('/echo', `{"sumInsured":${literal}}`, 'application/json');
      expect(reply.status).toBe(400);
      expect(((await reply.json()) as { error: { message: string } }).error.message).toContain(
        `The number ${literal} has more digits than can be held exactly`,
      );
      expect(echoCalls).toBe(0);
    },
  );

  it.each(['5000.0000000001', '0.1', '-36.821944', '1.50', '1e21', '100', '-0', '2.5E-3'])(
    'lets %s through: its decimal is the double',
    async (literal) => {
      const reply = await postRaw(
        '/echo',
        `{"n":${literal},"s":"1.000000000000000000001"}`,
        'application/json',
      );
      expect(reply.status).toBe(200);
    },
  );

  it.each([
    ['a NUL', 'Amina\\u0000Wanjiru', 'contains a control or bidi-override character (U+0000)'],
    [
      'a right-to-left override',
      'Amina\\u202eurijnaW',
      'contains a control or bidi-override character (U+202E)',
    ],
    ['a lone high surrogate', 'Amina\\ud800', 'contains a lone surrogate (U+D800)'],
    ['a lone low surrogate', '\\udc00Amina', 'contains a lone surrogate (U+DC00)'],
  ])('refuses a string with %s, naming the field', async (_what, escaped, message) => {
    const reply = await postRaw('/echo', `{"farmer":{"name":"${escaped}"}}`, 'application/json');
    expect(reply.status).toBe(400);
    expect(((await reply.json()) as { error: unknown }).error).toEqual({
      code: 'INVALID_INPUT',
      message: 'Text contains a character we do not accept',
      details: [{ field: 'farmer.name', message }],
    });
    expect(echoCalls).toBe(0);
  });

  it('keeps tabs, newlines, emoji (a valid surrogate pair) and right-to-left text', async () => {
    const body = { note: 'line one\n\tline two', name: 'Kofi 🌽 Mensah', arabic: 'مزارع\u200f' };
    const reply = await postRaw('/echo', JSON.stringify(body), 'application/json');
    expect(reply.status).toBe(200);
    expect(((await reply.json()) as { data: { body: unknown } }).data.body).toEqual(body);
  });

  it('checks query strings too', async () => {
    const reply = await fetch(`${baseUrl}/ok?status=%E2%80%AE`);
    expect(reply.status).toBe(400);
  });
});

describe('request deadline', () => {
  let slow: Server;
  let slowUrl: string;
  beforeAll(async () => {
    const app = createApp(logger, { deadlineMs: 100 });
    app.get('/late-answer', async (_req, res) => {
      await new Promise((resolve) => setTimeout(resolve, 300));
      res.json({ success: true, data: { late: true } });
    });
    app.get('/late-failure', async () => {
      await new Promise((resolve) => setTimeout(resolve, 300));
      throw new Error('gave up on a hung dependency');
    });
    app.get('/quick', (_req, res) => res.json({ success: true, data: { quick: true } }));
    finishApp(app, logger);
    slow = app.listen(0, '127.0.0.1');
    await once(slow, 'listening');
    slowUrl = `http://127.0.0.1:${(slow.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    slow.closeAllConnections();
    await new Promise<void>((resolve, reject) => slow.close((error) => (error ? reject(error) : resolve())));
  });

  it.each(['/late-answer', '/late-failure'])(
    'answers %s with 503 SERVICE_UNAVAILABLE at the deadline and drops what the handler does later',
    async (path) => {
      const response = await fetch(`${slowUrl}${path}`);
      expect(response.status).toBe(503);
      expect(response.headers.get('retry-after')).toBe('5');
      const body = (await response.json()) as { error: { code: string; message: string } };
      expect(body.error).toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
      expect(body.error.message).toMatch(/did not complete within 0\.1 s/);
      // The handler finishes later without breaking the connection or the server.
      await loggedLines(
        (line) => /after its deadline/.test(String(line.msg)) || line.msg === 'unhandled error',
      );
      expect(logLines.some((line) => line.msg === 'unhandled error')).toBe(false);
      const quick = await fetch(`${slowUrl}/quick`);
      expect(quick.status).toBe(200);
    },
  );
});
