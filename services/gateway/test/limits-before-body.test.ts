import { connect, type Socket } from 'node:net';
import { deflateSync } from 'node:zlib';
import { startTestGateway, type TestGateway } from './support';

/**
 * Issue 14, row 4: anonymous traffic is limited before its body is read. A garbage compressed
 * body used to be parsed (and answered 500) before any limit, with no rate-limit headers.
 */
describe('limits taken before the body is read', () => {
  let t: TestGateway;
  beforeAll(async () => {
    t = await startTestGateway({ ANONYMOUS_LIMIT_POINTS: '3', REGISTRATION_LIMIT_POINTS: '2' });
  });
  afterAll(async () => {
    await t.stop();
  });

  const garbage = Buffer.from('this is not deflate at all');

  async function postGarbage(path: string, encoding: string) {
    return fetch(`${t.gateway.partnerUrl}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-encoding': encoding },
      body: garbage,
    });
  }

  it('counts anonymous garbage bodies against the client address and answers 429 once it is spent', async () => {
    const answers: Array<{ status: number; remaining: string | null; code: string }> = [];
    for (const encoding of ['deflate', 'gzip', 'br', 'deflate']) {
      const reply = await postGarbage('/farmers', encoding);
      const body = (await reply.json()) as { error: { code: string } };
      answers.push({
        status: reply.status,
        remaining: reply.headers.get('x-ratelimit-remaining'),
        code: body.error.code,
      });
    }
    // Under the budget: the missing credential answers (the body is never parsed for a caller
    // we cannot identify); then 429, with the headers on every answer.
    expect(answers).toEqual([
      { status: 401, remaining: '2', code: 'UNAUTHORIZED' },
      { status: 401, remaining: '1', code: 'UNAUTHORIZED' },
      { status: 401, remaining: '0', code: 'UNAUTHORIZED' },
      { status: 429, remaining: '0', code: 'RATE_LIMIT_EXCEEDED' },
    ]);
  });

  it('answers a spent registration budget without waiting for the body', async () => {
    const valid = { name: 'Early Limit Co', type: 'COOPERATIVE', countryCode: 'KE' };
    for (let i = 0; i < 2; i++) {
      const reply = await t.api('POST', '/auth/register-organization', {
        body: { ...valid, name: `Early Limit Co ${i}` },
      });
      expect(reply.status).toBe(201);
    }
    // Headers promise 100 KB of body; only a few bytes are ever sent. The answer must come
    // anyway, which it can only do if the limit is taken before the body is read.
    const raw = await rawRequest(
      t.gateway.partnerUrl,
      [
        'POST /api/auth/register-organization HTTP/1.1',
        'Host: localhost',
        'Content-Type: application/json',
        'Content-Length: 100000',
        'Connection: close',
        '',
        '{"name":',
      ].join('\r\n'),
    );
    expect(raw).toMatch(/^HTTP\/1\.1 429 /);
    expect(raw).toMatch(/x-ratelimit-limit: 2/i);
  });

  it('refuses an ops call without the ops token before reading its body', async () => {
    const raw = await rawRequest(
      t.gateway.opsUrl,
      [
        'POST /ops/determinations/batch HTTP/1.1',
        'Host: localhost',
        'Content-Type: application/json',
        'Content-Length: 10000000',
        'Connection: close',
        '',
        '{"assessments":[',
      ].join('\r\n'),
    );
    expect(raw).toMatch(/^HTTP\/1\.1 401 /);
  });

  it('still reads the bodies of callers within their budget: a good deflated body is accepted', async () => {
    const fresh = await startTestGateway({ ANONYMOUS_LIMIT_POINTS: '3', REGISTRATION_LIMIT_POINTS: '5' });
    try {
      const reply = await fetch(`${fresh.gateway.partnerUrl}/auth/register-organization`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-encoding': 'deflate' },
        body: deflateSync(JSON.stringify({ name: 'Deflated Co', type: 'COOPERATIVE', countryCode: 'KE' })),
      });
      expect(reply.status).toBe(201);
      const bad = await fetch(`${fresh.gateway.partnerUrl}/auth/register-organization`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-encoding': 'deflate' },
        body: garbage,
      });
      expect(bad.status).toBe(400);
      expect(((await bad.json()) as { error: { message: string } }).error.message).toBe(
        'Malformed deflate body',
      );
      expect(bad.headers.get('x-ratelimit-remaining')).toBe('3');
    } finally {
      await fresh.stop();
    }
  });
});

/** Sends `head` on a raw socket and resolves with whatever the server answers before closing. */
function rawRequest(partnerUrl: string, head: string): Promise<string> {
  const { hostname, port } = new URL(partnerUrl);
  return new Promise((resolve, reject) => {
    const socket: Socket = connect(Number(port), hostname, () => socket.write(head));
    let answer = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      answer += chunk;
      if (answer.includes('\r\n\r\n')) {
        socket.destroy();
        resolve(answer);
      }
    });
    socket.on('error', reject);
    socket.on('close', () => resolve(answer));
  });
}
