import { call } from '../../gateway/test/support';
import { farmerBody, type PolicyPlatform, startPolicyPlatform } from './support';

describe('farmer KYC through the ops API', () => {
  let p: PolicyPlatform;
  beforeAll(async () => {
    p = await startPolicyPlatform();
  });
  afterAll(async () => {
    await p.stop();
  });

  it('starts PENDING and is set APPROVED or REJECTED by ops; the partner sees the change', async () => {
    const { apiKey, id: organizationId } = await p.gateway.register();
    const farmer = (await p.gateway.api('POST', '/farmers', { key: apiKey, body: farmerBody() })).body.data;
    expect(farmer.kycStatus).toBe('PENDING');

    const approved = await p.gateway.ops('POST', `/farmers/${farmer.id}/kyc`, {
      body: { status: 'APPROVED' },
    });
    expect(approved.status).toBe(200);
    expect(approved.body.data).toMatchObject({ id: farmer.id, kycStatus: 'APPROVED', organizationId });
    expect((await p.gateway.api('GET', `/farmers/${farmer.id}`, { key: apiKey })).body.data.kycStatus).toBe(
      'APPROVED',
    );
    expect(
      (await p.gateway.api('GET', '/farmers?kycStatus=APPROVED', { key: apiKey })).body.pagination.total,
    ).toBe(1);

    await p.gateway.ops('POST', `/farmers/${farmer.id}/kyc`, { body: { status: 'REJECTED' } });
    expect((await p.gateway.api('GET', `/farmers/${farmer.id}`, { key: apiKey })).body.data.kycStatus).toBe(
      'REJECTED',
    );
  });

  it('validates the status and the id, and answers 404 for an unknown farmer', async () => {
    const { apiKey } = await p.gateway.register();
    const farmer = (await p.gateway.api('POST', '/farmers', { key: apiKey, body: farmerBody() })).body.data;
    for (const body of [{ status: 'VERIFIED' }, {}, { status: 'APPROVED', note: 'x' }]) {
      const reply = await p.gateway.ops('POST', `/farmers/${farmer.id}/kyc`, { body });
      expect(reply.status).toBe(400);
      expect(reply.body.error.code).toBe('INVALID_INPUT');
    }
    expect((await p.gateway.api('GET', `/farmers/${farmer.id}`, { key: apiKey })).body.data.kycStatus).toBe(
      'PENDING',
    );
    expect(
      (await p.gateway.ops('POST', '/farmers/not-a-uuid/kyc', { body: { status: 'APPROVED' } })).status,
    ).toBe(400);
    const unknown = await p.gateway.ops('POST', '/farmers/9b2f6c8e-1d4a-4c3b-8e7f-0a1b2c3d4e5f/kyc', {
      body: { status: 'APPROVED' },
    });
    expect(unknown.status).toBe(404);
  });

  it('is closed to partners and to callers without the ops token', async () => {
    const { apiKey } = await p.gateway.register();
    const farmer = (await p.gateway.api('POST', '/farmers', { key: apiKey, body: farmerBody() })).body.data;
    const noToken = await call('POST', `${p.gateway.gateway.opsUrl}/farmers/${farmer.id}/kyc`, {
      body: { status: 'APPROVED' },
    });
    expect(noToken.status).toBe(401);
    const asPartner = await call('POST', `${p.gateway.gateway.opsUrl}/farmers/${farmer.id}/kyc`, {
      key: apiKey,
      body: { status: 'APPROVED' },
    });
    expect(asPartner.status).toBe(401);
    // Straight to the service, without the gateway's signed ops context.
    const direct = await call('POST', `${p.policy.url}/ops/farmers/${farmer.id}/kyc`, {
      body: { status: 'APPROVED' },
    });
    expect(direct.status).toBe(401);
    expect((await p.gateway.api('GET', `/farmers/${farmer.id}`, { key: apiKey })).body.data.kycStatus).toBe(
      'PENDING',
    );
  });
});
