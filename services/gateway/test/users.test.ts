import { randomUUID } from 'node:crypto';
import { GOOD_PASSWORD, movingClock, signInAs, startTestGateway, type TestGateway } from './support';

/**
 * Dashboard user management through the gateway (issue 12): invitations, acceptance,
 * listing, role and active changes, the last-admin rule, and registration with a first admin.
 */

let gw: TestGateway;

beforeAll(async () => {
  gw = await startTestGateway({
    LOGIN_IP_FAILURES: '1000',
    // Every sign-in and invitation acceptance counts against the one client address of the test.
    ANONYMOUS_LIMIT_POINTS: '100000',
  });
});

afterAll(async () => {
  await gw.stop();
});

const email = () => `person-${randomUUID()}@example.org`;

async function invite(key: string, role = 'ORG_OPERATOR', address = email()) {
  const reply = await gw.api('POST', '/organizations/me/users', {
    key,
    body: { email: address, name: 'Amina Wanjiru', role },
  });
  if (reply.status !== 201) throw new Error(JSON.stringify(reply.body));
  return reply.body.data as { user: { id: string; email: string }; invitationToken: string };
}

const accept = (token: string, password = GOOD_PASSWORD) =>
  gw.api('POST', '/auth/accept-invitation', { body: { token, password } });

describe('inviting a user', () => {
  it('creates an INVITED user with a one-time token valid 72 hours, stored only as a hash', async () => {
    const org = await gw.register();
    const reply = await gw.api('POST', '/organizations/me/users', {
      key: org.apiKey,
      body: { email: '  Amina.W@Example.org ', name: ' Amina Wanjiru ', role: 'ORG_FINANCE' },
    });
    expect(reply.status).toBe(201);
    const { user, invitationToken, invitationExpiresAt } = reply.body.data;
    expect(user).toMatchObject({
      email: 'amina.w@example.org',
      name: 'Amina Wanjiru',
      role: 'ORG_FINANCE',
      status: 'INVITED',
      lastLoginAt: null,
      invitationExpiresAt,
    });
    const hours = (Date.parse(invitationExpiresAt) - Date.now()) / 3_600_000;
    expect(hours).toBeGreaterThan(71.9);
    expect(hours).toBeLessThanOrEqual(72);
    expect(invitationToken).toMatch(/^piv_[0-9A-Za-z]{43}$/);
    const stored = await gw.db.collection('users').findOne({ _id: user.id });
    expect(JSON.stringify(stored)).not.toContain(invitationToken.slice(4));
    expect(stored?.organizationId).toBe(org.id);
  });

  it('refuses an email already used by any user on the platform (409), whatever its case', async () => {
    const [a, b] = [await gw.register(), await gw.register()];
    const address = email();
    await invite(a.apiKey, 'ORG_VIEWER', address);
    const again = await gw.api('POST', '/organizations/me/users', {
      key: b.apiKey,
      body: { email: address.toUpperCase(), name: 'Someone', role: 'ORG_VIEWER' },
    });
    expect([again.status, again.body.error.code]).toEqual([409, 'CONFLICT']);
    expect(again.body.error.details).toEqual([{ field: 'email', message: expect.any(String) }]);
  });

  it.each([
    [{ email: 'not-an-email', name: 'X', role: 'ORG_VIEWER' }, 'email'],
    [{ email: 'x@example.org', name: '', role: 'ORG_VIEWER' }, 'name'],
    [{ email: 'x@example.org', name: 'X', role: 'SUPERUSER' }, 'role'],
    [{ email: 'x@example.org', name: 'X', role: 'ORG_VIEWER', password: 'x' }, 'password'],
  ])('refuses %j with INVALID_INPUT on %s, writing nothing', async (body, field) => {
    const org = await gw.register();
    const reply = await gw.api('POST', '/organizations/me/users', { key: org.apiKey, body });
    expect([reply.status, reply.body.error.code]).toEqual([400, 'INVALID_INPUT']);
    expect(reply.body.error.details[0].field).toBe(field);
    expect(await gw.db.collection('users').countDocuments({ organizationId: org.id })).toBe(0);
  });
});

