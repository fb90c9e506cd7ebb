import { OPS_CAPABILITIES, signContext } from '@parametric/http';
import { createLogger } from '@parametric/logger';
import { type RunningPolicy, startPolicy } from '../src/service';
import { policyTestConfig } from './support';

describe('OPTIONS on the policy service', () => {
  let policy: RunningPolicy;
  let secret: string;
  beforeAll(async () => {
    const { config } = await policyTestConfig({ RUN_WORKERS: 'false' });
    secret = config.INTERNAL_SIGNING_SECRET;
    policy = await startPolicy(config, createLogger({ name: 'policy-options', level: 'silent' }));
  });
  afterAll(async () => {
    await policy.stop();
  });

  const partner = () =>
    signContext(
      {
        organizationId: '3f2b8c1e-7d4a-4e6b-9a1c-2b3d4e5f6a7b',
        role: 'ORG_ADMIN',
        requestId: 'options-test',
        issuedAt: Date.now(),
        organization: {
          countryCode: 'KE',
          kybStatus: 'VERIFIED',
          serviceTier: 'DETERMINATION',
          isActive: true,
        },
      },
      secret,
    );
  const ops = () =>
    signContext(
      {
        role: 'SERVICE',
        capabilities: [...OPS_CAPABILITIES],
        requestId: 'options-test',
        issuedAt: Date.now(),
      },
      secret,
    );
  const options = (path: string, headers: Record<string, string>) =>
    fetch(`${policy.url}${path}`, { method: 'OPTIONS', headers });

  it('answers 204 with the declared methods of the path, never a 200 text/plain', async () => {
    const farmers = await options('/api/farmers', partner());
    expect([farmers.status, farmers.headers.get('allow')]).toEqual([204, 'GET, HEAD, OPTIONS, POST']);
    const activate = await options('/api/policies/0b3c6f1e-9f8a-4d2b-8c61-2f4a5e6d7c8b/activate', partner());
    expect([activate.status, activate.headers.get('allow')]).toEqual([204, 'OPTIONS, PUT']);
    const capacity = await options('/ops/organizations/0b3c6f1e-9f8a-4d2b-8c61-2f4a5e6d7c8b/capacity', ops());
    expect([capacity.status, capacity.headers.get('allow')]).toEqual([204, 'OPTIONS, POST']);
  });

  it('answers 404 in the envelope for a path no route has, and 401 without a signed context', async () => {
    const unknown = await options('/api/tractors', partner());
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as { error: { code: string } }).error.code).toBe('NOT_FOUND');
    expect((await options('/api/farmers', {})).status).toBe(401);
    expect((await options('/ops/farmers/0b3c6f1e-9f8a-4d2b-8c61-2f4a5e6d7c8b/kyc', partner())).status).toBe(
      401,
    );
  });
});
