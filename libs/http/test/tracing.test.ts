import { spawn } from 'node:child_process';
import { once } from 'node:events';
import http, { type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { AppError, createApp, finishApp } from '@parametric/http';
import { createLogger } from '@parametric/logger';
import { captureLogs } from '@parametric/test-harness';
import { outbound, parseTraceparent } from '@parametric/tracing';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT = '00f067aa0ba902b7';
const TRACEPARENT = `00-${TRACE}-${PARENT}-01`;

/** An app whose handler logs through the service's plain logger (not `req.log`) and calls out. */
async function startApp() {
  const logs = captureLogs();
  const logger = createLogger({ name: 'trace-test', level: 'info', destination: logs.destination });
  const app = createApp(logger);
  app.get('/work', async (req, res) => {
    await new Promise((resolve) => setImmediate(resolve));
    logger.info('deep in the call chain');
    req.log.info('via req.log');
    const sent = await outbound('call out', async (traceparent) => traceparent);
    res.json({ success: true, data: { sent } });
  });
  app.get('/fails', async () => {
    await Promise.resolve();
    throw new AppError('CONFLICT', 'no');
  });
  finishApp(app, logger);
  const server: Server = app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    logs,
    url,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

async function get(url: string, headers: Record<string, string> = {}) {
  const res = await fetch(url, { headers });
  const body = (await res.json()) as { data?: { sent?: string } };
  return { status: res.status, reqId: res.headers.get('x-request-id'), body };
}

describe('a request in the logs', () => {
  let app: Awaited<ReturnType<typeof startApp>>;
  beforeAll(async () => {
    app = await startApp();
  });
  afterAll(async () => {
    await app.close();
  });

  it("continues a caller's traceparent: every line has its trace id, the request id and our own span", async () => {
    const reply = await get(`${app.url}/work`, { traceparent: TRACEPARENT });
    const lines = app.logs.records().filter((r) => r.reqId === reply.reqId);
    expect(lines.map((l) => l.msg).sort()).toEqual([
      'deep in the call chain',
      'request completed',
      'via req.log',
    ]);
    for (const line of lines) expect(line).toMatchObject({ traceId: TRACE, reqId: reply.reqId });
    const spans = new Set(lines.map((l) => l.spanId));
    expect(spans.size).toBe(1);
    const [spanId] = spans;
    expect(spanId).toMatch(/^[0-9a-f]{16}$/);
    expect(spanId).not.toBe(PARENT);
    // The next hop is told: this trace, our span as its parent.
    expect(parseTraceparent(reply.body.data?.sent)).toEqual({ traceId: TRACE, parentId: spanId });
  });

  it('writes each field once on a req.log line', async () => {
    const reply = await get(`${app.url}/work`, { traceparent: TRACEPARENT });
    const line = app.logs.lines().find((l) => l.includes('via req.log') && l.includes(String(reply.reqId)));
    expect(line?.match(/"traceId"/g)).toHaveLength(1);
    expect(line?.match(/"reqId"/g)).toHaveLength(1);
  });

  it.each([
    ['no traceparent', {}],
    ['a malformed one', { traceparent: `00-${TRACE}-${PARENT}` }],
  ])('starts a new trace for a request with %s', async (_what, headers: Record<string, string>) => {
    const first = await get(`${app.url}/work`, headers);
    const second = await get(`${app.url}/work`, headers);
    const traceOf = (reqId: string | null) =>
      app.logs.records().find((r) => r.reqId === reqId && r.msg === 'deep in the call chain')?.traceId;
    expect(traceOf(first.reqId)).toMatch(/^[0-9a-f]{32}$/);
    expect(traceOf(first.reqId)).not.toBe(traceOf(second.reqId));
    expect(traceOf(first.reqId)).not.toBe(TRACE);
  });

  it('answers errors with the request id too, and logs them under it', async () => {
    for (const path of ['/fails', '/no/such/route']) {
      const reply = await get(`${app.url}${path}`, { traceparent: TRACEPARENT });
      expect(reply.status).toBeGreaterThanOrEqual(400);
      expect(reply.reqId).toMatch(/^[0-9a-f-]{36}$/);
      const line = app.logs.records().find((r) => r.reqId === reply.reqId);
      expect(line).toMatchObject({ traceId: TRACE, msg: 'request completed' });
    }
  });
});

/** A stand-in OTLP/HTTP collector: keeps every `POST /v1/traces` body. */
async function startCollector() {
  const received: Array<{ path: string; body: string }> = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ path: req.url ?? '', body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
}

function spansOf(bodies: Array<{ body: string }>): OtlpSpan[] {
  return bodies.flatMap(({ body }) =>
    (
      JSON.parse(body) as { resourceSpans: Array<{ scopeSpans: Array<{ spans: OtlpSpan[] }> }> }
    ).resourceSpans.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans)),
  );
}

