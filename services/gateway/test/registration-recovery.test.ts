import { randomUUID } from 'node:crypto';
import { GOOD_PASSWORD, startTestGateway, type TestGateway } from './support';

/**
 * A registration killed half-way (test/faults has the real SIGKILL) leaves at most a user and a
 * key of an organization that was never written: nobody can reach them, and the email is not
 * lost to the partner who retries.
 */
describe('registration after one that died half-way', () => {
  let t: TestGateway;
  beforeAll(async () => {
    t = await startTestGateway();
  });
  afterAll(async () => {
    await t.stop();
  });

  async function leaveOrphan(email: string, ageMs: number) {
    const organizationId = randomUUID();
    const createdAt = new Date(Date.now() - ageMs);
    await t.db.collection('users').insertOne({
      _id: randomUUID() as never,
      organizationId,
      email,
      name: 'Died Half-Way Co-op',
      role: 'ORG_ADMIN',
      status: 'ACTIVE',
      passwordHash: 'scrypt$unused',
      createdAt,
      updatedAt: createdAt,
    });
    await t.db
      .collection('api_keys')
      .insertOne({ _id: organizationId as never, keyHash: 'unused', createdAt });
    return organizationId;
  }

  const register = (email: string) =>
    t.api('POST', '/auth/register-organization', {
      body: {
        name: 'Retry Co-op',
        type: 'COOPERATIVE',
        countryCode: 'KE',
        adminEmail: email,
        adminPassword: GOOD_PASSWORD,
      },
    });

  it('reclaims the email of a user whose organization was never written', async () => {
    const orphanOrg = await leaveOrphan('retry@recovery.example', 5 * 60_000);
    const reply = await register('retry@recovery.example');
    expect(reply.status).toBe(201);
    expect(reply.body.data.adminUser.email).toBe('retry@recovery.example');
    expect(await t.db.collection('users').countDocuments({ email: 'retry@recovery.example' })).toBe(1);
    expect(await t.db.collection('users').countDocuments({ organizationId: orphanOrg })).toBe(0);
    expect(await t.db.collection('api_keys').countDocuments({ _id: orphanOrg as never })).toBe(0);
  });

  it('does not take an email from a registration that may still be in progress, or from a real user', async () => {
    await leaveOrphan('fresh@recovery.example', 0);
    const fresh = await register('fresh@recovery.example');
    expect(fresh.status).toBe(409);
    const first = await register('owner@recovery.example');
    expect(first.status).toBe(201);
    await t.db
      .collection('users')
      .updateOne(
        { email: 'owner@recovery.example' },
        { $set: { createdAt: new Date(Date.now() - 3_600_000) } },
      );
    const second = await register('owner@recovery.example');
    expect(second.status).toBe(409);
    expect(second.body.error.details).toEqual([
      { field: 'adminEmail', message: 'is already used by a dashboard user' },
    ]);
  });
});
