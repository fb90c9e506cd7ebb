import { generateKeyPair, SignJWT } from 'jose';
import { call, startOidcIssuer, startTestGateway, type TestGateway } from './support';

/**
 * Issue 25: with OPS_OIDC_ISSUER and OPS_OIDC_AUDIENCE set, operators may sign in through the
 * insurer's identity provider: its tokens are accepted on the ops API with the role in their
 * role claim (docs/ops.md, "Single sign-on"); anything not signed by it, for us, in time, is 401.
 */
const AUDIENCE = 'parametric-ops';
let g: TestGateway;
let idp: Awaited<ReturnType<typeof startOidcIssuer>>;

beforeAll(async () => {
  idp = await startOidcIssuer();
  g = await startTestGateway({ OPS_OIDC_ISSUER: idp.issuer, OPS_OIDC_AUDIENCE: AUDIENCE });
});
afterAll(async () => {
  await g?.stop();
  await idp?.close();
});

const as = (token: string) => (method: string, path: string, body?: unknown) =>
  call(method, `${g.gateway.opsUrl}${path}`, { headers: { authorization: `Bearer ${token}` }, body });

describe('single sign-on', () => {
  it('accepts the issuer’s token with its role’s capabilities, named oidc:<sub> in the audit trail', async () => {
    const token = await idp.sign(AUDIENCE, {
      sub: 'wanjiku',
      email: 'wanjiku@insurer.example',
      ops_role: 'UNDERWRITER',
    });
    const session = await as(token)('GET', '/auth/session');
    expect(session.status).toBe(200);
    expect(session.body.data).toMatchObject({
      kind: 'operator',
      id: 'oidc:wanjiku',
      email: 'wanjiku@insurer.example',
      role: 'UNDERWRITER',
    });
    const manage = await as(token)('GET', '/operators');
    expect(manage.status).toBe(403);
    expect(manage.body.error.message).toBe(
      'Your role UNDERWRITER lacks the capability ops.operator:manage this endpoint needs',
    );

    const organization = await g.register();
    const kyb = await as(token)('POST', `/organizations/${organization.id}/kyb`, {
      status: 'VERIFIED',
      notes: 'Checked through single sign-on',
    });
    expect(kyb.status).toBe(200);
    const audit = await g.ops('GET', '/audit?actor=oidc:wanjiku');
    expect(audit.body.data).toEqual([
      expect.objectContaining({
        actor: 'oidc:wanjiku',
        actorKind: 'operator',
        actorEmail: 'wanjiku@insurer.example',
        actorRole: 'UNDERWRITER',
        action: 'opsSetKyb',
      }),
    ]);
  });

  it('refuses a token without a known ops role with 403 saying so', async () => {
    for (const claims of [{ sub: 'no-role' }, { sub: 'odd-role', ops_role: 'ADMIN' }]) {
      const reply = await as(await idp.sign(AUDIENCE, claims))('GET', '/auth/session');
      expect(reply.status).toBe(403);
      expect(reply.body.error.message).toMatch(/carries no ops role/);
    }
  });

  it('refuses forged tokens with 401: another key, wrong audience or issuer, expired, alg none or HS256', async () => {
    const claims = { sub: 'mallory', ops_role: 'OPS_ADMIN' };
    const other = await generateKeyPair('ES256');
    const now = Math.floor(Date.now() / 1000);
    const forged = {
      'another key': await new SignJWT(claims)
        .setProtectedHeader({ alg: 'ES256', kid: 'test-issuer-key' })
        .setIssuer(idp.issuer)
        .setAudience(AUDIENCE)
        .setExpirationTime('5m')
        .sign(other.privateKey),
      'wrong audience': await idp.sign('someone-else', claims),
      'wrong issuer': await new SignJWT(claims)
        .setProtectedHeader({ alg: 'ES256', kid: 'test-issuer-key' })
        .setIssuer('https://idp.attacker.example')
        .setAudience(AUDIENCE)
        .setExpirationTime('5m')
        .sign(other.privateKey),
      expired: await idp.sign(AUDIENCE, { ...claims, iat: now - 3600, exp: now - 600 }),
      'not yet valid': await idp.sign(AUDIENCE, { ...claims, nbf: now + 600 }),
      'alg none': `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url')}.${Buffer.from(
        JSON.stringify({ ...claims, iss: idp.issuer, aud: AUDIENCE, exp: now + 300 }),
      ).toString('base64url')}.`,
      HS256: await new SignJWT(claims)
        .setProtectedHeader({ alg: 'HS256' })
        .setIssuer(idp.issuer)
        .setAudience(AUDIENCE)
        .setExpirationTime('5m')
        .sign(new TextEncoder().encode('a-shared-secret-anyone-could-guess')),
    };
    const outcomes = [];
    for (const [name, token] of Object.entries(forged)) {
      outcomes.push({ name, status: (await as(token)('GET', '/auth/session')).status });
    }
    expect(outcomes).toEqual(Object.keys(forged).map((name) => ({ name, status: 401 })));
  });
});
