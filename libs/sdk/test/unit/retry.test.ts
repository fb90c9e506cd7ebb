/**
 * What the client sends again, against a stand-in API on a real socket: reads and keyed writes on
 * a network error, 429 or 503 (one key for every attempt of a call), other writes never, and
 * within the attempt and wait bounds.
 */
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createClient, retryAfterMs } from '../../src';

interface Seen {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** How the stand-in answers its nth request (from 1); 'drop' closes the socket unanswered. */
type Answer = (n: number, res: ServerResponse) => 'drop' | undefined;

let server: Server;
let baseUrl: string;
let seen: Seen[];
let answer: Answer;

const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
  return undefined;
};
const unavailable = (res: ServerResponse, retryAfter = '0') =>
  json(
    res,
    503,
    { success: false, error: { code: 'SERVICE_UNAVAILABLE', message: 'try later' } },
    {
      'retry-after': retryAfter,
    },
  );

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      seen.push({
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString(),
      });
      if (answer(seen.length, res) === 'drop') req.socket.destroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

beforeEach(() => {
  seen = [];
  answer = (_n, res) => json(res, 200, { success: true, data: { id: 'org-1' } });
});

const fast = { baseDelayMs: 1, maxDelayMs: 5 };
const PURCHASE = {
  farmerId: '3f2b8c1e-7d4a-4e6b-9a1c-2b3d4e5f6a7b',
  productType: 'CROP' as const,
  plotId: '9b1d2c3e-4f5a-4b6c-8d7e-1f2a3b4c5d6e',
  sumInsured: 50_000,
  coverageType: 'DROUGHT' as const,
  durationDays: 180,
};

describe('authentication', () => {
  it('sends the API key as x-api-key', async () => {
    const client = createClient({ baseUrl, apiKey: 'pis_live_key' });
    const { data, response } = await client.GET('/organizations/me');
    expect(response.status).toBe(200);
    expect(data?.success).toBe(true);
    expect(seen[0]?.headers['x-api-key']).toBe('pis_live_key');
    expect(seen[0]?.headers.authorization).toBeUndefined();
    expect(seen[0]?.url).toBe('/api/organizations/me');
  });

  it('sends a dashboard access token as a bearer token', async () => {
    const client = createClient({ baseUrl, accessToken: 'eyJ.token' });
    await client.GET('/organizations/me');
    expect(seen[0]?.headers.authorization).toBe('Bearer eyJ.token');
    expect(seen[0]?.headers['x-api-key']).toBeUndefined();
  });

  it('refuses both at once, as the API would', () => {
    expect(() => createClient({ baseUrl, apiKey: 'k', accessToken: 't' } as never)).toThrow(TypeError);
  });
});