describe('accepting an invitation', () => {
  it('sets the password (scrypt hash only) and makes the user ACTIVE; the token then stops working', async () => {
    const org = await gw.register();
    const { user, invitationToken } = await invite(org.apiKey);
    const reply = await accept(invitationToken);
    expect(reply.status).toBe(200);
    expect(reply.body.data.user).toMatchObject({ id: user.id, status: 'ACTIVE', invitationExpiresAt: null });
    const stored = await gw.db.collection('users').findOne({ _id: user.id as never });
    expect(stored?.passwordHash).toMatch(/^scrypt\$15\$8\$1\$/);
    expect(JSON.stringify(stored)).not.toContain(GOOD_PASSWORD);
    const again = await accept(invitationToken, 'another-good-password-9');
    expect([again.status, again.body.error.details]).toEqual([
      400,
      [{ field: 'token', message: expect.any(String) }],
    ]);
    const login = await gw.api('POST', '/auth/login', {
      body: { email: user.email, password: GOOD_PASSWORD },
    });
    expect(login.status).toBe(200);
  });

  it.each([
    ['short-pw-11', 'must be at least 12 characters'],
    ['password1234', 'is a commonly used password; choose another'],
    ['QWERTYUIOP123', 'is a commonly used password; choose another'],
    ['zzzzzzzzzzzzzzzz', 'is one character repeated; choose another'],
  ])('refuses the password %s (%s) and leaves the user INVITED', async (password, message) => {
    const org = await gw.register();
    const { user, invitationToken } = await invite(org.apiKey);
    const reply = await accept(invitationToken, password);
    expect([reply.status, reply.body.error.details]).toEqual([400, [{ field: 'password', message }]]);
    expect((await gw.db.collection('users').findOne({ _id: user.id as never }))?.status).toBe('INVITED');
    expect((await accept(invitationToken)).status).toBe(200);
  });

  it('refuses a password containing the email address', async () => {
    const org = await gw.register();
    const { invitationToken } = await invite(org.apiKey, 'ORG_VIEWER', 'wanjiru.farms@example.org');
    const reply = await accept(invitationToken, 'wanjiru.farms-2026!');
    expect(reply.body.error.details).toEqual([
      {
        field: 'password',
        message: 'must not be your email address, nor contain the part of it before the @',
      },
    ]);
  });

  it('refuses an unknown token exactly like a used one', async () => {
    const reply = await accept(`piv_${'A'.repeat(43)}`);
    expect([reply.status, reply.body.error.details[0].field]).toEqual([400, 'token']);
  });

  it('refuses a lapsed invitation; a reissued one works and replaces the old token', async () => {
    const clock = movingClock();
    const short = await startTestGateway({ INVITATION_TTL_SECONDS: '3600' }, undefined, clock.now);
    try {
      const org = await short.register();
      const invited = (
        await short.api('POST', '/organizations/me/users', {
          key: org.apiKey,
          body: { email: email(), name: 'Late Larry', role: 'ORG_VIEWER' },
        })
      ).body.data;
      // The invitation's hour and a second pass for the gateway, and for no one else.
      clock.advance(3_601_000);
      const late = await short.api('POST', '/auth/accept-invitation', {
        body: { token: invited.invitationToken, password: GOOD_PASSWORD },
      });
      expect([late.status, late.body.error.details[0].field]).toEqual([400, 'token']);
      const reissued = await short.api('POST', `/organizations/me/users/${invited.user.id}/invitation`, {
        key: org.apiKey,
      });
      expect(reissued.status).toBe(200);
      expect(reissued.body.data.invitationToken).not.toBe(invited.invitationToken);
      const ok = await short.api('POST', '/auth/accept-invitation', {
        body: { token: reissued.body.data.invitationToken, password: GOOD_PASSWORD },
      });
      expect(ok.status).toBe(200);
      // Accepted: no new invitation for an active user.
      const none = await short.api('POST', `/organizations/me/users/${invited.user.id}/invitation`, {
        key: org.apiKey,
      });
      expect([none.status, none.body.error.code]).toEqual([409, 'CONFLICT']);
    } finally {
      await short.stop();
    }
  });

  it('a reissued invitation invalidates the previous token', async () => {
    const org = await gw.register();
    const { user, invitationToken } = await invite(org.apiKey);
    await gw.api('POST', `/organizations/me/users/${user.id}/invitation`, { key: org.apiKey });
    expect((await accept(invitationToken)).status).toBe(400);
  });

  it('refuses acceptance for a deactivated organization (403)', async () => {
    const org = await gw.register();
    const { invitationToken } = await invite(org.apiKey);
    await gw.ops('POST', `/organizations/${org.id}/deactivate`);
    const reply = await accept(invitationToken);
    expect([reply.status, reply.body.error.code]).toEqual([403, 'FORBIDDEN']);
  });

  it('a deactivated invited user cannot accept the invitation', async () => {
    const org = await gw.register();
    const { user, invitationToken } = await invite(org.apiKey);
    await gw.api('DELETE', `/organizations/me/users/${user.id}`, { key: org.apiKey });
    expect((await accept(invitationToken)).status).toBe(400);
    // Restored, it is INVITED again and needs a new invitation.
    const restored = await gw.api('PATCH', `/organizations/me/users/${user.id}`, {
      key: org.apiKey,
      body: { active: true },
    });
    expect(restored.body.data.status).toBe('INVITED');
  });
});

