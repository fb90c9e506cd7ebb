import { createHmac } from 'node:crypto';
import { once } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  CONTEXT_HEADER,
  CONTEXT_MAX_AGE_MS,
  createApp,
  finishApp,
  type InternalContext,
  organizationOf,
  requireInternalContext,
  SIGNATURE_HEADER,
  signContext,
  verifyContext,
  verifyOpsContext,
} from '@parametric/http';
import { createLogger } from '@parametric/logger';

const SECRET = 'internal-hmac-secret-0123456789abcdef';
const ORG_A = '6a1f9d2c-3b4e-4f5a-8b6c-7d8e9f0a1b2c';
const ORG_B = '0b9e8d7c-6f5a-4e3d-9c2b-1a0f9e8d7c6b';
const NOW = Date.UTC(2026, 5, 1, 12, 0, 0);

function context(overrides: Partial<InternalContext> = {}): InternalContext {
  return { organizationId: ORG_A, role: 'ORG_ADMIN', requestId: 'req-1', issuedAt: NOW, ...overrides };
}

/** Signs an arbitrary payload exactly as a (compromised or buggy) signer holding the secret would. */
function signRaw(payload: unknown, secret = SECRET): Record<string, string> {
  return signContext(payload as InternalContext, secret);
}

describe('signContext / verifyContext', () => {
  it('round-trips a context signed with the same secret', () => {
    const headers = signContext(context(), SECRET);
    expect(Object.keys(headers).sort()).toEqual([CONTEXT_HEADER, SIGNATURE_HEADER].sort());
    expect(verifyContext(headers, SECRET, NOW)).toEqual(context());
  });

  it('accepts a context up to CONTEXT_MAX_AGE_MS old', () => {
    const headers = signContext(context({ issuedAt: NOW - CONTEXT_MAX_AGE_MS }), SECRET);
    expect(verifyContext(headers, SECRET, NOW)?.organizationId).toBe(ORG_A);
  });

  it('uses the current time when none is passed', () => {
    const headers = signContext(context({ issuedAt: Date.now() }), SECRET);
    expect(verifyContext(headers, SECRET)?.organizationId).toBe(ORG_A);
  });

  it('rejects a context whose payload was changed after signing', () => {
    const headers = signContext(context(), SECRET);
    const forged = Buffer.from(JSON.stringify(context({ organizationId: ORG_B }))).toString('base64url');
    expect(verifyContext({ ...headers, [CONTEXT_HEADER]: forged }, SECRET, NOW)).toBeUndefined();
  });

  it('rejects a context whose payload had one character flipped', () => {
    const headers = signContext(context(), SECRET);
    const payload = headers[CONTEXT_HEADER] as string;
    const flipped = `${payload.slice(0, 10)}${payload[10] === 'A' ? 'B' : 'A'}${payload.slice(11)}`;
    expect(verifyContext({ ...headers, [CONTEXT_HEADER]: flipped }, SECRET, NOW)).toBeUndefined();
  });

  it('rejects a context signed with a different secret', () => {
    const headers = signContext(context(), 'another-secret-0123456789abcdef');
    expect(verifyContext(headers, SECRET, NOW)).toBeUndefined();
  });

  it('rejects a context whose signature was altered', () => {
    const headers = signContext(context(), SECRET);
    const signature = headers[SIGNATURE_HEADER] as string;
    const altered = `${signature.slice(0, -1)}${signature.endsWith('0') ? '1' : '0'}`;
    expect(verifyContext({ ...headers, [SIGNATURE_HEADER]: altered }, SECRET, NOW)).toBeUndefined();
  });

  it.each<[string, (signature: string) => string]>([
    ['one byte short', (s) => s.slice(0, -2)],
    ['one hex digit short', (s) => s.slice(0, -1)],
    ['empty', () => ''],
    ['one byte too long', (s) => `${s}00`],
    ['one hex digit too long', (s) => `${s}0`],
    ['followed by non-hex characters', (s) => `${s}zz`],
    ['doubled', (s) => `${s}${s}`],
  ])('rejects a signature of the wrong length (%s)', (_label, mangle) => {
    const headers = signContext(context(), SECRET);
    const signature = mangle(headers[SIGNATURE_HEADER] as string);
    expect(verifyContext({ ...headers, [SIGNATURE_HEADER]: signature }, SECRET, NOW)).toBeUndefined();
  });

  it('rejects a context older than CONTEXT_MAX_AGE_MS', () => {
    const headers = signContext(context({ issuedAt: NOW - CONTEXT_MAX_AGE_MS - 1 }), SECRET);
    expect(verifyContext(headers, SECRET, NOW)).toBeUndefined();
  });

  it('rejects a context issued more than CONTEXT_MAX_AGE_MS in the future', () => {
    const headers = signContext(context({ issuedAt: NOW + CONTEXT_MAX_AGE_MS + 1 }), SECRET);
    expect(verifyContext(headers, SECRET, NOW)).toBeUndefined();
  });

  it('rejects a signed context with an extra field', () => {
    const headers = signRaw({ ...context(), scopes: ['*'] });
    expect(verifyContext(headers, SECRET, NOW)).toBeUndefined();
  });

  it.each(['org-a', '', '6a1f9d2c3b4e4f5a8b6c7d8e9f0a1b2c', `${ORG_A}x`])(
    'rejects a signed context with the non-uuid organizationId %j',
    (organizationId) => {
      const headers = signRaw({ ...context(), organizationId });
      expect(verifyContext(headers, SECRET, NOW)).toBeUndefined();
    },
  );

  it('rejects a signed context with another role', () => {
    expect(verifyContext(signRaw({ ...context(), role: 'SUPER_ADMIN' }), SECRET, NOW)).toBeUndefined();
  });

  it('rejects a signed context missing a field', () => {
    const { requestId: _omitted, ...withoutRequestId } = context();
    expect(verifyContext(signRaw(withoutRequestId), SECRET, NOW)).toBeUndefined();
  });

  it('rejects a correctly signed payload that is not JSON', () => {
    const payload = Buffer.from('not json at all').toString('base64url');
    const signature = createHmac('sha256', SECRET).update(payload).digest('hex');
    expect(
      verifyContext({ [CONTEXT_HEADER]: payload, [SIGNATURE_HEADER]: signature }, SECRET, NOW),
    ).toBeUndefined();
  });

  it('rejects requests without the context or signature header', () => {
    const headers = signContext(context(), SECRET);
    expect(verifyContext({}, SECRET, NOW)).toBeUndefined();
    expect(verifyContext({ [CONTEXT_HEADER]: headers[CONTEXT_HEADER] }, SECRET, NOW)).toBeUndefined();
    expect(verifyContext({ [SIGNATURE_HEADER]: headers[SIGNATURE_HEADER] }, SECRET, NOW)).toBeUndefined();
  });

  it('rejects repeated headers', () => {
    const headers = signContext(context(), SECRET);
    const signature = headers[SIGNATURE_HEADER] as string;
    expect(
      verifyContext({ ...headers, [SIGNATURE_HEADER]: [signature, signature] }, SECRET, NOW),
    ).toBeUndefined();
  });
});

