import { createPrivateKey, createPublicKey, randomUUID } from 'node:crypto';
import { request } from 'node:http';
import { generateEd25519KeyPem, loadEd25519Keys } from '@parametric/ed25519-keys';
import { ROLE_CAPABILITIES } from '@parametric/http';
import { SignJWT } from 'jose';
import { GOOD_PASSWORD, type SignedInUser, signInAs, startTestGateway, type TestGateway } from './support';

/**
 * Dashboard access and refresh tokens through the gateway (issue 12): what a token lets a
 * user do, when it stops working, and every way a token that is not ours is refused.
 */

const ACTIVE_KEY = generateEd25519KeyPem();
const RETIRED_KEY = generateEd25519KeyPem();
const ISSUER = 'urn:parametric:gateway';

let gw: TestGateway;
let org: Awaited<ReturnType<TestGateway['register']>>;

beforeAll(async () => {
  gw = await startTestGateway({
    // The active key signs; the retired one is still accepted (a rotation in progress).
    DASHBOARD_TOKEN_KEYS: `${ACTIVE_KEY}\n${RETIRED_KEY}`,
    LOGIN_IP_FAILURES: '1000',
    // Every sign-in and invitation acceptance counts against the one client address of the test.
    ANONYMOUS_LIMIT_POINTS: '100000',
  });
  org = await gw.register();
});

afterAll(async () => {
  await gw.stop();
});

const session = (token: string) => gw.api('GET', '/auth/session', { token });
const refresh = (refreshToken: string) => gw.api('POST', '/auth/refresh', { body: { refreshToken } });

/** A token as the gateway would sign it, with `changes` to claims, header or key. */
async function craft(
  user: SignedInUser,
  changes: {
    key?: string;
    kid?: string;
    aud?: string;
    iss?: string;
    exp?: number;
    iat?: number;
    role?: string;
    caps?: string[];
    sid?: string;
  } = {},
) {
  const now = Math.floor(Date.now() / 1000);
  const pem = changes.key ?? ACTIVE_KEY;
  const kid = changes.kid ?? loadEd25519Keys(pem, 'test').activeKid;
  const claims = JSON.parse(Buffer.from(user.accessToken.split('.')[1] as string, 'base64url').toString());
  return new SignJWT({
    org: claims.org,
    sid: changes.sid ?? claims.sid,
    role: changes.role ?? claims.role,
    caps: changes.caps ?? claims.caps,
  })
    .setProtectedHeader({ alg: 'EdDSA', kid, typ: 'JWT' })
    .setSubject(user.userId)
    .setIssuer(changes.iss ?? ISSUER)
    .setAudience(changes.aud ?? 'dashboard')
    .setIssuedAt(changes.iat ?? now)
    .setExpirationTime(changes.exp ?? now + 900)
    .setJti(randomUUID())
    .sign(createPrivateKey(pem));
}

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

