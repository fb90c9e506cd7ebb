import {
  OPS_CLIENT_SCOPES,
  OPS_READ_CAPABILITIES,
  OPS_SCOPE_CAPABILITIES,
  type OpsClientScope,
} from '@parametric/contracts';
import { createApp, finishApp, requireOpsContext } from '@parametric/http';
import { createLogger } from '@parametric/logger';
import { captureLogs } from '@parametric/test-harness';
import {
  call,
  opsCapabilityOutcomes,
  type SignedInOperator,
  serveStandIn,
  signInOperator,
  startTestGateway,
  type TestGateway,
} from './support';

/**
 * Issue 25: machine clients (the data provider, a BI export job) exchange a client id and secret
 * for a short-lived ops token (OAuth 2.0 client credentials, RFC 6749, section 4.4) that carries only
 * their scopes' capabilities (the table in libs/contracts ops-clients.ts).
 */
const SECRET = 'test-internal-signing-secret-0123';
const ACCOUNT_FAILURES = 3;
const logs = captureLogs();
let g: TestGateway;
let admin: SignedInOperator;
let determinations: { url: string; close(): Promise<void> };
/** Every secret and token handed out here: none may be logged or audited. */
const handedOut: string[] = [];

/** The determinations service's ops door as the gateway sees it: the real ops-context guard, echoing. */
async function startDeterminations() {
  const logger = createLogger({ name: 'determinations-stand-in', level: 'silent' });
  const app = createApp(logger);
  app.use('/ops', requireOpsContext(SECRET));
  app.post('/ops/determinations', (req, res) => {
    res.status(201).json({ success: true, data: { caller: req.caller, received: req.body } });
  });
  finishApp(app, logger);
  return serveStandIn(app);
}

beforeAll(async () => {
  determinations = await startDeterminations();
  g = await startTestGateway(
    { DETERMINATIONS_URL: determinations.url, LOGIN_ACCOUNT_FAILURES: String(ACCOUNT_FAILURES) },
    createLogger({ name: 'gateway', level: 'trace', destination: logs.destination }),
  );
  admin = await signInOperator(g, 'OPS_ADMIN');
});
afterAll(async () => {
  await g?.stop();
  await determinations?.close();
});

const as = (token: string) => (method: string, path: string, body?: unknown) =>
  call(method, `${g.gateway.opsUrl}${path}`, { headers: { authorization: `Bearer ${token}` }, body });

async function createClient(scopes: OpsClientScope[], name = 'rainfall data provider') {
  const reply = await as(admin.accessToken)('POST', '/clients', { name, scopes });
  expect(reply.status).toBe(201);
  handedOut.push(reply.body.data.clientSecret);
  return reply.body.data as { clientId: string; clientSecret: string; client: { id: string } };
}

/** What the token endpoint answers: section 5.1 on success, section 5.2 on refusal. */
interface TokenAnswer {
  access_token?: string;
  token_type?: string;
  expires_in?: number;
  scope?: string;
  error?: string;
  error_description?: string;
}

