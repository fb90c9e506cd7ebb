import { randomBytes, randomUUID } from 'node:crypto';
import { AppError } from '@parametric/http';
import { setWebhookUrl } from '../../src/endpoints/domain';
import type { TenantWebhooks } from '../../src/repositories';

// The URL an organization may set (docs/webhooks.md: https, a public address, no credentials),
// refused by the domain function before its store is used: the store here fails the test if it
// is. The address rules in depth are test/unit/target-guard.test.ts; the route's answer and that
// nothing changed, test/webhook-config.test.ts.

const keys = { secretKey: randomBytes(32).toString('base64'), allowInsecure: false };

/** One organization's webhook store, which a refused URL must not reach. */
function untouchedStore() {
  const used: string[] = [];
  const tenant = new Proxy({ organizationId: randomUUID() } as Record<PropertyKey, unknown>, {
    get(target, key) {
      if (key === 'organizationId') return target.organizationId;
      used.push(String(key));
      throw new Error(`the webhook store was used (${String(key)}) for a refused URL`);
    },
  }) as unknown as TenantWebhooks;
  return { tenant, used };
}

describe('setWebhookUrl (production rules)', () => {
  it.each([
    ['http://93.184.216.34/hooks', /https/],
    ['https://127.0.0.1/hooks', /private|reserved|loopback/],
    ['https://10.0.0.8/hooks', /private|reserved/],
    ['https://169.254.169.254/latest/meta-data', /.+/],
    ['https://[::1]/hooks', /.+/],
    ['https://user:pass@93.184.216.34/hooks', /credentials/],
    ['not a url', /.+/],
  ])('refuses %s with INVALID_INPUT on the url field, storing nothing', async (url, reason) => {
    const { tenant, used } = untouchedStore();
    let refusal: unknown;
    try {
      await setWebhookUrl(tenant, url, keys);
    } catch (err) {
      refusal = err;
    }
    expect(refusal).toBeInstanceOf(AppError);
    expect(refusal).toMatchObject({
      code: 'INVALID_INPUT',
      message: 'Invalid webhook URL',
      details: [{ field: 'url', message: expect.stringMatching(reason) }],
    });
    expect(used).toEqual([]);
  });
});