describe('signing in', () => {
  it('gives a 15-minute EdDSA access token with the documented claims and a refresh token', async () => {
    const user = await signInAs(gw, org.apiKey, 'ORG_FINANCE');
    const [header, payload] = user.accessToken
      .split('.')
      .slice(0, 2)
      .map((part) => JSON.parse(Buffer.from(part, 'base64url').toString()));
    expect(header).toEqual({ alg: 'EdDSA', kid: loadEd25519Keys(ACTIVE_KEY, 't').activeKid, typ: 'JWT' });
    expect(payload).toEqual({
      sub: user.userId,
      org: org.id,
      sid: expect.any(String),
      role: 'ORG_FINANCE',
      caps: [...ROLE_CAPABILITIES.ORG_FINANCE],
      aud: 'dashboard',
      iss: ISSUER,
      iat: expect.any(Number),
      exp: payload.iat + 900,
      jti: expect.any(String),
    });
    expect(user.refreshToken).toMatch(/^prt_[0-9A-Za-z]{43}$/);
    const who = await session(user.accessToken);
    expect(who.status).toBe(200);
    expect(who.body.data).toMatchObject({
      organizationId: org.id,
      principal: 'USER',
      role: 'ORG_FINANCE',
      user: { id: user.userId, email: user.email, status: 'ACTIVE', lastLoginAt: expect.any(String) },
    });
  });

  it('stores the refresh token only as a hash', async () => {
    const user = await signInAs(gw, org.apiKey, 'ORG_VIEWER');
    const rows = await gw.db.collection('refresh_tokens').find({ userId: user.userId }).toArray();
    expect(rows).toHaveLength(1);
    expect(JSON.stringify(rows)).not.toContain(user.refreshToken.slice(4));
  });

  it('answers an unknown email and a wrong password identically', async () => {
    const user = await signInAs(gw, org.apiKey, 'ORG_VIEWER');
    const wrong = await gw.api('POST', '/auth/login', {
      body: { email: user.email, password: 'not-the-password-1' },
    });
    const unknown = await gw.api('POST', '/auth/login', {
      body: { email: `nobody-${randomUUID()}@example.org`, password: 'not-the-password-1' },
    });
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    expect(wrong.body).toEqual(unknown.body);
    expect(wrong.body.error).toEqual({ code: 'UNAUTHORIZED', message: 'Invalid email or password' });
  });

  it('treats the email case-insensitively', async () => {
    const user = await signInAs(gw, org.apiKey, 'ORG_VIEWER');
    const reply = await gw.api('POST', '/auth/login', {
      body: { email: user.email.toUpperCase(), password: GOOD_PASSWORD },
    });
    expect(reply.status).toBe(200);
  });

  it('refuses unknown fields and a missing password with INVALID_INPUT', async () => {
    const extra = await gw.api('POST', '/auth/login', {
      body: { email: 'a@example.org', password: 'x', organizationId: org.id },
    });
    expect([extra.status, extra.body.error.code]).toEqual([400, 'INVALID_INPUT']);
    const missing = await gw.api('POST', '/auth/login', { body: { email: 'a@example.org' } });
    expect(missing.body.error.details).toEqual([{ field: 'password', message: expect.any(String) }]);
  });
});

describe('login throttling', () => {
  it('locks an account after 5 failures in the window, even for the right password, with retryAfter', async () => {
    const user = await signInAs(gw, org.apiKey, 'ORG_VIEWER');
    for (let i = 0; i < 5; i++) {
      const reply = await gw.api('POST', '/auth/login', {
        body: { email: user.email, password: `wrong-${i}-password` },
      });
      expect(reply.status).toBe(401);
    }
    const locked = await gw.api('POST', '/auth/login', {
      body: { email: user.email, password: GOOD_PASSWORD },
    });
    expect(locked.status).toBe(429);
    expect(locked.body.error.code).toBe('RATE_LIMIT_EXCEEDED');
    expect(locked.body.error.details).toEqual({ limit: 5, retryAfter: expect.any(Number) });
    expect(locked.body.error.details.retryAfter).toBeGreaterThan(800);
    // Another account from the same address is unaffected.
    const other = await signInAs(gw, org.apiKey, 'ORG_VIEWER');
    expect(other.accessToken).toEqual(expect.any(String));
  });

  it('throttles an unknown email exactly like a known one', async () => {
    const email = `ghost-${randomUUID()}@example.org`;
    for (let i = 0; i < 5; i++)
      await gw.api('POST', '/auth/login', { body: { email, password: 'whatever-it-is' } });
    const reply = await gw.api('POST', '/auth/login', { body: { email, password: 'whatever-it-is' } });
    expect([reply.status, reply.body.error.details.limit]).toEqual([429, 5]);
  });

  it('clears the account’s failures on a successful sign-in', async () => {
    const user = await signInAs(gw, org.apiKey, 'ORG_VIEWER');
    for (let i = 0; i < 4; i++)
      await gw.api('POST', '/auth/login', { body: { email: user.email, password: 'bad-bad-bad-1' } });
    expect(
      (await gw.api('POST', '/auth/login', { body: { email: user.email, password: GOOD_PASSWORD } })).status,
    ).toBe(200);
    for (let i = 0; i < 4; i++)
      await gw.api('POST', '/auth/login', { body: { email: user.email, password: 'bad-bad-bad-1' } });
    expect(
      (await gw.api('POST', '/auth/login', { body: { email: user.email, password: GOOD_PASSWORD } })).status,
    ).toBe(200);
  });

  it('limits failures per client address across accounts', async () => {
    const strict = await startTestGateway({ LOGIN_IP_FAILURES: '3' });
    try {
      for (let i = 0; i < 3; i++) {
        const reply = await strict.api('POST', '/auth/login', {
          body: { email: `walker-${i}@example.org`, password: 'guess-guess-guess' },
        });
        expect(reply.status).toBe(401);
      }
      const reply = await strict.api('POST', '/auth/login', {
        body: { email: 'walker-next@example.org', password: 'guess-guess-guess' },
      });
      expect([reply.status, reply.body.error.details.limit]).toEqual([429, 3]);
    } finally {
      await strict.stop();
    }
  });
});