describe('retries', () => {
  it('retries a GET after 503s, honouring Retry-After, and answers the success', async () => {
    answer = (n, res) =>
      n < 3 ? unavailable(res) : json(res, 200, { success: true, data: { id: 'org-1' } });
    const client = createClient({ baseUrl, apiKey: 'k', retry: fast });
    const { data, response } = await client.GET('/organizations/me');
    expect(response.status).toBe(200);
    expect(data?.data.id).toBe('org-1');
    expect(seen).toHaveLength(3);
  });

  it('waits what Retry-After says rather than its own backoff', async () => {
    answer = (n, res) =>
      n === 1 ? unavailable(res, '1') : json(res, 200, { success: true, data: { id: 'org-1' } });
    const client = createClient({ baseUrl, apiKey: 'k', retry: fast });
    const started = Date.now();
    const { response } = await client.GET('/organizations/me');
    expect(response.status).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
  });

  it('retries a GET whose connection dropped before an answer', async () => {
    answer = (n, res) => (n === 1 ? 'drop' : json(res, 200, { success: true, data: { id: 'org-1' } }));
    const client = createClient({ baseUrl, apiKey: 'k', retry: fast });
    const { response } = await client.GET('/organizations/me');
    expect(response.status).toBe(200);
    expect(seen).toHaveLength(2);
  });

  it('gives a purchase one Idempotency-Key and resends it, body and all, on every attempt', async () => {
    answer = (n, res) =>
      n === 1
        ? 'drop'
        : n === 2
          ? json(res, 429, {}, { 'retry-after': '0' })
          : json(res, 201, { success: true });
    const client = createClient({ baseUrl, apiKey: 'k', retry: fast });
    const { response } = await client.POST('/policies/purchase', { body: PURCHASE });
    expect(response.status).toBe(201);
    expect(seen).toHaveLength(3);
    const keys = new Set(seen.map((s) => s.headers['idempotency-key']));
    expect(keys.size).toBe(1);
    expect([...keys][0]).toMatch(/^[0-9a-f-]{36}$/);
    for (const s of seen) expect(JSON.parse(s.body)).toEqual(PURCHASE);
  });

  it('gives each purchase call a key of its own', async () => {
    answer = (_n, res) => json(res, 201, { success: true });
    const client = createClient({ baseUrl, apiKey: 'k', retry: fast });
    await client.POST('/policies/purchase', { body: PURCHASE });
    await client.POST('/policies/purchase', { body: PURCHASE });
    expect(seen[0]?.headers['idempotency-key']).not.toBe(seen[1]?.headers['idempotency-key']);
  });

  it("keeps the caller's own key (an order id) and retries with it", async () => {
    answer = (n, res) => (n === 1 ? unavailable(res) : json(res, 201, { success: true }));
    const client = createClient({ baseUrl, apiKey: 'k', retry: fast });
    await client.POST('/policies/purchase', {
      body: PURCHASE,
      params: { header: { 'Idempotency-Key': 'order-42' } },
    });
    expect(seen.map((s) => s.headers['idempotency-key'])).toEqual(['order-42', 'order-42']);
  });

  it('never resends a write without a key: a 503 or a dropped connection reaches the caller', async () => {
    answer = (_n, res) => unavailable(res);
    const client = createClient({ baseUrl, apiKey: 'k', retry: fast });
    const farmer = {
      firstName: 'A',
      lastName: 'B',
      phoneNumber: '+254700000001',
      nationalId: 'KE1',
      region: 'Nakuru',
    };
    const { response, error } = await client.POST('/farmers', { body: farmer });
    expect(response.status).toBe(503);
    expect(error?.error.code).toBe('SERVICE_UNAVAILABLE');
    expect(seen).toHaveLength(1);
    expect(seen[0]?.headers['idempotency-key']).toBeUndefined();

    answer = () => 'drop';
    await expect(client.POST('/farmers', { body: farmer })).rejects.toThrow();
    expect(seen).toHaveLength(2);
  });

  it('stops after maxAttempts and answers the last refusal', async () => {
    answer = (_n, res) => unavailable(res);
    const client = createClient({ baseUrl, apiKey: 'k', retry: { ...fast, maxAttempts: 3 } });
    const { response } = await client.GET('/organizations/me');
    expect(response.status).toBe(503);
    expect(seen).toHaveLength(3);
  });

  it('throws the network error when no attempt got an answer', async () => {
    answer = () => 'drop';
    const client = createClient({ baseUrl, apiKey: 'k', retry: { ...fast, maxAttempts: 2 } });
    await expect(client.GET('/organizations/me')).rejects.toThrow();
    expect(seen).toHaveLength(2);
  });

  it('does not wait past maxTotalWaitMs: a long Retry-After is answered at once', async () => {
    answer = (_n, res) => json(res, 429, { success: false }, { 'retry-after': '60' });
    const client = createClient({ baseUrl, apiKey: 'k', retry: { ...fast, maxTotalWaitMs: 1_000 } });
    const started = Date.now();
    const { response } = await client.GET('/organizations/me');
    expect(response.status).toBe(429);
    expect(seen).toHaveLength(1);
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it("ends a call, waits included, when the caller's signal aborts", async () => {
    answer = (_n, res) => unavailable(res, '5');
    const client = createClient({ baseUrl, apiKey: 'k', retry: fast });
    const started = Date.now();
    await expect(client.GET('/organizations/me', { signal: AbortSignal.timeout(200) })).rejects.toThrow();
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(seen).toHaveLength(1);
  });

  it('sends once with maxAttempts 1', async () => {
    answer = (_n, res) => unavailable(res);
    const client = createClient({ baseUrl, apiKey: 'k', retry: { maxAttempts: 1 } });
    await client.GET('/organizations/me');
    expect(seen).toHaveLength(1);
  });
});

describe('retryAfterMs', () => {
  const withHeader = (value: string) =>
    new Response(null, { status: 503, headers: { 'retry-after': value } });

  it('reads delay-seconds and HTTP dates, and ignores what it cannot read', () => {
    const now = Date.UTC(2026, 10, 28, 12, 0, 0);
    expect(retryAfterMs(withHeader('5'), now)).toBe(5_000);
    expect(retryAfterMs(withHeader(new Date(now + 7_000).toUTCString()), now)).toBe(7_000);
    expect(retryAfterMs(withHeader(new Date(now - 7_000).toUTCString()), now)).toBe(0);
    expect(retryAfterMs(withHeader('soon'), now)).toBeUndefined();
    expect(retryAfterMs(new Response(null, { status: 503 }), now)).toBeUndefined();
  });
});