describe('requireInternalContext on a real app', () => {
  const logger = createLogger({ name: 'http-internal-context-test', level: 'silent' });
  let server: Server;
  let baseUrl: string;
  let reached: string[];

  beforeAll(async () => {
    const app = createApp(logger);
    app.get('/unguarded', (req, res) =>
      res.json({ success: true, data: { organizationId: organizationOf(req) } }),
    );
    app.use('/internal', requireInternalContext(SECRET));
    app.get('/internal/whoami', (req, res) => {
      const organizationId = organizationOf(req);
      reached.push(organizationId);
      res.json({ success: true, data: { organizationId, requestId: req.context?.requestId } });
    });
    app.post('/internal/policies', (req, res) => {
      reached.push(organizationOf(req));
      res.status(201).json({ success: true, data: { organizationId: organizationOf(req), body: req.body } });
    });
    finishApp(app, logger);
    server = app.listen(0, '127.0.0.1');
    await once(server, 'listening');
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  beforeEach(() => {
    reached = [];
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve, reject) =>
      server.close((error) => (error ? reject(error) : resolve())),
    );
  });

  function signedNow(overrides: Partial<InternalContext> = {}, secret = SECRET) {
    return signContext(context({ issuedAt: Date.now(), ...overrides }), secret);
  }

  async function expectUnauthorized(response: Response) {
    expect(response.status).toBe(401);
    expect(await response.json()).toEqual({
      success: false,
      error: { code: 'UNAUTHORIZED', message: expect.any(String) },
    });
    expect(reached).toEqual([]);
  }

  it('answers an unsigned request with 401 UNAUTHORIZED and does not reach the handler', async () => {
    await expectUnauthorized(await fetch(`${baseUrl}/internal/whoami`));
  });

  it('answers a request signed with another secret with 401 UNAUTHORIZED', async () => {
    await expectUnauthorized(
      await fetch(`${baseUrl}/internal/whoami`, { headers: signedNow({}, 'not-the-service-secret-000000') }),
    );
  });

  it('answers an expired signed request with 401 UNAUTHORIZED', async () => {
    const headers = signedNow({ issuedAt: Date.now() - CONTEXT_MAX_AGE_MS - 5_000 });
    await expectUnauthorized(await fetch(`${baseUrl}/internal/whoami`, { headers }));
  });

  it('answers a request whose organization was swapped after signing with 401 UNAUTHORIZED', async () => {
    const headers = signedNow();
    headers[CONTEXT_HEADER] = Buffer.from(
      JSON.stringify(context({ organizationId: ORG_B, issuedAt: Date.now() })),
    ).toString('base64url');
    await expectUnauthorized(await fetch(`${baseUrl}/internal/whoami`, { headers }));
  });

  it('lets a signed request reach the handler, where organizationOf returns the signed organization', async () => {
    const response = await fetch(`${baseUrl}/internal/whoami`, {
      headers: signedNow({ requestId: 'gw-77' }),
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      success: true,
      data: { organizationId: ORG_A, requestId: 'gw-77' },
    });
    expect(reached).toEqual([ORG_A]);
  });

  it('takes the organization from the signed context, not from the request body', async () => {
    const response = await fetch(`${baseUrl}/internal/policies`, {
      method: 'POST',
      headers: { ...signedNow({ organizationId: ORG_B }), 'content-type': 'application/json' },
      body: JSON.stringify({ organizationId: ORG_A }),
    });
    expect(response.status).toBe(201);
    expect(await response.json()).toEqual({
      success: true,
      data: { organizationId: ORG_B, body: { organizationId: ORG_A } },
    });
    expect(reached).toEqual([ORG_B]);
  });

  it('organizationOf refuses to answer on a route without requireInternalContext (500, nothing leaked)', async () => {
    const response = await fetch(`${baseUrl}/unguarded`, { headers: signedNow() });
    expect(response.status).toBe(500);
    expect(await response.json()).toEqual({
      success: false,
      error: { code: 'INTERNAL_ERROR', message: 'An unexpected error occurred' },
    });
  });
});

