import { OPS_ROLE_CAPABILITIES, OPS_ROLES, type OpsRole } from '@parametric/contracts';
import { generateEd25519KeyPem } from '@parametric/ed25519-keys';
import { opsActor } from '../src/audit/trail';
import {
  call,
  GOOD_PASSWORD,
  GUARDED_OPS_ROUTES,
  OPS_TOKEN,
  opsCapabilityOutcomes,
  type SignedInOperator,
  signInAs,
  signInOperator,
  startTestGateway,
  type TestGateway,
} from './support';

/**
 * Issue 25: operators are people. They sign in on the ops API (audience `ops`), act with their
 * role's capabilities (the table in libs/contracts operators.ts), are named in the audit trail,
 * and stop at once when deactivated; the shared ops token is break-glass.
 */
let g: TestGateway;
const operators = {} as Record<OpsRole, SignedInOperator>;

beforeAll(async () => {
  g = await startTestGateway();
  for (const role of OPS_ROLES) operators[role] = await signInOperator(g, role);
});
afterAll(async () => {
  await g?.stop();
});

const as = (token: string) => (method: string, path: string, body?: unknown) =>
  call(method, `${g.gateway.opsUrl}${path}`, { headers: { authorization: `Bearer ${token}` }, body });

describe('the ops role table, generated from the ops contracts', () => {
  it('declares a known capability on every ops route', () => {
    expect(GUARDED_OPS_ROUTES.length).toBeGreaterThan(20);
    for (const route of GUARDED_OPS_ROUTES)
      expect({ route: route.operationId, has: !!route.capability }).toEqual({
        route: route.operationId,
        has: true,
      });
  });

  it.each(OPS_ROLES)('%s: refused 403 naming the capability it lacks, or not refused', async (role) => {
    const { actual, expected } = await opsCapabilityOutcomes(
      g.gateway.opsUrl,
      operators[role].accessToken,
      role,
      OPS_ROLE_CAPABILITIES[role],
    );
    expect(actual).toEqual(expected);
  });
});

describe('operators', () => {
  it('signs in with aud "ops", says who it is, and its token is refused on the partner API', async () => {
    const underwriter = operators.UNDERWRITER;
    const session = await as(underwriter.accessToken)('GET', '/auth/session');
    expect(session.status).toBe(200);
    expect(session.body.data).toEqual({
      kind: 'operator',
      id: underwriter.id,
      email: underwriter.email,
      role: 'UNDERWRITER',
      capabilities: [...OPS_ROLE_CAPABILITIES.UNDERWRITER],
    });
    const payload = JSON.parse(
      Buffer.from(underwriter.accessToken.split('.')[1] ?? '', 'base64url').toString(),
    );
    expect(payload.aud).toBe('ops');
    const partner = await g.api('GET', '/auth/session', {
      headers: { authorization: `Bearer ${underwriter.accessToken}` },
    });
    expect(partner.status).toBe(401);
  });

  it('names the operator and role in the audit trail, which filters by actor', async () => {
    const org = await g.register();
    const underwriter = operators.UNDERWRITER;
    const kyb = await as(underwriter.accessToken)('POST', `/organizations/${org.id}/kyb`, {
      status: 'VERIFIED',
    });
    expect(kyb.status).toBe(200);
    await g.ops('POST', `/organizations/${org.id}/deactivate`);

    const mine = await g.ops('GET', `/audit?actor=${encodeURIComponent(underwriter.email)}`);
    expect(mine.body.data).toEqual([
      expect.objectContaining({
        actor: `operator:${underwriter.id}`,
        actorKind: 'operator',
        actorEmail: underwriter.email,
        actorRole: 'UNDERWRITER',
        action: 'opsSetKyb',
        organizationId: org.id,
      }),
    ]);
    const byId = await g.ops('GET', `/audit?actor=${underwriter.id}`);
    expect(byId.body.data.map((e: { action: string }) => e.action)).toEqual(['opsSetKyb']);
    const breakGlass = await g.ops('GET', `/audit?actor=${opsActor(OPS_TOKEN)}&organizationId=${org.id}`);
    expect(breakGlass.body.data).toEqual([
      expect.objectContaining({
        action: 'opsDeactivateOrganization',
        actorKind: 'break-glass',
        actorRole: 'BREAK_GLASS',
        actorEmail: null,
      }),
    ]);
  });

  it('stops a deactivated operator’s access token at once, and their refresh token', async () => {
    const support = await signInOperator(g, 'SUPPORT');
    expect((await as(support.accessToken)('GET', '/auth/session')).status).toBe(200);
    const admin = operators.OPS_ADMIN;
    const off = await as(admin.accessToken)('PATCH', `/operators/${support.id}`, { status: 'DEACTIVATED' });
    expect(off.status).toBe(200);
    expect(off.body.data).toMatchObject({ id: support.id, status: 'DEACTIVATED' });
    const refused = await as(support.accessToken)('GET', '/auth/session');
    expect([refused.status, refused.body.error.code]).toEqual([401, 'UNAUTHORIZED']);
    const refresh = await call('POST', `${g.gateway.opsUrl}/auth/refresh`, {
      body: { refreshToken: support.refreshToken },
    });
    expect(refresh.status).toBe(401);
    const login = await call('POST', `${g.gateway.opsUrl}/auth/login`, {
      body: { email: support.email, password: GOOD_PASSWORD },
    });
    expect(login.status).toBe(401);
  });

  it('refuses an operator changing their own role (no self-promotion) and a taken email', async () => {
    const admin = operators.OPS_ADMIN;
    const self = await as(admin.accessToken)('PATCH', `/operators/${admin.id}`, { status: 'DEACTIVATED' });
    expect([self.status, self.body.error.code]).toEqual([403, 'FORBIDDEN']);
    const again = await as(admin.accessToken)('POST', '/operators', {
      email: operators.FINANCE.email.toUpperCase(),
      role: 'SUPPORT',
    });
    expect([again.status, again.body.error.code]).toEqual([409, 'CONFLICT']);
  });

  it('rotates refresh tokens, and a reused one revokes the whole session', async () => {
    const finance = await signInOperator(g, 'FINANCE');
    const refresh = (refreshToken: string) =>
      call('POST', `${g.gateway.opsUrl}/auth/refresh`, { body: { refreshToken } });
    const next = await refresh(finance.refreshToken);
    expect(next.status).toBe(200);
    expect(next.body.data).toMatchObject({ tokenType: 'Bearer', expiresIn: 900 });
    expect((await as(next.body.data.accessToken)('GET', '/auth/session')).status).toBe(200);

    const reused = await refresh(finance.refreshToken);
    expect(reused.status).toBe(401);
    // The thief's copy and the rightful holder's newer tokens both stop.
    expect((await refresh(next.body.data.refreshToken)).status).toBe(401);
    expect((await as(next.body.data.accessToken)('GET', '/auth/session')).status).toBe(401);
    expect((await as(finance.accessToken)('GET', '/auth/session')).status).toBe(401);
  });

  it('signs out: the session’s access token stops at once', async () => {
    const support = await signInOperator(g, 'SUPPORT');
    const out = await call('POST', `${g.gateway.opsUrl}/auth/logout`, {
      body: { refreshToken: support.refreshToken },
    });
    expect(out.body).toEqual({ success: true, data: { loggedOut: true } });
    expect((await as(support.accessToken)('GET', '/auth/session')).status).toBe(401);
  });

  it('never accepts a dashboard token on the ops API', async () => {
    const org = await g.register();
    const user = await signInAs(g, org.apiKey, 'ORG_ADMIN');
    expect(
      (await g.api('GET', '/auth/session', { headers: { authorization: `Bearer ${user.accessToken}` } }))
        .status,
    ).toBe(200);
    expect((await as(user.accessToken)('GET', '/auth/session')).status).toBe(401);
  });
});

