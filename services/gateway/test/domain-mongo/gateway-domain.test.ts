import { randomUUID } from 'node:crypto';
import { connectMongoose, type MongooseHandle, outcome } from '@parametric/test-harness';
import { hashCredential } from '../../src/api-keys/credentials';
import { apiKeyMetadata, revokeApiKey, rotateCredentials } from '../../src/api-keys/domain';
import { opsOrganizationView, recordKybDecision, requireOrganization, setActive } from '../../src/ops/domain';
import { readOrganization, registerOrganization, updateSettings } from '../../src/organizations/domain';
import { type GatewayRepositories, gatewayRepositories } from '../../src/repositories';

/** The gateway's domain functions called directly on the run's MongoDB (no HTTP). */

const PEPPER = 'domain-test-pepper-0123456789';
let handle: MongooseHandle;
let repositories: GatewayRepositories;

beforeAll(async () => {
  handle = await connectMongoose('gateway_domain');
  repositories = gatewayRepositories(handle.connection);
  await repositories.init();
});

afterAll(async () => {
  await handle.close();
});

const register = (name = 'Nakuru Growers') =>
  registerOrganization(repositories, { name, type: 'COOPERATIVE', countryCode: 'KE' }, PEPPER);

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
      registerOrganization(
        { ...repositories, acrossOrganizations: () => broken },
        { name: 'Orphan', type: 'COOPERATIVE', countryCode: 'KE' },
        PEPPER,
      ),
    ).rejects.toThrow('write refused');
    expect(await across.organizations.countDocuments()).toBe(before);
  });
});

describe('settings and the organization read', () => {
  it('changes only the settings given, and null clears one', async () => {
    const { organization } = await register();
    const tenant = repositories.forOrganization(organization.id);
    expect(await updateSettings(tenant, { brandColor: '#1A7F37', contactPhone: '+254700000001' })).toEqual({
      brandColor: '#1A7F37',
      contactPhone: '+254700000001',
    });
    expect(await updateSettings(tenant, { brandColor: null })).toEqual({
      brandColor: null,
      contactPhone: '+254700000001',
    });
  });

  it('shows the webhook URL the webhooks service reports, asked for this organization', async () => {
    const { organization } = await register();
    const doc = await repositories.forOrganization(organization.id).organization.get();
    const asked: string[] = [];
    const view = await readOrganization(doc as NonNullable<typeof doc>, async (id) => {
      asked.push(id);
      return 'https://partner.example/hooks';
    });
    expect([view.webhookUrl, asked]).toEqual(['https://partner.example/hooks', [organization.id]]);
  });

  it("cannot touch another organization's document through a tenant binding", async () => {
    const { organization } = await register('Untouched');
    const stranger = repositories.forOrganization(randomUUID());
    expect((await outcome(updateSettings(stranger, { brandColor: '#000000' }))).code).toBe('NOT_FOUND');
    const doc = await repositories.forOrganization(organization.id).organization.get();
    expect(doc?.brandColor).toBeNull();
  });
});

describe('API keys', () => {
  it('rotation replaces the key in one write: the old hash is gone, the new one active', async () => {
    const { organization } = await register();
    const tenant = repositories.forOrganization(organization.id);
    const rotated = await rotateCredentials(tenant, PEPPER, 'rot');
    expect(rotated.apiKey).toMatch(/^pik_rot_/);
    const stored = await tenant.apiKey.get();
    expect(stored?.keyHash).toBe(hashCredential(PEPPER, rotated.apiKey));
    expect(stored?.keyHash).not.toBe(hashCredential(PEPPER, organization.apiKey));
    expect((await apiKeyMetadata(tenant)).active).toBe(true);
  });

  it('revokes only the key that asked: a revoke with a replaced key changes nothing', async () => {
    const { organization } = await register();
    const tenant = repositories.forOrganization(organization.id);
    const oldHash = hashCredential(PEPPER, organization.apiKey);
    await rotateCredentials(tenant, PEPPER, 'rot');
    expect((await revokeApiKey(tenant, oldHash)).active).toBe(true);
    const current = await tenant.apiKey.get();
    const revoked = await revokeApiKey(tenant, current?.keyHash as string);
    expect(revoked.active).toBe(false);
    // Rotating makes a revoked credential active again (spec: reversible by rotating).
    await rotateCredentials(tenant, PEPPER, 'ops');
    expect((await apiKeyMetadata(tenant)).active).toBe(true);
  });

  it('shows masked metadata, never the key', async () => {
    const { organization } = await register();
    const metadata = await apiKeyMetadata(repositories.forOrganization(organization.id));
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
    const first = await recordKybDecision(tenant, { status: 'VERIFIED', notes: 'checked' });
    expect([first.eventRecorded, first.organization.kybStatus]).toEqual([true, 'VERIFIED']);
    const again = await recordKybDecision(tenant, { status: 'VERIFIED' });
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
    await recordKybDecision(tenant, { status: 'REJECTED', notes: 'certificate expired' });
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
    expect((await setActive(tenant, false)).isActive).toBe(false);
    const view = await opsOrganizationView(tenant);
    expect([view.isActive, view.apiKey?.active, view.kybNotes]).toEqual([false, true, null]);
    expect((await setActive(tenant, true)).isActive).toBe(true);
  });

  it('an unknown organization is NOT_FOUND for every ops decision', async () => {
    const unknown = repositories.forOrganization(randomUUID());
    expect((await outcome(requireOrganization(unknown))).code).toBe('NOT_FOUND');
    expect((await outcome(recordKybDecision(unknown, { status: 'VERIFIED' }))).code).toBe('NOT_FOUND');
    expect((await outcome(setActive(unknown, false))).code).toBe('NOT_FOUND');
    expect((await outcome(opsOrganizationView(unknown))).code).toBe('NOT_FOUND');
  });
});
