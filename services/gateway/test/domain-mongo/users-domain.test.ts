import { randomUUID } from 'node:crypto';
import { generateEd25519KeyPem, loadEd25519Keys } from '@parametric/ed25519-keys';
import { type AppError, ROLE_CAPABILITIES } from '@parametric/http';
import { connectMongoose, type MongooseHandle, outcome } from '@parametric/test-harness';
import { accessTokens } from '../../src/credentials/access-tokens';
import {
  assertAcceptablePassword,
  hashPassword,
  needsRehash,
  verifyPassword,
} from '../../src/credentials/passwords';
import { type GatewayRepositories, gatewayRepositories } from '../../src/repositories';
import { joinAdmins, leaveAdmins } from '../../src/users/admin-roster';
import { createUsers, type Users } from '../../src/users/domain';

/** The dashboard-user rules called directly (no HTTP), on the run's MongoDB. */

const PEPPER = 'users-domain-pepper-0123456789';
/** The users module's clock: what it stamps is this instant, whatever the machine's time. */
const AT = new Date('2026-03-01T09:00:00.000Z');
let handle: MongooseHandle;
let repositories: GatewayRepositories;
let users: Users;

beforeAll(async () => {
  handle = await connectMongoose('gateway_users_domain');
  repositories = gatewayRepositories(handle.connection);
  await repositories.init();
  users = createUsers({ pepper: PEPPER, invitationTtlSeconds: 60, repositories, clock: () => AT });
});

afterAll(async () => {
  await handle.close();
});

describe('passwords', () => {
  it('hash with scrypt N=2^15 r=8 p=1 and a fresh salt, and verify only the same password', async () => {
    const [a, b] = await Promise.all([hashPassword('correct horse 12'), hashPassword('correct horse 12')]);
    expect(a).toMatch(/^scrypt\$15\$8\$1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/);
    expect(a).not.toBe(b);
    expect(await verifyPassword('correct horse 12', a)).toBe(true);
    expect(await verifyPassword('correct horse 13', a)).toBe(false);
    expect(needsRehash(a)).toBe(false);
  });

  it('treat compatibility forms of a character as the same password (NFKC)', async () => {
    const stored = await hashPassword('ｍaize-harvest-26');
    expect(await verifyPassword('maize-harvest-26', stored)).toBe(true);
  });

  it('never match a malformed stored hash, and ask to rehash weaker parameters', async () => {
    expect(await verifyPassword('anything-at-all', 'plain-text-password')).toBe(false);
    expect(await verifyPassword('anything-at-all', '')).toBe(false);
    expect(
      needsRehash('scrypt$14$8$1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'),
    ).toBe(true);
  });

  it('refuse common passwords case-insensitively, repeated characters, and the email inside', () => {
    const refusal = (password: string, email?: string) => {
      try {
        assertAcceptablePassword(password, email, 'password');
        return undefined;
      } catch (err) {
        return (err as AppError).details;
      }
    };
    expect(refusal('Password1234')).toEqual([
      { field: 'password', message: expect.stringMatching(/common/) },
    ]);
    expect(refusal('aaaaaaaaaaaaaa')).toEqual([
      { field: 'password', message: expect.stringMatching(/repeated/) },
    ]);
    expect(refusal('my-amina.w-secret', 'amina.w@example.org')).toEqual([
      {
        field: 'password',
        message: 'must not be your email address, nor contain the part of it before the @',
      },
    ]);
    expect(refusal('sorghum-rains-in-may')).toBeUndefined();
  });
});

describe('access tokens', () => {
  const keys = loadEd25519Keys(generateEd25519KeyPem(), 'test');
  const subject = {
    userId: randomUUID(),
    organizationId: randomUUID(),
    sessionId: randomUUID(),
    role: 'ORG_FINANCE' as const,
    capabilities: ROLE_CAPABILITIES.ORG_FINANCE,
  };

  it('verify with the issuing bundle and issuer only', async () => {
    const issuer = accessTokens(keys, { issuer: 'urn:a', ttlSeconds: 900 });
    const { token, expiresIn } = await issuer.issue(subject);
    expect(expiresIn).toBe(900);
    expect(await issuer.verify(token)).toMatchObject({ sub: subject.userId, org: subject.organizationId });
    expect(await accessTokens(keys, { issuer: 'urn:b', ttlSeconds: 900 }).verify(token)).toBeUndefined();
    const otherKeys = loadEd25519Keys(generateEd25519KeyPem(), 'test');
    expect(await accessTokens(otherKeys, { issuer: 'urn:a', ttlSeconds: 900 }).verify(token)).toBeUndefined();
  });

  it('return undefined, never throw, for garbage', async () => {
    const issuer = accessTokens(keys, { issuer: 'urn:a', ttlSeconds: 900 });
    for (const garbage of ['', 'a.b.c', 'not a token', '..', 'eyJ9.eyJ9.eyJ9']) {
      expect(await issuer.verify(garbage)).toBeUndefined();
    }
  });
});