/** A token request as an OAuth client library sends it: a form body. */
async function requestToken(form: Record<string, string>, headers: Record<string, string> = {}) {
  const res = await fetch(`${g.gateway.opsUrl}/auth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(form).toString(),
  });
  const body = (await res.json()) as TokenAnswer;
  if (typeof body.access_token === 'string') handedOut.push(body.access_token);
  return { status: res.status, headers: res.headers, body };
}

const basic = (id: string, secret: string) =>
  `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;

async function tokenOf(client: { clientId: string; clientSecret: string }, scope?: string) {
  const reply = await requestToken({
    grant_type: 'client_credentials',
    client_id: client.clientId,
    client_secret: client.clientSecret,
    ...(scope === undefined ? {} : { scope }),
  });
  expect(reply.status).toBe(200);
  return reply.body.access_token as string;
}

describe('machine clients', () => {
  it('get a secret once, and a token answered as RFC 6749, section 5.1 (no envelope, no-store)', async () => {
    const client = await createClient(['determinations:ingest']);
    expect(client.clientSecret).toMatch(/^ocs_/);
    const listed = await as(admin.accessToken)('GET', '/clients');
    expect(listed.status).toBe(200);
    const row = listed.body.data.find((c: { id: string }) => c.id === client.clientId);
    expect(row).toMatchObject({
      name: 'rainfall data provider',
      scopes: ['determinations:ingest'],
      status: 'ACTIVE',
    });
    expect(JSON.stringify(listed.body)).not.toContain(client.clientSecret);

    const reply = await requestToken(
      { grant_type: 'client_credentials' },
      { authorization: basic(client.clientId, client.clientSecret) },
    );
    expect(reply.status).toBe(200);
    expect(reply.headers.get('cache-control')).toBe('no-store');
    expect(reply.body).toEqual({
      access_token: expect.any(String),
      token_type: 'Bearer',
      expires_in: 900,
      scope: 'determinations:ingest',
    });
    const claims = JSON.parse(
      Buffer.from(String(reply.body.access_token).split('.')[1] ?? '', 'base64url').toString(),
    );
    expect(claims).toMatchObject({ aud: 'ops', sub: client.clientId, scope: 'determinations:ingest' });

    const session = await as(String(reply.body.access_token))('GET', '/auth/session');
    // Reading its own session needs ops.session:read, which ingest does not give.
    expect(session.status).toBe(403);
  });

  it('ingests through the ops determination door, is 403 on KYB naming the capability, and is audited by name', async () => {
    const client = await createClient(['determinations:ingest'], 'acme weather feed');
    const token = await tokenOf(client);
    const ingested = await call('POST', `${g.gateway.opsUrl}/determinations`, {
      headers: { authorization: `Bearer ${token}` },
      body: { assessment: 'stand-in' },
      fromStandIn: true,
    });
    expect(ingested.status).toBe(201);
    expect(ingested.body.data).toEqual({
      caller: { role: 'CLIENT', capabilities: ['ops.determination:ingest'] },
      received: { assessment: 'stand-in' },
    });

    const kyb = await as(token)('POST', '/organizations/0b1c2d3e-4f50-4a6b-8c7d-9e0f1a2b3c4d/kyb', {
      status: 'VERIFIED',
    });
    expect(kyb.status).toBe(403);
    expect(kyb.body.error).toEqual({
      code: 'FORBIDDEN',
      message: 'Your role CLIENT lacks the capability ops.organization:write this endpoint needs',
    });

    const audit = await as(admin.accessToken)('GET', `/audit?actor=client:${client.clientId}`);
    expect(audit.status).toBe(200);
    expect(audit.body.data).toEqual([
      expect.objectContaining({
        actor: `client:${client.clientId}`,
        actorKind: 'client',
        actorName: 'acme weather feed',
        actorRole: 'determinations:ingest',
        action: 'opsIngestDetermination',
      }),
    ]);
  });

  it('says who it is at GET /ops/auth/session, and narrows its token to a requested subset of scopes', async () => {
    const client = await createClient(['determinations:ingest', 'ops:read'], 'bi export');
    const both = await tokenOf(client);
    const session = await as(both)('GET', '/auth/session');
    expect(session.body.data).toEqual({
      kind: 'client',
      id: client.clientId,
      scopes: ['determinations:ingest', 'ops:read'],
      capabilities: [...OPS_SCOPE_CAPABILITIES['determinations:ingest'], ...OPS_READ_CAPABILITIES],
    });

    const readOnly = await requestToken({
      grant_type: 'client_credentials',
      client_id: client.clientId,
      client_secret: client.clientSecret,
      scope: 'ops:read',
    });
    expect(readOnly.body.scope).toBe('ops:read');
    const narrowed = await as(String(readOnly.body.access_token))('GET', '/auth/session');
    expect(narrowed.body.data).toMatchObject({
      scopes: ['ops:read'],
      capabilities: [...OPS_READ_CAPABILITIES],
    });
    const ingest = await as(String(readOnly.body.access_token))('POST', '/determinations', {});
    expect(ingest.status).toBe(403);

    const ingestOnly = await createClient(['determinations:ingest']);
    for (const scope of ['ops:read', 'determinations:ingest ops:read', 'ops:write']) {
      const refused = await requestToken({
        grant_type: 'client_credentials',
        client_id: ingestOnly.clientId,
        client_secret: ingestOnly.clientSecret,
        scope,
      });
      expect({ scope, status: refused.status, error: refused.body.error }).toEqual({
        scope,
        status: 400,
        error: 'invalid_scope',
      });
    }
  });

  it('refuses as RFC 6749, section 5.2: bad secret, unknown client, two ways at once, bad grant, bad body', async () => {
    const client = await createClient(['ops:read']);
    const viaBody = await requestToken({
      grant_type: 'client_credentials',
      client_id: client.clientId,
      client_secret: client.clientSecret,
    });
    expect(viaBody.status).toBe(200);

    const wrongBasic = await requestToken(
      { grant_type: 'client_credentials' },
      { authorization: basic(client.clientId, `${client.clientSecret}x`) },
    );
    expect(wrongBasic.status).toBe(401);
    expect(wrongBasic.headers.get('www-authenticate')).toMatch(/^Basic /);
    expect(wrongBasic.body).toEqual({ error: 'invalid_client', error_description: expect.any(String) });
    expect(wrongBasic.headers.get('cache-control')).toBe('no-store');

    const wrongBody = await requestToken({
      grant_type: 'client_credentials',
      client_id: '0b1c2d3e-4f50-4a6b-8c7d-9e0f1a2b3c4d',
      client_secret: client.clientSecret,
    });
    expect({ status: wrongBody.status, error: wrongBody.body.error }).toEqual({
      status: 401,
      error: 'invalid_client',
    });

    const both = await requestToken(
      { grant_type: 'client_credentials', client_id: client.clientId, client_secret: client.clientSecret },
      { authorization: basic(client.clientId, client.clientSecret) },
    );
    expect({ status: both.status, error: both.body.error }).toEqual({
      status: 400,
      error: 'invalid_request',
    });

    for (const grant_type of ['password', 'authorization_code']) {
      const unsupported = await requestToken(
        { grant_type },
        { authorization: basic(client.clientId, client.clientSecret) },
      );
      expect({ status: unsupported.status, error: unsupported.body.error }).toEqual({
        status: 400,
        error: 'unsupported_grant_type',
      });
    }
    const noGrant = await requestToken({}, { authorization: basic(client.clientId, client.clientSecret) });
    expect({ status: noGrant.status, error: noGrant.body.error }).toEqual({
      status: 400,
      error: 'invalid_request',
    });

    const json = await fetch(`${g.gateway.opsUrl}/auth/token`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: basic(client.clientId, client.clientSecret),
      },
      body: JSON.stringify({ grant_type: 'client_credentials' }),
    });
    expect({ status: json.status, error: ((await json.json()) as TokenAnswer).error }).toEqual({
      status: 400,
      error: 'invalid_request',
    });
  });

  it('throttles failed client authentications as failed sign-ins are', async () => {
    const client = await createClient(['ops:read']);
    for (let i = 0; i < ACCOUNT_FAILURES; i++) {
      const wrong = await requestToken({
        grant_type: 'client_credentials',
        client_id: client.clientId,
        client_secret: 'ocs_wrong',
      });
      expect(wrong.status).toBe(401);
    }
    const throttled = await requestToken({
      grant_type: 'client_credentials',
      client_id: client.clientId,
      client_secret: client.clientSecret,
    });
    expect(throttled.status).toBe(429);
    expect(Number(throttled.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it('stops a revoked client’s tokens at once, and gives it no new one', async () => {
    const client = await createClient(['ops:read']);
    const token = await tokenOf(client);
    expect((await as(token)('GET', '/auth/session')).status).toBe(200);
    const revoked = await as(admin.accessToken)('POST', `/clients/${client.clientId}/revoke`);
    expect(revoked.status).toBe(200);
    expect(revoked.body.data.status).toBe('REVOKED');
    expect((await as(token)('GET', '/auth/session')).status).toBe(401);
    const again = await requestToken({
      grant_type: 'client_credentials',
      client_id: client.clientId,
      client_secret: client.clientSecret,
    });
    expect({ status: again.status, error: again.body.error }).toEqual({
      status: 401,
      error: 'invalid_client',
    });
    const rotate = await as(admin.accessToken)('POST', `/clients/${client.clientId}/rotate-secret`);
    expect(rotate.status).toBe(409);
  });

  it('rotates the secret: the old secret and its tokens stop, the new one works', async () => {
    const client = await createClient(['ops:read']);
    const oldToken = await tokenOf(client);
    const rotated = await as(admin.accessToken)('POST', `/clients/${client.clientId}/rotate-secret`);
    expect(rotated.status).toBe(200);
    const fresh = { clientId: client.clientId, clientSecret: rotated.body.data.clientSecret as string };
    handedOut.push(fresh.clientSecret);
    expect(fresh.clientSecret).not.toBe(client.clientSecret);
    expect((await as(oldToken)('GET', '/auth/session')).status).toBe(401);
    const old = await requestToken({
      grant_type: 'client_credentials',
      client_id: client.clientId,
      client_secret: client.clientSecret,
    });
    expect(old.status).toBe(401);
    expect((await as(await tokenOf(fresh))('GET', '/auth/session')).status).toBe(200);
  });

  it('is managed by ops admins only', async () => {
    const support = await signInOperator(g, 'SUPPORT');
    const refused = await as(support.accessToken)('POST', '/clients', { name: 'x', scopes: [] });
    expect(refused.status).toBe(403);
    const reader = await createClient(['ops:read']);
    const byClient = await as(await tokenOf(reader))('GET', '/clients');
    expect(byClient.status).toBe(403);
  });
});

describe('the ops scope table, generated from the ops contracts', () => {
  const cases: OpsClientScope[][] = [
    [],
    ...OPS_CLIENT_SCOPES.map((scope) => [scope]),
    [...OPS_CLIENT_SCOPES],
  ];

  it.each(cases.map((scopes) => [scopes.join(' ') || '(none)', scopes] as const))(
    'scopes %s: refused 403 naming the capability missing, or not refused',
    async (_title, scopes) => {
      const token = await tokenOf(await createClient(scopes));
      const capabilities = scopes.flatMap((scope) => OPS_SCOPE_CAPABILITIES[scope]);
      // The stand-in answers the ingest door whatever the body; the documents do not describe it.
      const { actual, expected } = await opsCapabilityOutcomes(
        g.gateway.opsUrl,
        token,
        'CLIENT',
        capabilities,
        {
          fromStandIn: true,
        },
      );
      expect(actual).toEqual(expected);
    },
  );
});

describe('client secrets and tokens', () => {
  it('never appear in the log or the audit trail', async () => {
    expect(handedOut.length).toBeGreaterThan(10);
    const audit = await as(admin.accessToken)('GET', '/audit?limit=100');
    expect(audit.status).toBe(200);
    const trail = JSON.stringify(audit.body);
    expect(trail).toContain('opsCreateClient');
    const log = logs.text();
    expect(log).toContain('ops client token issued');
    for (const secret of handedOut) {
      expect(trail.includes(secret)).toBe(false);
      expect(log.includes(secret)).toBe(false);
    }
  });
});