describe('refresh tokens', () => {
  it('rotate: each refresh spends the token and returns a new pair that works', async () => {
    const user = await signInAs(gw, org.apiKey, 'ORG_OPERATOR');
    const first = await refresh(user.refreshToken);
    expect(first.status).toBe(200);
    expect(first.body.data).toMatchObject({ tokenType: 'Bearer', expiresIn: 900, refreshExpiresIn: 604800 });
    expect(first.body.data.refreshToken).not.toBe(user.refreshToken);
    expect((await session(first.body.data.accessToken)).status).toBe(200);
    const second = await refresh(first.body.data.refreshToken);
    expect(second.status).toBe(200);
  });

  it('reuse of a spent token revokes the whole session: refresh and access tokens of the family stop', async () => {
    const user = await signInAs(gw, org.apiKey, 'ORG_OPERATOR');
    const rotated = (await refresh(user.refreshToken)).body.data;
    // The stolen, already spent token is presented again.
    const replay = await refresh(user.refreshToken);
    expect([replay.status, replay.body.error.code]).toEqual([401, 'UNAUTHORIZED']);
    expect(replay.body.error.message).toMatch(/already used/);
    // The legitimate holder's newer tokens are dead too.
    expect((await refresh(rotated.refreshToken)).status).toBe(401);
    expect((await session(rotated.accessToken)).status).toBe(401);
    expect((await session(user.accessToken)).status).toBe(401);
    // Another session of the same user is untouched.
    const again = await gw.api('POST', '/auth/login', {
      body: { email: user.email, password: GOOD_PASSWORD },
    });
    expect((await session(again.body.data.accessToken)).status).toBe(200);
  });

  it('two concurrent refreshes with one token: one wins, and the session is revoked as reuse', async () => {
    const user = await signInAs(gw, org.apiKey, 'ORG_VIEWER');
    const replies = await Promise.all([refresh(user.refreshToken), refresh(user.refreshToken)]);
    expect(replies.map((r) => r.status).sort()).toEqual([200, 401]);
    const winner = replies.find((r) => r.status === 200);
    expect((await session(winner?.body.data.accessToken)).status).toBe(401);
  });

  it('an unknown or malformed refresh token is 401', async () => {
    expect((await refresh(`prt_${'A'.repeat(43)}`)).status).toBe(401);
    const long = await refresh('x'.repeat(500));
    expect([long.status, long.body.error.code]).toEqual([400, 'INVALID_INPUT']);
  });

  it('logout revokes the session at once, access token included, and is 200 for any token', async () => {
    const user = await signInAs(gw, org.apiKey, 'ORG_ADMIN');
    const out = await gw.api('POST', '/auth/logout', { body: { refreshToken: user.refreshToken } });
    expect([out.status, out.body.data]).toEqual([200, { loggedOut: true }]);
    expect((await session(user.accessToken)).status).toBe(401);
    expect((await refresh(user.refreshToken)).status).toBe(401);
    const unknown = await gw.api('POST', '/auth/logout', { body: { refreshToken: `prt_${'B'.repeat(43)}` } });
    expect([unknown.status, unknown.body.data]).toEqual([200, { loggedOut: true }]);
  });
});