describe('the admin roster', () => {
  const tenantWithAdmins = async (count: number) => {
    const tenant = repositories.forOrganization(randomUUID());
    const ids: string[] = [];
    for (let i = 0; i < count; i++) {
      const user = await tenant.users.create({
        email: `admin-${randomUUID()}@example.org`,
        name: 'Admin',
        role: 'ORG_ADMIN',
        status: 'ACTIVE',
        passwordHash: 'scrypt$15$8$1$x$y',
      });
      await joinAdmins(tenant, user._id);
      ids.push(user._id);
    }
    return { tenant, ids };
  };

  it('lets all but one admin leave, then refuses with CONFLICT', async () => {
    const { tenant, ids } = await tenantWithAdmins(3);
    await leaveAdmins(tenant, ids[0] as string);
    await leaveAdmins(tenant, ids[1] as string);
    const refused = await outcome(leaveAdmins(tenant, ids[2] as string));
    expect(refused).toMatchObject({ code: 'CONFLICT' });
    expect((await tenant.adminRoster.get())?.activeAdminIds).toEqual([ids[2]]);
  });

  it('concurrent departures of the last two: exactly one leaves', async () => {
    const { tenant, ids } = await tenantWithAdmins(2);
    const results = await Promise.allSettled(ids.map((id) => leaveAdmins(tenant, id)));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    expect((await tenant.adminRoster.get())?.activeAdminIds).toHaveLength(1);
  });

  it('falls back to the users themselves for an admin missing from the roster (an interrupted change)', async () => {
    const { tenant, ids } = await tenantWithAdmins(1);
    const stray = await tenant.users.create({
      email: `stray-${randomUUID()}@example.org`,
      name: 'Stray',
      role: 'ORG_ADMIN',
      status: 'ACTIVE',
    });
    // The stray admin is not on the roster, but the rostered one remains: allowed.
    await leaveAdmins(tenant, stray._id);
    // Left alone, the stray admin cannot leave: no other active admin exists among the users.
    await tenant.users.updateOne({ _id: ids[0] }, { $set: { status: 'DEACTIVATED' } });
    await tenant.adminRoster.updateOne({}, { $set: { activeAdminIds: [] } });
    expect(await outcome(leaveAdmins(tenant, stray._id))).toMatchObject({ code: 'CONFLICT' });
  });

  it('stamps invitations and deactivations with the clock: an invitation lasts its TTL from now', async () => {
    const tenant = repositories.forOrganization(randomUUID());
    const invited = await users.invite(tenant, {
      email: `t-${randomUUID()}@example.org`,
      name: 'T',
      role: 'ORG_VIEWER',
    });
    expect(invited.invitationExpiresAt).toBe(new Date(AT.getTime() + 60_000).toISOString());
    await users.deactivate(tenant, invited.user.id);
    const stored = await tenant.users.findById(invited.user.id).lean();
    expect([stored?.status, stored?.deactivatedAt]).toEqual(['DEACTIVATED', AT]);
  });

  it('updateUser keeps the roster in step with promotions, demotions and deactivation', async () => {
    const { tenant, ids } = await tenantWithAdmins(1);
    const invited = await users.invite(tenant, {
      email: `p-${randomUUID()}@example.org`,
      name: 'P',
      role: 'ORG_VIEWER',
    });
    await tenant.users.updateOne({ _id: invited.user.id }, { $set: { status: 'ACTIVE', passwordHash: 'x' } });
    await users.update(tenant, invited.user.id, { role: 'ORG_ADMIN' });
    expect((await tenant.adminRoster.get())?.activeAdminIds.sort()).toEqual([ids[0], invited.user.id].sort());
    await users.update(tenant, ids[0] as string, { active: false });
    expect((await tenant.adminRoster.get())?.activeAdminIds).toEqual([invited.user.id]);
    expect(await outcome(users.update(tenant, invited.user.id, { role: 'ORG_VIEWER' }))).toMatchObject({
      code: 'CONFLICT',
    });
    expect(await outcome(users.update(tenant, randomUUID(), { name: 'Nobody' }))).toMatchObject({
      code: 'NOT_FOUND',
    });
  });
});