describe('the shared ops token is break-glass', () => {
  const production = {
    NODE_ENV: 'production',
    DASHBOARD_TOKEN_KEYS: generateEd25519KeyPem(),
  };

  it('is refused in production unless OPS_BREAK_GLASS=true, and changes nothing', async () => {
    const prod = await startTestGateway(production);
    try {
      const refused = await prod.ops('GET', '/auth/session');
      expect([refused.status, refused.body.error.code]).toEqual([401, 'UNAUTHORIZED']);
      expect(refused.body.error.message).toContain('break-glass');
      const invite = await prod.ops('POST', '/operators', {
        body: { email: 'x@ops.example', role: 'SUPPORT' },
      });
      expect(invite.status).toBe(401);
      expect(await prod.db.collection('operators').countDocuments()).toBe(0);
      // Prometheus still scrapes with it (and only that): a scrape is not break-glass.
      expect((await prod.ops('GET', '/metrics')).status).toBe(200);
    } finally {
      await prod.stop();
    }
  });

  it('acts in production with OPS_BREAK_GLASS=true, audited as break-glass and counted in a metric', async () => {
    const prod = await startTestGateway({ ...production, OPS_BREAK_GLASS: 'true' });
    try {
      const session = await prod.ops('GET', '/auth/session');
      expect(session.body.data).toMatchObject({ kind: 'break-glass', id: opsActor(OPS_TOKEN) });
      const org = await prod.register();
      expect(
        (await prod.ops('POST', `/organizations/${org.id}/kyb`, { body: { status: 'VERIFIED' } })).status,
      ).toBe(200);
      const trail = await prod.ops('GET', `/audit?organizationId=${org.id}`);
      expect(trail.body.data).toEqual([
        expect.objectContaining({
          action: 'opsSetKyb',
          actorKind: 'break-glass',
          actor: opsActor(OPS_TOKEN),
        }),
      ]);
      const metrics = await prod.ops('GET', '/metrics');
      const line = String(metrics.body)
        .split('\n')
        .find((l) => l.startsWith('ops_break_glass_requests_total'));
      // The session, the KYB and the audit read; the scrape itself is not break-glass.
      expect(Number(line?.split(' ').pop())).toBe(3);
    } finally {
      await prod.stop();
    }
  });
});