describe('revocation is immediate', () => {
  it('deactivating the user stops its access and refresh tokens on the next request', async () => {
    const user = await signInAs(gw, org.apiKey, 'ORG_OPERATOR');
    expect((await gw.api('GET', '/organizations/me', { token: user.accessToken })).status).toBe(200);
    const off = await gw.api('DELETE', `/organizations/me/users/${user.userId}`, { key: org.apiKey });
    expect([off.status, off.body.data.status]).toEqual([200, 'DEACTIVATED']);
    const after = await gw.api('GET', '/organizations/me', { token: user.accessToken });
    expect([after.status, after.body.error.code]).toEqual([401, 'UNAUTHORIZED']);
    expect((await refresh(user.refreshToken)).status).toBe(401);
    const login = await gw.api('POST', '/auth/login', {
      body: { email: user.email, password: GOOD_PASSWORD },
    });
    expect(login.body.error).toEqual({ code: 'UNAUTHORIZED', message: 'Invalid email or password' });
    // Restoring the user does not bring the old session back.
    await gw.api('PATCH', `/organizations/me/users/${user.userId}`, {
      key: org.apiKey,
      body: { active: true },
    });
    expect((await session(user.accessToken)).status).toBe(401);
  });

  it('deactivating the organization stops every user token at once (403), and sign-in', async () => {
    const other = await gw.register();
    const user = await signInAs(gw, other.apiKey, 'ORG_ADMIN');
    expect((await gw.ops('POST', `/organizations/${other.id}/deactivate`)).status).toBe(200);
    const reply = await gw.api('GET', '/organizations/me', { token: user.accessToken });
    expect([reply.status, reply.body.error.code]).toEqual([403, 'FORBIDDEN']);
    expect((await refresh(user.refreshToken)).status).toBe(403);
    const login = await gw.api('POST', '/auth/login', {
      body: { email: user.email, password: GOOD_PASSWORD },
    });
    expect(login.status).toBe(403);
  });

  it('a demotion applies to live tokens at once: the token never grants more than the current role', async () => {
    const user = await signInAs(gw, org.apiKey, 'ORG_OPERATOR');
    expect((await gw.api('GET', '/organizations/me/users', { token: user.accessToken })).status).toBe(403);
    await gw.api('PATCH', `/organizations/me/users/${user.userId}`, {
      key: org.apiKey,
      body: { role: 'ORG_VIEWER' },
    });
    const who = await session(user.accessToken);
    expect(who.body.data.role).toBe('ORG_VIEWER');
    expect(who.body.data.capabilities).toEqual([...ROLE_CAPABILITIES.ORG_VIEWER]);
    // A promotion needs a new token: the old one never grants more than it was issued with.
    await gw.api('PATCH', `/organizations/me/users/${user.userId}`, {
      key: org.apiKey,
      body: { role: 'ORG_ADMIN' },
    });
    const promoted = await session(user.accessToken);
    expect(promoted.body.data.role).toBe('ORG_ADMIN');
    expect(promoted.body.data.capabilities).toEqual([...ROLE_CAPABILITIES.ORG_OPERATOR]);
    const fresh = (await refresh(user.refreshToken)).body.data.accessToken;
    expect((await session(fresh)).body.data.capabilities).toEqual([...ROLE_CAPABILITIES.ORG_ADMIN]);
  });
});