describe('ops context (gateway ops API → services)', () => {
  const SECRET = 'ops-context-test-secret-0123456789';
  const orgContext = {
    organizationId: '0b1c2d3e-4f50-4a6b-8c7d-9e0f1a2b3c4d',
    role: 'ORG_ADMIN' as const,
    requestId: 'r-1',
    issuedAt: Date.now(),
  };
  const opsContext = {
    role: 'SUPPORT',
    capabilities: ['ops.policy:read' as const],
    requestId: 'r-2',
    issuedAt: Date.now(),
  };

  it('round-trips a signed ops context', () => {
    expect(verifyOpsContext(signContext(opsContext, SECRET), SECRET)).toEqual(opsContext);
  });

  it('never accepts a partner (organization) context as an ops context, or the other way round', () => {
    expect(verifyOpsContext(signContext(orgContext, SECRET), SECRET)).toBeUndefined();
    expect(verifyContext(signContext(opsContext, SECRET), SECRET)).toBeUndefined();
  });

  it('rejects an ops context signed with another secret or too old', () => {
    expect(
      verifyOpsContext(signContext(opsContext, 'another-secret-0123456789abcdef'), SECRET),
    ).toBeUndefined();
    const old = { ...opsContext, issuedAt: Date.now() - CONTEXT_MAX_AGE_MS - 1000 };
    expect(verifyOpsContext(signContext(old, SECRET), SECRET)).toBeUndefined();
  });
});
