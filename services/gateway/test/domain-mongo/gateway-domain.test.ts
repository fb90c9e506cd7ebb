import { randomUUID } from 'node:crypto';
import { connectMongoose, type MongooseHandle, outcome } from '@parametric/test-harness';
import { type ApiKeys, createApiKeys } from '../../src/api-keys/domain';
import { hashCredential } from '../../src/credentials/secrets';
import { createOps, type Ops } from '../../src/ops/domain';
import { createOrganizations, type Organizations } from '../../src/organizations/domain';
import { type GatewayRepositories, gatewayRepositories } from '../../src/repositories';
import { createUsers, type Users } from '../../src/users/domain';

/** The gateway's domain functions called directly on the run's MongoDB (no HTTP). */

const PEPPER = 'domain-test-pepper-0123456789';
/** The clock every module here reads: what they stamp is this instant, whatever the machine's time. */
const AT = new Date('2026-03-01T09:00:00.000Z');
const clock = () => AT;
let handle: MongooseHandle;
let repositories: GatewayRepositories;
let users: Users;
let organizations: Organizations;
let apiKeys: ApiKeys;
let ops: Ops;

beforeAll(async () => {
  handle = await connectMongoose('gateway_domain');
  repositories = gatewayRepositories(handle.connection);
  await repositories.init();
  users = createUsers({ pepper: PEPPER, invitationTtlSeconds: 3600, repositories, clock });
  organizations = createOrganizations({ repositories, pepper: PEPPER, users, clock, sandboxEnabled: true });
  apiKeys = createApiKeys({ pepper: PEPPER, clock });
  ops = createOps({ clock });
});

afterAll(async () => {
  await handle.close();
});

const register = (name = 'Nakuru Growers') =>
  organizations.register({ name, type: 'COOPERATIVE', countryCode: 'KE' });

describe('registerOrganization', () => {
  it('creates the organization and its credential, storing only hashes, and returns the key once', async () => {
    const { organization } = await register();
    const key = await handle.connection.collection('api_keys').findOne({ _id: organization.id as never });
    expect(key?.keyHash).toBe(hashCredential(PEPPER, organization.apiKey));
    expect(JSON.stringify(key)).not.toContain(organization.apiKey);
    expect(JSON.stringify(key)).not.toContain(organization.apiSecret);
    expect(organization).toMatchObject({
      kybStatus: 'NOT_STARTED',
      serviceTier: 'DETERMINATION',
      webhookUrl: null,
    });
  });

  it('removes the organization again when its credential cannot be stored', async () => {
    const across = repositories.acrossOrganizations();
    const before = await across.organizations.countDocuments();
    const broken = {
      ...across,
      apiKeys: {
        create: () => Promise.reject(new Error('write refused')),
        deleteOne: across.apiKeys.deleteOne.bind(across.apiKeys),
      },
    } as unknown as typeof across;
    await expect(
      createOrganizations({
        repositories: { ...repositories, acrossOrganizations: () => broken },
        pepper: PEPPER,
        users,
        clock,
        sandboxEnabled: true,
      }).register({ name: 'Orphan', type: 'COOPERATIVE', countryCode: 'KE' }),
    ).rejects.toThrow('write refused');
    expect(await across.organizations.countDocuments()).toBe(before);
  });
});

describe('settings and the organization read', () => {
  it('changes only the settings given, and null clears one', async () => {
    const { organization } = await register();
    const tenant = repositories.forOrganization(organization.id);
    expect(
      await organizations.updateSettings(tenant, { brandColor: '#1A7F37', contactPhone: '+254700000001' }),
    ).toEqual({
      brandColor: '#1A7F37',
      contactPhone: '+254700000001',
    });
    expect(await organizations.updateSettings(tenant, { brandColor: null })).toEqual({
      brandColor: null,
      contactPhone: '+254700000001',
    });
  });

  it('shows the webhook URL the webhooks service reports, asked for this organization', async () => {
    const { organization } = await register();
    const doc = await repositories.forOrganization(organization.id).organization.get();
    const asked: string[] = [];
    const view = await organizations.read(doc as NonNullable<typeof doc>, async (id) => {
      asked.push(id);
      return 'https://partner.example/hooks';
    });
    expect([view.webhookUrl, asked]).toEqual(['https://partner.example/hooks', [organization.id]]);
  });

  it("cannot touch another organization's document through a tenant binding", async () => {
    const { organization } = await register('Untouched');
    const stranger = repositories.forOrganization(randomUUID());
    expect((await outcome(organizations.updateSettings(stranger, { brandColor: '#000000' }))).code).toBe(
      'NOT_FOUND',
    );
    const doc = await repositories.forOrganization(organization.id).organization.get();
    expect(doc?.brandColor).toBeNull();
  });
});