describe('tokens that are not ours', () => {
  let user: SignedInUser;
  beforeAll(async () => {
    user = await signInAs(gw, org.apiKey, 'ORG_ADMIN');
  });

  const refused = async (token: string) => {
    const reply = await gw.api('GET', '/organizations/me', { token });
    expect([reply.status, reply.body.error]).toEqual([
      401,
      { code: 'UNAUTHORIZED', message: 'Invalid, expired or revoked access token' },
    ]);
  };

  it('accepts the gateway’s own token (the control case)', async () => {
    expect((await gw.api('GET', '/organizations/me', { token: await craft(user) })).status).toBe(200);
  });

  it('accepts a token signed with a retired key still in the bundle', async () => {
    expect(
      (await gw.api('GET', '/organizations/me', { token: await craft(user, { key: RETIRED_KEY }) })).status,
    ).toBe(200);
  });

  it('refuses an expired token', async () => {
    const past = Math.floor(Date.now() / 1000) - 3600;
    await refused(await craft(user, { iat: past - 900, exp: past }));
  });

  it('refuses a token signed by a key we do not hold, even under our kid', async () => {
    const stranger = generateEd25519KeyPem();
    await refused(await craft(user, { key: stranger }));
    await refused(await craft(user, { key: stranger, kid: loadEd25519Keys(ACTIVE_KEY, 't').activeKid }));
  });

  it('refuses another audience and another issuer', async () => {
    await refused(await craft(user, { aud: 'partner-api' }));
    await refused(await craft(user, { iss: 'urn:someone-else' }));
  });

  it('refuses alg none and an HMAC token keyed with our public key', async () => {
    const claims = user.accessToken.split('.')[1] as string;
    await refused(`${b64({ alg: 'none', typ: 'JWT' })}.${claims}.`);
    const publicDer = createPublicKey(ACTIVE_KEY).export({ format: 'der', type: 'spki' });
    const hmac = await new SignJWT(JSON.parse(Buffer.from(claims, 'base64url').toString()))
      .setProtectedHeader({ alg: 'HS256', kid: loadEd25519Keys(ACTIVE_KEY, 't').activeKid, typ: 'JWT' })
      .sign(new Uint8Array(publicDer));
    await refused(hmac);
  });

  it('refuses a token whose claims were edited (a raised role), and one for a revoked session id', async () => {
    const [header, , signature] = user.accessToken.split('.');
    const claims = JSON.parse(Buffer.from(user.accessToken.split('.')[1] as string, 'base64url').toString());
    await refused(`${header}.${b64({ ...claims, org: randomUUID() })}.${signature}`);
    await refused(await craft(user, { sid: randomUUID() }));
  });

  it('a token claiming more capabilities than the role gets only the role’s', async () => {
    const viewer = await signInAs(gw, org.apiKey, 'ORG_VIEWER');
    const greedy = await craft(viewer, { role: 'ORG_ADMIN', caps: [...ROLE_CAPABILITIES.ORG_ADMIN] });
    const reply = await gw.api('POST', '/organizations/me/api-key/rotate', { token: greedy });
    expect([reply.status, reply.body.error.code]).toEqual([403, 'FORBIDDEN']);
    expect(reply.body.error.message).toContain('api-key:manage');
  });

  it('a JWT never works as an API key, and an API key never as a bearer token', async () => {
    const asKey = await gw.api('GET', '/organizations/me', { key: user.accessToken });
    expect(asKey.status).toBe(401);
    await refused(org.apiKey);
  });

  it('both an API key and a bearer token in one request is 400', async () => {
    const reply = await gw.api('GET', '/organizations/me', { key: org.apiKey, token: user.accessToken });
    expect([reply.status, reply.body.error.code]).toEqual([400, 'INVALID_INPUT']);
    expect(reply.body.error.message).toBe('Send either x-api-key or Authorization: Bearer, not both');
  });

  it('another Authorization scheme is 401 with a message that says what to send', async () => {
    const reply = await gw.api('GET', '/organizations/me', {
      headers: { authorization: 'Basic dXNlcjpwYXNz' },
    });
    expect(reply.status).toBe(401);
    expect(reply.body.error.message).toMatch(/Unsupported Authorization scheme/);
  });
});