describe('listing and reading users', () => {
  it('lists the organization’s own users newest first, with paging and filters', async () => {
    const [org, other] = [await gw.register(), await gw.register()];
    const first = await invite(org.apiKey, 'ORG_VIEWER');
    const second = await invite(org.apiKey, 'ORG_FINANCE');
    await accept(second.invitationToken);
    await invite(other.apiKey, 'ORG_VIEWER');

    const all = await gw.api('GET', '/organizations/me/users', { key: org.apiKey });
    expect(all.body.data.map((u: { id: string }) => u.id)).toEqual([second.user.id, first.user.id]);
    expect(all.body.pagination).toMatchObject({ total: 2, page: 1 });
    const active = await gw.api('GET', '/organizations/me/users?status=ACTIVE', { key: org.apiKey });
    expect(active.body.data.map((u: { id: string }) => u.id)).toEqual([second.user.id]);
    const viewers = await gw.api('GET', '/organizations/me/users?role=ORG_VIEWER&limit=1', {
      key: org.apiKey,
    });
    expect(viewers.body.data.map((u: { id: string }) => u.id)).toEqual([first.user.id]);
    const bad = await gw.api('GET', '/organizations/me/users?status=SLEEPING', { key: org.apiKey });
    expect([bad.status, bad.body.error.details[0].field]).toEqual([400, 'status']);
    for (const user of all.body.data) expect(Object.keys(user)).not.toContain('passwordHash');
  });

  it('reads one user; an unknown id is 404', async () => {
    const org = await gw.register();
    const { user } = await invite(org.apiKey);
    expect(
      (await gw.api('GET', `/organizations/me/users/${user.id}`, { key: org.apiKey })).body.data.id,
    ).toBe(user.id);
    const missing = await gw.api('GET', `/organizations/me/users/${randomUUID()}`, { key: org.apiKey });
    expect([missing.status, missing.body.error.code]).toEqual([404, 'NOT_FOUND']);
    const malformed = await gw.api('GET', '/organizations/me/users/not-a-uuid', { key: org.apiKey });
    expect(malformed.status).toBe(400);
  });
});

describe('changing users', () => {
  it('changes the name and role; an empty or unknown change is INVALID_INPUT', async () => {
    const org = await gw.register();
    const { user } = await invite(org.apiKey, 'ORG_VIEWER');
    const changed = await gw.api('PATCH', `/organizations/me/users/${user.id}`, {
      key: org.apiKey,
      body: { name: 'Amina W.', role: 'ORG_OPERATOR' },
    });
    expect(changed.body.data).toMatchObject({ name: 'Amina W.', role: 'ORG_OPERATOR', status: 'INVITED' });
    const empty = await gw.api('PATCH', `/organizations/me/users/${user.id}`, { key: org.apiKey, body: {} });
    expect([empty.status, empty.body.error.code]).toEqual([400, 'INVALID_INPUT']);
    const unknown = await gw.api('PATCH', `/organizations/me/users/${user.id}`, {
      key: org.apiKey,
      body: { email: 'new@example.org' },
    });
    expect(unknown.status).toBe(400);
    expect(
      (await gw.api('GET', `/organizations/me/users/${user.id}`, { key: org.apiKey })).body.data.name,
    ).toBe('Amina W.');
  });
});