const FIXTURE = path.join(__dirname, 'fixtures', 'traced-service.ts');
const REPO = path.join(__dirname, '..', '..', '..');

/** Runs the fixture service to its end; its log lines and its result. */
async function runService(extraEnv: Record<string, string>) {
  const env: Record<string, string | undefined> = {
    ...process.env,
    MONGO_URL: 'mongodb://unused',
    REDIS_URL: 'redis://unused',
    INTERNAL_SIGNING_SECRET: 'a-signing-secret-of-32-characters',
    TRACEPARENT,
    ...extraEnv,
  };
  if (!('OTEL_EXPORTER_OTLP_ENDPOINT' in extraEnv)) delete env.OTEL_EXPORTER_OTLP_ENDPOINT;
  const child = spawn(process.execPath, ['--import', 'tsx', FIXTURE], { cwd: REPO, env, stdio: 'pipe' });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => {
    stdout += c.toString('utf8');
  });
  child.stderr.on('data', (c: Buffer) => {
    stderr += c.toString('utf8');
  });
  const [code] = (await once(child, 'exit')) as [number | null];
  if (code !== 0) throw new Error(`fixture exited ${code}: ${stderr}`);
  const records = stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  const result = records.find((r) => r.result)?.result as { reqId: string; sent: string; exporting: boolean };
  return { records, result };
}

describe('span export over OTLP', () => {
  let collector: Awaited<ReturnType<typeof startCollector>>;
  beforeEach(async () => {
    collector = await startCollector();
  });
  afterEach(async () => {
    await collector.close();
  });

  it('is off without OTEL_EXPORTER_OTLP_ENDPOINT: a whole service run sends nothing', async () => {
    const { result, records } = await runService({});
    expect(result.exporting).toBe(false);
    // Logs still carry the trace: the caller's trace id, continued.
    expect(records.find((r) => r.msg === 'deep in the call chain')).toMatchObject({ traceId: TRACE });
    expect(collector.received).toEqual([]);
  });

  it('sends the spans of a request to <endpoint>/v1/traces with the trace and span ids of the logs', async () => {
    const { result, records } = await runService({ OTEL_EXPORTER_OTLP_ENDPOINT: collector.url });
    expect(result.exporting).toBe(true);
    expect(collector.received.length).toBeGreaterThan(0);
    expect(collector.received.every((r) => r.path === '/v1/traces')).toBe(true);

    const logged = records.find((r) => r.reqId === result.reqId && r.msg === 'deep in the call chain');
    expect(logged).toMatchObject({ traceId: TRACE });
    const spans = spansOf(collector.received);
    // The request's span is the one the log lines name, a child of the caller's.
    const server = spans.find((s) => s.spanId === logged?.spanId);
    expect(server).toMatchObject({ traceId: TRACE, parentSpanId: PARENT });
    // The call out is a client span of it, and the header the next hop got names that span.
    const sent = parseTraceparent(result.sent);
    const client = spans.find((s) => s.spanId === sent?.parentId);
    expect(client).toMatchObject({ traceId: TRACE, parentSpanId: logged?.spanId });
  });
});
