/**
 * The SDK against the real gateway and policy service, over sockets: a partner's journey made with
 * nothing but the SDK, and a keyed purchase whose first answer is lost on the way, retried by the
 * SDK with the same key, buying one policy.
 */

import type { AddressInfo } from 'node:net';
import { createServer, type Server, Socket } from 'node:net';
import {
  farmerBody,
  type PolicyPlatform,
  sellableOrg,
  startPolicyPlatform,
} from '../../../services/policy/test/support';
import { type components, createClient } from '../src';

type Organization = components['schemas']['Organization'];
type Farmer = components['schemas']['Farmer'];

describe('@parametric/sdk against the platform', () => {
  let p: PolicyPlatform;
  let baseUrl: string;
  beforeAll(async () => {
    p = await startPolicyPlatform();
    baseUrl = p.gateway.gateway.partnerUrl;
  });
  afterAll(async () => {
    await p.stop();
  });

  it('registers an organization, reads it, creates a farmer and lists farmers with typed results', async () => {
    const anonymous = createClient({ baseUrl });
    const registered = await anonymous.POST('/auth/register-organization', {
      body: { name: 'SDK Cooperative', type: 'COOPERATIVE', countryCode: 'KE' },
    });
    expect(registered.response.status).toBe(201);
    if (!registered.data) throw new Error(`registration failed: ${JSON.stringify(registered.error)}`);
    const { id, apiKey } = registered.data.data.organization;
    expect(apiKey).toEqual(expect.any(String));

    const client = createClient({ baseUrl, apiKey });
    const me = await client.GET('/organizations/me');
    expect(me.response.status).toBe(200);
    // Typed: the compiler knows the organization's fields and their types.
    const organization: Organization | undefined = me.data?.data;
    expect(organization).toMatchObject({ id, name: 'SDK Cooperative', countryCode: 'KE', webhookUrl: null });

    const body = farmerBody();
    const created = await client.POST('/farmers', { body });
    expect(created.response.status).toBe(201);
    const farmer: Farmer | undefined = created.data?.data;
    expect(farmer).toMatchObject({ ...body, kycStatus: 'PENDING' });

    const listed = await client.GET('/farmers', { params: { query: { page: 1, limit: 10 } } });
    expect(listed.response.status).toBe(200);
    expect(listed.data?.data.map((f) => f.id)).toEqual([farmer?.id]);
    expect(listed.data?.pagination).toMatchObject({ page: 1, limit: 10, total: 1 });
  });

  it("answers the API's errors as typed error bodies, not exceptions", async () => {
    const client = createClient({ baseUrl, apiKey: 'pis_not_a_real_key' });
    const me = await client.GET('/organizations/me');
    expect(me.response.status).toBe(401);
    expect(me.data).toBeUndefined();
    expect(me.error?.error.code).toBe('UNAUTHORIZED');
  });

  describe('a keyed purchase whose first answer is lost', () => {
    /** A TCP proxy to the gateway that closes the first connection as soon as its answer begins. */
    let proxy: Server;
    let connections = 0;
    const sockets = new Set<Socket>();
    beforeAll(async () => {
      const target = new URL(baseUrl);
      proxy = createServer((client) => {
        connections++;
        const dropAnswer = connections === 1;
        const upstream = new Socket();
        sockets.add(client).add(upstream);
        upstream.connect(Number(target.port), target.hostname);
        client.pipe(upstream);
        upstream.on('data', (chunk: Buffer) => {
          // The gateway has done the work and started answering; the partner never hears of it.
          if (dropAnswer) {
            client.destroy();
            upstream.destroy();
          } else {
            client.write(chunk);
          }
        });
        upstream.on('end', () => client.end());
        for (const socket of [client, upstream]) socket.on('error', () => undefined);
        client.on('close', () => upstream.destroy());
      });
      await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    });
    afterAll(async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => proxy.close(resolve));
    });

    it('is retried with the same Idempotency-Key and buys exactly one policy', async () => {
      const org = await sellableOrg(p);
      const port = (proxy.address() as AddressInfo).port;
      const client = createClient({
        baseUrl: `http://127.0.0.1:${port}${new URL(baseUrl).pathname}`,
        apiKey: org.apiKey,
        retry: { baseDelayMs: 50 },
      });

      const bought = await client.POST('/policies/purchase', {
        body: {
          farmerId: org.farmerId,
          productType: 'CROP',
          plotId: org.plotId,
          sumInsured: 50_000,
          coverageType: 'DROUGHT',
          durationDays: 180,
        },
      });
      expect(bought.response.status).toBe(201);
      // The answer is the replay of the first, lost, purchase: the key was the same.
      expect(bought.response.headers.get('idempotent-replayed')).toBe('true');
      expect(connections).toBe(2);
      const policy = bought.data?.data.policy;
      expect(policy).toMatchObject({ farmerId: org.farmerId, status: 'PENDING' });

      const direct = createClient({ baseUrl, apiKey: org.apiKey });
      const listed = await direct.GET('/policies', { params: { query: { farmerId: org.farmerId } } });
      expect(listed.data?.data.map((x) => x.id)).toEqual([policy?.id]);
      expect(await p.db.collection('policies').countDocuments({ organizationId: org.id })).toBe(1);
    });
  });
});