describe('the last active ORG_ADMIN', () => {
  async function orgWithAdmin() {
    const adminEmail = email();
    const org = await gw.register({ adminEmail, adminPassword: GOOD_PASSWORD });
    return { ...org, adminId: org.organization.id && (await adminIdOf(org.apiKey, adminEmail)) };
  }
  async function adminIdOf(key: string, address: string) {
    const list = await gw.api('GET', '/organizations/me/users', { key });
    return list.body.data.find((u: { email: string }) => u.email === address).id as string;
  }

  it('cannot be demoted or deactivated (409), by the key or by themselves', async () => {
    const org = await orgWithAdmin();
    for (const [method, body] of [
      ['PATCH', { role: 'ORG_FINANCE' }],
      ['PATCH', { active: false }],
      ['DELETE', undefined],
    ] as const) {
      const reply = await gw.api(method, `/organizations/me/users/${org.adminId}`, { key: org.apiKey, body });
      expect([reply.status, reply.body.error.code]).toEqual([409, 'CONFLICT']);
      expect(reply.body.error.message).toMatch(/last active ORG_ADMIN/);
    }
    const read = await gw.api('GET', `/organizations/me/users/${org.adminId}`, { key: org.apiKey });
    expect(read.body.data).toMatchObject({ role: 'ORG_ADMIN', status: 'ACTIVE' });
  });

  it('can step down once another admin is active; an invited admin does not count', async () => {
    const org = await orgWithAdmin();
    const invited = await invite(org.apiKey, 'ORG_ADMIN');
    const blocked = await gw.api('DELETE', `/organizations/me/users/${org.adminId}`, { key: org.apiKey });
    expect(blocked.status).toBe(409);
    await accept(invited.invitationToken);
    const demoted = await gw.api('PATCH', `/organizations/me/users/${org.adminId}`, {
      key: org.apiKey,
      body: { role: 'ORG_VIEWER' },
    });
    expect([demoted.status, demoted.body.data.role]).toEqual([200, 'ORG_VIEWER']);
    const last = await gw.api('DELETE', `/organizations/me/users/${invited.user.id}`, { key: org.apiKey });
    expect(last.status).toBe(409);
  });

  it('two admins demoting each other at the same moment: exactly one succeeds', async () => {
    const org = await orgWithAdmin();
    const second = await signInAs(gw, org.apiKey, 'ORG_ADMIN');
    const first = await gw.api('POST', '/auth/login', {
      body: {
        email: (await gw.api('GET', `/organizations/me/users/${org.adminId}`, { key: org.apiKey })).body.data
          .email,
        password: GOOD_PASSWORD,
      },
    });
    const replies = await Promise.all([
      gw.api('PATCH', `/organizations/me/users/${second.userId}`, {
        token: first.body.data.accessToken,
        body: { role: 'ORG_VIEWER' },
      }),
      gw.api('PATCH', `/organizations/me/users/${org.adminId}`, {
        token: second.accessToken,
        body: { role: 'ORG_VIEWER' },
      }),
    ]);
    // The loser is either refused by the rule (409) or, if the winner's demotion already took
    // effect, no longer allowed to manage users (403): never both demoted.
    expect(replies.filter((r) => r.status === 200)).toHaveLength(1);
    const admins = await gw.api('GET', '/organizations/me/users?role=ORG_ADMIN&status=ACTIVE', {
      key: org.apiKey,
    });
    expect(admins.body.data).toHaveLength(1);
  });
});

describe('registration with a first admin', () => {
  it('creates an ACTIVE ORG_ADMIN who can sign in', async () => {
    const adminEmail = email();
    const org = await gw.register({ adminEmail, adminPassword: GOOD_PASSWORD });
    const reply = await gw.api('POST', '/auth/login', {
      body: { email: adminEmail, password: GOOD_PASSWORD },
    });
    expect(reply.status).toBe(200);
    const who = await gw.api('GET', '/auth/session', { token: reply.body.data.accessToken });
    expect(who.body.data).toMatchObject({ organizationId: org.id, role: 'ORG_ADMIN', principal: 'USER' });
  });

  it('returns the admin user beside the organization', async () => {
    const adminEmail = email();
    const reply = await gw.api('POST', '/auth/register-organization', {
      body: {
        name: 'Ashanti Growers',
        type: 'COOPERATIVE',
        countryCode: 'KE',
        adminEmail,
        adminPassword: GOOD_PASSWORD,
      },
    });
    expect(reply.status).toBe(201);
    expect(reply.body.data.adminUser).toMatchObject({
      email: adminEmail,
      role: 'ORG_ADMIN',
      status: 'ACTIVE',
    });
    expect(JSON.stringify(reply.body)).not.toContain(GOOD_PASSWORD);
  });

  it.each([
    [{ adminEmail: 'lonely@example.org' }, 'adminPassword'],
    [{ adminPassword: GOOD_PASSWORD }, 'adminEmail'],
    [{ adminEmail: 'x@example.org', adminPassword: 'password1234' }, 'adminPassword'],
  ])('refuses %j on %s and creates nothing', async (admin, field) => {
    const before = await gw.db.collection('organizations').countDocuments();
    const reply = await gw.api('POST', '/auth/register-organization', {
      body: { name: 'Half Registered', type: 'COOPERATIVE', countryCode: 'KE', ...admin },
    });
    expect([reply.status, reply.body.error.details[0].field]).toEqual([400, field]);
    expect(await gw.db.collection('organizations').countDocuments()).toBe(before);
  });

  it('refuses an admin email already in use with 409, creating no organization', async () => {
    const adminEmail = email();
    await gw.register({ adminEmail, adminPassword: GOOD_PASSWORD });
    const before = await gw.db.collection('organizations').countDocuments();
    const reply = await gw.api('POST', '/auth/register-organization', {
      body: {
        name: 'Copycat',
        type: 'COOPERATIVE',
        countryCode: 'KE',
        adminEmail,
        adminPassword: GOOD_PASSWORD,
      },
    });
    expect([reply.status, reply.body.error.code]).toEqual([409, 'CONFLICT']);
    expect(await gw.db.collection('organizations').countDocuments()).toBe(before);
    expect(await gw.db.collection('api_keys').countDocuments()).toBe(before);
  });
});
