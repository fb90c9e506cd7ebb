import { outcome } from '@parametric/test-harness';
import { requireCapability } from '../../src/capabilities';

describe('capabilities of the determination routes', () => {
  it('lets the API key (ORG_ADMIN) read determinations and report settlements', () => {
    expect(() => requireCapability('ORG_ADMIN', 'determination:read')).not.toThrow();
    expect(() => requireCapability('ORG_ADMIN', 'settlement-report:write')).not.toThrow();
  });

  it('refuses a role without the capability with 403 FORBIDDEN naming it', async () => {
    const refused = await outcome(
      Promise.resolve().then(() => requireCapability('ORG_VIEWER', 'determination:read')),
    );
    expect(refused).toMatchObject({
      code: 'FORBIDDEN',
      message: 'Your role ORG_VIEWER lacks the capability determination:read this endpoint needs',
    });
  });
});
