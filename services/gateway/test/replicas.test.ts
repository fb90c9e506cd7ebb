import { generateEd25519KeyPem } from '@parametric/ed25519-keys';
import { createApp, finishApp, requireInternalContext } from '@parametric/http';
import { startLocalRedis } from '@parametric/local-redis';
import { createLogger } from '@parametric/logger';
import { type RunningWebhooks, startWebhooks } from '../../webhooks/src/service';
import { webhooksTestConfig } from '../../webhooks/test/support';
import { GOOD_PASSWORD, serveStandIn, signInAs, startTestGateway, type TestGateway } from './support';

/**
 * Gateway replicas cache who a key or a sign-in session belongs to (issue 13). Two gateways on
 * one MongoDB database and one Redis prefix, as two replicas behind a load balancer: whatever is
 * changed through one must hold on the other from its very next request, whatever the other had
 * cached. Every check first makes the other replica cache the old state.
 */

const SECRET = 'test-internal-signing-secret-0123';
const TOKEN_KEYS = generateEd25519KeyPem();

/** A service behind the gateway that answers with the organization context it was signed. */
async function startContextEcho(): Promise<{ url: string; close(): Promise<void> }> {
  const logger = createLogger({ name: 'context-echo', level: 'silent' });
  const app = createApp(logger);
  app.use('/api', requireInternalContext(SECRET));
  app.get('/api/policies/:id', (req, res) => {
    res.json({ success: true, data: { role: req.context?.role, organization: req.context?.organization } });
  });
  finishApp(app, logger);
  return serveStandIn(app);
}

/** A second gateway on the first one's database and Redis prefix; stopping it keeps the data. */
async function replicaOf(first: TestGateway, overrides: Record<string, string> = {}) {
  const replica = await startTestGateway({
    MONGO_DB: first.config.MONGO_DB,
    REDIS_PREFIX: first.config.REDIS_PREFIX,
    REDIS_URL: first.config.REDIS_URL,
    ...overrides,
  });
  return {
    ...replica,
    stop: async () => {
      await replica.gateway.stop();
      await replica.db.close();
    },
  };
}

const me = (gateway: TestGateway, credentials: { key?: string; token?: string }) =>
  gateway.api('GET', '/organizations/me', credentials);

