import { testMongoUrl } from '@parametric/test-harness';
import mongoose from 'mongoose';
import {
  cropPurchase,
  farmerBody,
  type PolicyPlatform,
  plotBody,
  type SellableOrg,
  sellableOrg,
  startPolicyPlatform,
} from './support';

describe('sandbox organizations through the gateway (docs/api.md, "Sandbox")', () => {
  let p: PolicyPlatform;
  beforeAll(async () => {
    // Command monitoring on: the set-up test counts the policy service's own writes.
    const monitored = new URL(testMongoUrl());
    monitored.searchParams.set('monitorCommands', 'true');
    p = await startPolicyPlatform({ MONGO_URL: monitored.toString() });
  });
  afterAll(async () => {
    await p.stop();
  });

  const api = (method: string, path: string, key: string, body?: unknown) =>
    p.gateway.api(method, path, { key, body });
  const underwriting = async (orgId: string) =>
    (await p.gateway.ops('GET', `/organizations/${orgId}/underwriting`)).body.data;

  /** A sandbox organization with a farmer (KYC-approved on creation) and the farmer's plot. */
  async function sandboxOrg(): Promise<SellableOrg> {
    const org = await p.gateway.register({ environment: 'sandbox' });
    const farmer = (await api('POST', '/farmers', org.apiKey, farmerBody())).body.data;
    const plot = (await api('POST', '/plots', org.apiKey, plotBody(farmer.id))).body.data;
    return { id: org.id, apiKey: org.apiKey, farmerId: farmer.id, plotId: plot.id };
  }

  it("approves a sandbox organization's farmers on creation, except the magic national IDs", async () => {
    const { apiKey } = await p.gateway.register({ environment: 'sandbox' });
    const register = async (nationalId?: string) =>
      (await api('POST', '/farmers', apiKey, farmerBody(nationalId ? { nationalId } : {}))).body.data;
    expect((await register()).kycStatus).toBe('APPROVED');
    expect((await register('REJECT-0001')).kycStatus).toBe('REJECTED');
    expect((await register('reject-0002')).kycStatus).toBe('REJECTED');
    expect((await register('PENDING-0001')).kycStatus).toBe('PENDING');

    const imported = await api('POST', '/farmers/bulk-import', apiKey, {
      farmers: [
        farmerBody(),
        farmerBody({ nationalId: 'REJECT-0100' }),
        farmerBody({ nationalId: 'PENDING-0100' }),
      ],
    });
    expect(imported.status).toBe(200);
    const statuses = await Promise.all(
      imported.body.data.results.map(
        async (r: { farmerId: string }) =>
          (await api('GET', `/farmers/${r.farmerId}`, apiKey)).body.data.kycStatus,
      ),
    );
    expect(statuses).toEqual(['APPROVED', 'REJECTED', 'PENDING']);
  });

  it("leaves a live organization's farmers PENDING, magic national IDs included", async () => {
    const { apiKey } = await p.gateway.register();
    for (const nationalId of [undefined, 'REJECT-0003', 'PENDING-0003']) {
      const farmer = (await api('POST', '/farmers', apiKey, farmerBody(nationalId ? { nationalId } : {})))
        .body.data;
      expect(farmer.kycStatus).toBe('PENDING');
    }
  });

  it('sells at once: the licence and a large, labelled capacity are set up by the gates, nothing by ops', async () => {
    const org = await sandboxOrg();
    const bought = await api('POST', '/policies/purchase', org.apiKey, cropPurchase(org));
    expect(bought.status).toBe(201);
    const { licences, capacity } = await underwriting(org.id);
    expect(licences).toEqual([
      expect.objectContaining({ market: 'KE', licenceNumber: 'SANDBOX-KE-NOT-A-LICENCE' }),
    ]);
    expect(new Date(licences[0].expiresAt).getTime()).toBeGreaterThan(Date.now() + 365 * 86_400_000);
    expect(capacity).toMatchObject({ currency: 'KES', amount: '1000000000.00', sandbox: true });
    expect(capacity.reserved).not.toBe('0.00');

    // A second purchase reuses the set-up (nothing written over what the first reserved).
    const reserved = capacity.reserved;
    expect((await api('POST', '/policies/purchase', org.apiKey, cropPurchase(org))).status).toBe(201);
    expect(Number((await underwriting(org.id)).capacity.reserved)).toBeGreaterThan(Number(reserved));

    // The policy keeps its organization's environment, for the services that sign or pay it.
    const sold = await p.gateway.ops('GET', `/policies/${bought.body.data.policy.id}`);
    expect(sold.body.data.environment).toBe('sandbox');
  });

  /**
   * The write commands the process sends to the platform's database while `action` runs (the
   * policy service's connection included: every connection of this process is a mongoose one).
   */
  async function writesOf(action: () => Promise<void>) {
    const writes: Array<{ collection: string; command: string }> = [];
    const clients = mongoose.connections
      .filter((connection) => connection.name === p.config.MONGO_DB)
      .map((connection) => connection.getClient());
    const listener = (event: { commandName: string; command: Record<string, unknown> }) => {
      if (!['insert', 'update', 'findAndModify', 'delete'].includes(event.commandName)) return;
      writes.push({
        collection: String(event.command[event.commandName]),
        // Amounts are BigInts (libs/money); a listener that threw would fail the command itself.
        command: JSON.stringify(event.command, (_key, value) =>
          typeof value === 'bigint' ? value.toString() : value,
        ),
      });
    };
    for (const client of clients) client.on('commandStarted', listener);
    try {
      await action();
    } finally {
      for (const client of clients) client.off('commandStarted', listener);
    }
    return writes;
  }

  it('sets a sandbox organization up once: a later purchase writes no licence or capacity set-up', async () => {
    const org = await sandboxOrg();
    const purchase = async () => {
      expect((await api('POST', '/policies/purchase', org.apiKey, cropPurchase(org))).status).toBe(201);
    };
    const setUp = (writes: Array<{ collection: string; command: string }>) =>
      writes.filter(
        (w) =>
          ['licences', 'underwriting_capacity'].includes(w.collection) && w.command.includes('$setOnInsert'),
      );
    // The monitoring sees the service's writes: the first purchase's set-up, one per document.
    const first = await writesOf(purchase);
    expect(
      setUp(first)
        .map((w) => w.collection)
        .sort(),
    ).toEqual(['licences', 'underwriting_capacity']);

    const second = await writesOf(purchase);
    expect(setUp(second)).toEqual([]);
    // It still reserved its cover on the capacity the first set up.
    expect(second.map((w) => w.collection)).toContain('underwriting_capacity');
  });

  it('keeps what ops recorded for a sandbox organization: the set-up only fills what is missing', async () => {
    const org = await sandboxOrg();
    await p.gateway.ops('POST', `/organizations/${org.id}/capacity`, {
      body: { amount: 100_000, currency: 'KES', solvencyAttestedUntil: '2099-01-01T00:00:00Z' },
    });
    expect((await api('POST', '/policies/purchase', org.apiKey, cropPurchase(org))).status).toBe(201);
    const { licences, capacity } = await underwriting(org.id);
    expect(licences.map((l: { licenceNumber: string }) => l.licenceNumber)).toEqual([
      'SANDBOX-KE-NOT-A-LICENCE',
    ]);
    // Labelled: whatever capacity a sandbox organization has is sandbox capacity.
    expect(capacity).toMatchObject({ amount: '100000.00', sandbox: true });
  });

  describe('isolation: sandbox and live never mix', () => {
    let sandbox: SellableOrg & { policyId: string };
    let live: SellableOrg & { policyId: string };
    beforeAll(async () => {
      const s = await sandboxOrg();
      const l = await sellableOrg(p);
      const sold = async (o: SellableOrg) =>
        (await api('POST', '/policies/purchase', o.apiKey, cropPurchase(o))).body.data.policy.id as string;
      sandbox = { ...s, policyId: await sold(s) };
      live = { ...l, policyId: await sold(l) };
    });

    it("a live key cannot read a sandbox organization's farmer, plot or policy (404), nor the reverse", async () => {
      for (const [reader, owner] of [
        [live, sandbox],
        [sandbox, live],
      ] as const) {
        expect((await api('GET', `/farmers/${owner.farmerId}`, reader.apiKey)).status).toBe(404);
        expect((await api('GET', `/plots/${owner.plotId}`, reader.apiKey)).status).toBe(404);
        expect((await api('GET', `/policies/${owner.policyId}`, reader.apiKey)).status).toBe(404);
        // Nor buy on them.
        const crossed = await api('POST', '/policies/purchase', reader.apiKey, cropPurchase(owner));
        expect(crossed.status).toBe(404);
        // Each lists only its own.
        const farmers = (await api('GET', '/farmers?limit=100', reader.apiKey)).body.data;
        expect(farmers.map((f: { id: string }) => f.id)).not.toContain(owner.farmerId);
        const policies = (await api('GET', '/policies?limit=100', reader.apiKey)).body.data;
        expect(policies.map((x: { id: string }) => x.id)).not.toContain(owner.policyId);
        // And each still reads its own.
        expect((await api('GET', `/policies/${reader.policyId}`, reader.apiKey)).status).toBe(200);
      }
    });

    it("the sandbox capacity is the sandbox organization's own", async () => {
      const [sandboxSide, liveSide] = [await underwriting(sandbox.id), await underwriting(live.id)];
      expect(sandboxSide.capacity).toMatchObject({ amount: '1000000000.00', sandbox: true });
      // The live organization's capacity is what ops recorded for it (sellableOrg), unlabelled,
      // and its licence its own.
      expect(liveSide.capacity).toMatchObject({ amount: '1000000.00', sandbox: false });
      expect(liveSide.licences.map((l: { licenceNumber: string }) => l.licenceNumber)).toEqual(['IRA-1']);
      // A live organization with nothing recorded gets no sandbox set-up from a sandbox one.
      const bare = await p.gateway.register();
      expect(await underwriting(bare.id)).toEqual({ licences: [], capacity: null });
    });
  });
});