describe('API keys', () => {
  it('rotation replaces the key in one write: the old hash is gone, the new one active', async () => {
    const { organization } = await register();
    const tenant = repositories.forOrganization(organization.id);
    const rotated = await apiKeys.rotate(tenant, 'rot');
    expect(rotated.apiKey).toMatch(/^pik_rot_/);
    const stored = await tenant.apiKey.get();
    expect(stored?.keyHash).toBe(hashCredential(PEPPER, rotated.apiKey));
    expect(stored?.keyHash).not.toBe(hashCredential(PEPPER, organization.apiKey));
    expect(await apiKeys.metadata(tenant)).toMatchObject({ active: true, rotatedAt: AT.toISOString() });
  });

  it('revokes only the key that asked: a revoke with a replaced key changes nothing', async () => {
    const { organization } = await register();
    const tenant = repositories.forOrganization(organization.id);
    const oldHash = hashCredential(PEPPER, organization.apiKey);
    await apiKeys.rotate(tenant, 'rot');
    expect((await apiKeys.revoke(tenant, oldHash)).active).toBe(true);
    const current = await tenant.apiKey.get();
    const revoked = await apiKeys.revoke(tenant, current?.keyHash as string);
    expect(revoked.active).toBe(false);
    // Rotating makes a revoked credential active again (spec: reversible by rotating).
    await apiKeys.rotate(tenant, 'ops');
    expect((await apiKeys.metadata(tenant)).active).toBe(true);
  });

  it('shows masked metadata, never the key', async () => {
    const { organization } = await register();
    const metadata = await apiKeys.metadata(repositories.forOrganization(organization.id));
    expect(metadata.masked).toBe(
      `${organization.apiKey.slice(0, 12)}********${organization.apiKey.slice(-4)}`,
    );
    expect(JSON.stringify(metadata)).not.toContain(organization.apiKey);
  });
});

describe('ops decisions', () => {
  it('records a KYB decision and its event in one write; repeating it records nothing', async () => {
    const { organization } = await register();
    const tenant = repositories.forOrganization(organization.id);
    const first = await ops.recordKybDecision(tenant, { status: 'VERIFIED', notes: 'checked' });
    expect([first.eventRecorded, first.organization.kybStatus]).toEqual([true, 'VERIFIED']);
    expect((await ops.view(tenant)).kybUpdatedAt).toBe(AT.toISOString());
    const again = await ops.recordKybDecision(tenant, { status: 'VERIFIED' });
    expect(again.eventRecorded).toBe(false);
    const stored = await handle.connection
      .collection('organizations')
      .findOne({ _id: organization.id as never });
    expect(stored?.outbox.map((e: { event: string }) => e.event)).toEqual(['kyb.verified']);
    expect(stored?.outbox[0].data).toEqual({ organizationId: organization.id, kybStatus: 'VERIFIED' });
  });

  it('a rejection carries its notes in the event', async () => {
    const { organization } = await register();
    const tenant = repositories.forOrganization(organization.id);
    await ops.recordKybDecision(tenant, { status: 'REJECTED', notes: 'certificate expired' });
    const stored = await handle.connection
      .collection('organizations')
      .findOne({ _id: organization.id as never });
    expect(stored?.outbox[0]).toMatchObject({
      event: 'kyb.rejected',
      data: { organizationId: organization.id, kybStatus: 'REJECTED', notes: 'certificate expired' },
    });
  });

  it('deactivates and re-activates, and shows the key metadata to ops', async () => {
    const { organization } = await register();
    const tenant = repositories.forOrganization(organization.id);
    expect((await ops.setActive(tenant, false)).isActive).toBe(false);
    const view = await ops.view(tenant);
    expect([view.isActive, view.apiKey?.active, view.kybNotes]).toEqual([false, true, null]);
    expect((await ops.setActive(tenant, true)).isActive).toBe(true);
  });

  it('an unknown organization is NOT_FOUND for every ops decision', async () => {
    const unknown = repositories.forOrganization(randomUUID());
    expect((await outcome(ops.requireOrganization(unknown))).code).toBe('NOT_FOUND');
    expect((await outcome(ops.recordKybDecision(unknown, { status: 'VERIFIED' }))).code).toBe('NOT_FOUND');
    expect((await outcome(ops.setActive(unknown, false))).code).toBe('NOT_FOUND');
    expect((await outcome(ops.view(unknown))).code).toBe('NOT_FOUND');
  });
});