describe('rate limits for dashboard users', () => {
  it("share the organization's dashboard budget, apart from its API key's, with the X-RateLimit headers", async () => {
    const own = await gw.register();
    const user = await signInAs(gw, own.apiKey, 'ORG_VIEWER');
    const other = await signInAs(gw, own.apiKey, 'ORG_ADMIN');
    const reply = await gw.api('GET', '/organizations/me', { token: user.accessToken });
    expect(reply.headers.get('x-ratelimit-limit')).toBe('100');
    const before = Number(reply.headers.get('x-ratelimit-remaining'));
    const next = await gw.api('GET', '/organizations/me', { token: user.accessToken });
    expect(Number(next.headers.get('x-ratelimit-remaining'))).toBe(before - 1);
    // Every user of the organization spends the one dashboard budget: inviting more users does
    // not multiply it.
    const colleague = await gw.api('GET', '/organizations/me', { token: other.accessToken });
    expect(Number(colleague.headers.get('x-ratelimit-remaining'))).toBe(before - 2);

    // Spent to the end by the dashboard, the budget refuses the dashboard and not the
    // integration, whose key counts on its own.
    const keyedBefore = await gw.api('GET', '/organizations/me', { key: own.apiKey });
    const keyRemaining = Number(keyedBefore.headers.get('x-ratelimit-remaining'));
    for (let left = before - 2; left > 0; left--) {
      expect((await gw.api('GET', '/organizations/me', { token: user.accessToken })).status).toBe(200);
    }
    const refused = await gw.api('GET', '/organizations/me', { token: other.accessToken });
    expect([refused.status, refused.body.error.code]).toEqual([429, 'RATE_LIMIT_EXCEEDED']);
    const keyed = await gw.api('GET', '/organizations/me', { key: own.apiKey });
    expect([keyed.status, Number(keyed.headers.get('x-ratelimit-remaining'))]).toEqual([
      200,
      keyRemaining - 1,
    ]);
  });

  it("spend the organization's one POST /payments/initiate budget with its key", async () => {
    const own = await gw.register();
    const admin = await signInAs(gw, own.apiKey, 'ORG_ADMIN');
    for (let i = 0; i < 10; i++) {
      const spent = await gw.api('POST', '/payments/initiate', { key: own.apiKey, body: {} });
      expect(spent.status).not.toBe(429);
    }
    const refused = await gw.api('POST', '/payments/initiate', { token: admin.accessToken, body: {} });
    expect([refused.status, refused.body.error.code]).toEqual([429, 'RATE_LIMIT_EXCEEDED']);
  });
});

describe('paths', () => {
  /** Sent byte for byte (fetch would resolve the dot segments before they left the test). */
  const rawGet = (path: string, token: string) =>
    new Promise<{ status: number; body: { error: { message: string } } }>((resolve, reject) => {
      const url = new URL(gw.gateway.partnerUrl);
      const req = request(
        {
          host: url.hostname,
          port: url.port,
          path: `${url.pathname}${path}`,
          headers: { authorization: `Bearer ${token}` },
        },
        (res) => {
          let text = '';
          res.on('data', (chunk) => {
            text += chunk;
          });
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
        },
      );
      req.on('error', reject);
      req.end();
    });

  it.each(['/farmers/%2e%2e/plots', '/farmers/%2E%2e/plots', '/farmers/./plots', '/policies/.%2e'])(
    '%s is refused before forwarding: the path checked is the path forwarded',
    async (path) => {
      const viewer = await signInAs(gw, org.apiKey, 'ORG_VIEWER');
      const reply = await rawGet(path, viewer.accessToken);
      expect([reply.status, reply.body.error.message]).toEqual([
        400,
        'Path segments "." and ".." are not allowed',
      ]);
    },
  );
});