describe('two gateway replicas', () => {
  let echo: Awaited<ReturnType<typeof startContextEcho>>;
  let webhooks: RunningWebhooks;
  let a: TestGateway;
  let b: TestGateway;

  beforeAll(async () => {
    echo = await startContextEcho();
    webhooks = await startWebhooks(
      webhooksTestConfig({ RUN_WORKERS: 'false' }),
      createLogger({ name: 'wh', level: 'silent' }),
    );
    const shared = {
      DASHBOARD_TOKEN_KEYS: TOKEN_KEYS,
      POLICY_URL: echo.url,
      WEBHOOKS_URL: webhooks.url,
      ANONYMOUS_LIMIT_POINTS: '100000',
      LOGIN_IP_FAILURES: '1000',
    };
    a = await startTestGateway(shared);
    b = await replicaOf(a, shared);
  });
  afterAll(async () => {
    await b?.stop();
    await a?.stop();
    await webhooks?.stop();
    await echo?.close();
  });

  describe('API keys', () => {
    it('a key rotated through one replica fails on the other on the next request; the new key works there', async () => {
      const org = await a.register();
      expect((await me(b, { key: org.apiKey })).status).toBe(200);
      const rotated = await a.api('POST', '/organizations/me/api-key/rotate', { key: org.apiKey });
      expect(rotated.status).toBe(200);
      const old = await me(b, { key: org.apiKey });
      expect([old.status, old.body.error.code]).toEqual([401, 'UNAUTHORIZED']);
      expect((await me(b, { key: rotated.body.data.apiKey })).status).toBe(200);
      expect((await me(a, { key: org.apiKey })).status).toBe(401);
    });

    it('a key rotated through the ops API of one replica fails on the other at once', async () => {
      const org = await a.register();
      expect((await me(b, { key: org.apiKey })).status).toBe(200);
      const rotated = await a.ops('POST', `/organizations/${org.id}/api-key/rotate`);
      expect(rotated.status).toBe(200);
      expect((await me(b, { key: org.apiKey })).status).toBe(401);
      expect((await me(b, { key: rotated.body.data.apiKey })).status).toBe(200);
    });

    it('a key revoked through one replica fails on the other at once', async () => {
      const org = await a.register();
      expect((await me(b, { key: org.apiKey })).status).toBe(200);
      expect((await a.api('POST', '/organizations/me/api-key/revoke', { key: org.apiKey })).status).toBe(200);
      expect((await me(b, { key: org.apiKey })).status).toBe(401);
    });

    it('rotating one organization leaves the other organizations cached on the replica working', async () => {
      const [one, other] = [await a.register(), await a.register()];
      expect((await me(b, { key: other.apiKey })).status).toBe(200);
      await a.api('POST', '/organizations/me/api-key/rotate', { key: one.apiKey });
      expect((await me(b, { key: other.apiKey })).status).toBe(200);
    });
  });

  describe('the organization', () => {
    it('deactivated through the ops API of one replica: 403 on the other at once, 200 again once reactivated', async () => {
      const org = await a.register();
      expect((await me(b, { key: org.apiKey })).status).toBe(200);
      expect((await a.ops('POST', `/organizations/${org.id}/deactivate`)).status).toBe(200);
      const refused = await me(b, { key: org.apiKey });
      expect([refused.status, refused.body.error.code]).toEqual([403, 'FORBIDDEN']);
      expect((await a.ops('POST', `/organizations/${org.id}/activate`)).status).toBe(200);
      expect((await me(b, { key: org.apiKey })).status).toBe(200);
    });

    it('KYB and tier changes show on the other replica at once, in its answers and in the context it forwards', async () => {
      const org = await a.register();
      const forwarded = async () =>
        (await b.api('GET', '/policies/any', { key: org.apiKey, fromStandIn: true })).body.data.organization;
      expect((await me(b, { key: org.apiKey })).body.data).toMatchObject({
        kybStatus: 'NOT_STARTED',
        serviceTier: 'DETERMINATION',
      });
      expect(await forwarded()).toMatchObject({ kybStatus: 'NOT_STARTED', serviceTier: 'DETERMINATION' });

      await a.ops('POST', `/organizations/${org.id}/kyb`, { body: { status: 'VERIFIED' } });
      expect((await me(b, { key: org.apiKey })).body.data.kybStatus).toBe('VERIFIED');
      expect((await forwarded()).kybStatus).toBe('VERIFIED');

      await a.ops('POST', `/organizations/${org.id}/service-tier`, {
        body: { serviceTier: 'DETERMINATION_AND_SETTLEMENT' },
      });
      expect((await me(b, { key: org.apiKey })).body.data.serviceTier).toBe('DETERMINATION_AND_SETTLEMENT');
      expect((await forwarded()).serviceTier).toBe('DETERMINATION_AND_SETTLEMENT');

      await a.ops('POST', `/organizations/${org.id}/kyb`, { body: { status: 'REJECTED', notes: 'expired' } });
      expect((await forwarded()).kybStatus).toBe('REJECTED');
    });

    it('settings changed through one replica show on the other at once', async () => {
      const org = await a.register();
      expect((await me(b, { key: org.apiKey })).body.data.settings.brandColor).toBeNull();
      await a.api('PUT', '/organizations/me/settings', { key: org.apiKey, body: { brandColor: '#123456' } });
      expect((await me(b, { key: org.apiKey })).body.data.settings.brandColor).toBe('#123456');
    });

    it('a webhook URL set through one replica shows on the other at once', async () => {
      const org = await a.register();
      expect((await me(b, { key: org.apiKey })).body.data.webhookUrl).toBeNull();
      const url = 'http://127.0.0.1:9/hooks/one';
      expect(
        (await a.api('PUT', '/organizations/me/webhook', { key: org.apiKey, body: { url } })).status,
      ).toBe(200);
      expect((await me(b, { key: org.apiKey })).body.data.webhookUrl).toBe(url);
      const next = 'http://127.0.0.1:9/hooks/two';
      await b.api('PUT', '/organizations/me/webhook', { key: org.apiKey, body: { url: next } });
      expect((await me(a, { key: org.apiKey })).body.data.webhookUrl).toBe(next);
    });
  });

  describe('dashboard tokens', () => {
    it('deactivating the user through one replica stops its token on the other at once', async () => {
      const org = await a.register();
      const user = await signInAs(a, org.apiKey, 'ORG_OPERATOR');
      expect((await me(b, { token: user.accessToken })).status).toBe(200);
      const off = await a.api('DELETE', `/organizations/me/users/${user.userId}`, { key: org.apiKey });
      expect(off.status).toBe(200);
      const after = await me(b, { token: user.accessToken });
      expect([after.status, after.body.error.code]).toEqual([401, 'UNAUTHORIZED']);
      expect(
        (await b.api('POST', '/auth/refresh', { body: { refreshToken: user.refreshToken } })).status,
      ).toBe(401);
    });

    it('logging out through one replica stops the access token on the other at once', async () => {
      const org = await a.register();
      const user = await signInAs(a, org.apiKey, 'ORG_VIEWER');
      expect((await b.api('GET', '/auth/session', { token: user.accessToken })).status).toBe(200);
      await a.api('POST', '/auth/logout', { body: { refreshToken: user.refreshToken } });
      expect((await b.api('GET', '/auth/session', { token: user.accessToken })).status).toBe(401);
    });

    it('a refresh token replayed on one replica revokes the session on the other at once', async () => {
      const org = await a.register();
      const user = await signInAs(a, org.apiKey, 'ORG_FINANCE');
      const rotated = (await a.api('POST', '/auth/refresh', { body: { refreshToken: user.refreshToken } }))
        .body.data;
      expect((await b.api('GET', '/auth/session', { token: rotated.accessToken })).status).toBe(200);
      expect(
        (await a.api('POST', '/auth/refresh', { body: { refreshToken: user.refreshToken } })).status,
      ).toBe(401);
      expect((await b.api('GET', '/auth/session', { token: rotated.accessToken })).status).toBe(401);
    });

    it('a demotion through one replica narrows the token on the other at once', async () => {
      const org = await a.register();
      const user = await signInAs(a, org.apiKey, 'ORG_OPERATOR');
      expect((await b.api('GET', '/auth/session', { token: user.accessToken })).body.data.role).toBe(
        'ORG_OPERATOR',
      );
      await a.api('PATCH', `/organizations/me/users/${user.userId}`, {
        key: org.apiKey,
        body: { role: 'ORG_VIEWER' },
      });
      expect((await b.api('GET', '/auth/session', { token: user.accessToken })).body.data.role).toBe(
        'ORG_VIEWER',
      );
    });

    it('deactivating the organization through one replica stops user tokens on the other at once (403)', async () => {
      const org = await a.register();
      const user = await signInAs(a, org.apiKey, 'ORG_ADMIN');
      expect((await me(b, { token: user.accessToken })).status).toBe(200);
      await a.ops('POST', `/organizations/${org.id}/deactivate`);
      expect((await me(b, { token: user.accessToken })).status).toBe(403);
    });

    it('a new sign-in through one replica shows in the session the other replica answers', async () => {
      const org = await a.register();
      const user = await signInAs(a, org.apiKey, 'ORG_VIEWER');
      const before = (await b.api('GET', '/auth/session', { token: user.accessToken })).body.data.user
        .lastLoginAt;
      await new Promise((resolve) => setTimeout(resolve, 5));
      const again = await a.api('POST', '/auth/login', {
        body: { email: user.email, password: GOOD_PASSWORD },
      });
      expect(again.status).toBe(200);
      const after = (await b.api('GET', '/auth/session', { token: user.accessToken })).body.data.user
        .lastLoginAt;
      expect(after).not.toBe(before);
    });
  });

  it('a warm key is resolved without MongoDB, until the organization changes', async () => {
    // Proves the cache is used: the key's record removed behind the gateways' backs is not
    // noticed while the stamp holds, and is once any change through a gateway replaces it.
    const org = await a.register();
    expect((await me(b, { key: org.apiKey })).status).toBe(200);
    await a.db.collection('api_keys').deleteOne({ _id: org.id as never });
    expect((await me(b, { key: org.apiKey })).status).toBe(200);
    await a.ops('POST', `/organizations/${org.id}/service-tier`, { body: { serviceTier: 'DETERMINATION' } });
    expect((await me(b, { key: org.apiKey })).status).toBe(401);
  });
});

describe('two gateway replicas while Redis is away', () => {
  it('trust nothing they cached: a key rotated meanwhile fails on the other replica, the new one works', async () => {
    const redis = await startLocalRedis({});
    const a = await startTestGateway({ REDIS_URL: redis.url });
    const b = await replicaOf(a, { REDIS_URL: redis.url });
    try {
      const org = await a.register();
      expect((await me(b, { key: org.apiKey })).status).toBe(200);
      await redis.stop();
      const rotated = await a.ops('POST', `/organizations/${org.id}/api-key/rotate`);
      expect(rotated.status).toBe(200);
      expect((await me(b, { key: org.apiKey })).status).toBe(401);
      // Rate limits fall back to each replica's memory: the new key is served.
      expect((await me(b, { key: rotated.body.data.apiKey })).status).toBe(200);
    } finally {
      await b.stop();
      await a.stop();
      await redis.stop();
    }
  });
});
