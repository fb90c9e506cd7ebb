import { policyRefOf, policyRegistryAbi, termsHashOf } from '@parametric/chain';
import { eventually } from '@parametric/test-harness';
import { createPublicClient, type Hex, http } from 'viem';
import { policyTerms } from '../src/policies/activation';
import type { PolicyDoc } from '../src/policies/model';
import {
  cropPurchase,
  type PolicyPlatformWithWebhooks,
  type SellableOrg,
  sellableOrg,
  startPolicyPlatformWithWebhooks,
} from './support';

const DAY_MS = 86_400_000;

describe('PUT /policies/{id}/activate (Tier 1, on the local chain)', () => {
  let p: PolicyPlatformWithWebhooks;
  let chain: ReturnType<typeof createPublicClient>;

  beforeAll(async () => {
    p = await startPolicyPlatformWithWebhooks({ SWEEP_INTERVAL_MS: '200' });
    chain = createPublicClient({ transport: http(p.chain.rpcUrl) });
  });
  afterAll(async () => {
    await p.stop();
  });

  const onChain = async (policyId: string) => {
    const id = await chain.readContract({
      address: p.chain.registryAddress,
      abi: policyRegistryAbi,
      functionName: 'idOf',
      args: [policyRefOf(policyId)],
    });
    const termsHash = await chain.readContract({
      address: p.chain.registryAddress,
      abi: policyRegistryAbi,
      functionName: 'termsHashOf',
      args: [id],
    });
    return { id, termsHash };
  };
  const lastId = () =>
    chain.readContract({ address: p.chain.registryAddress, abi: policyRegistryAbi, functionName: 'lastId' });
  const stored = (id: string) => p.db.collection<PolicyDoc>('policies').findOne({ _id: id });
  const buy = async (org: SellableOrg, overrides: Record<string, unknown> = {}) => {
    const reply = await p.gateway.api('POST', '/policies/purchase', {
      key: org.apiKey,
      body: cropPurchase(org, overrides),
    });
    if (reply.status !== 201) throw new Error(`purchase failed: ${JSON.stringify(reply.body)}`);
    return reply.body.data.policy as { id: string; policyNumber: string };
  };
  const activate = (key: string, id: string, body?: unknown) =>
    p.gateway.api('PUT', `/policies/${id}/activate`, { key, body });

  it('registers the policy on chain, activates it, and delivers policy.activated to the partner', async () => {
    const org = await sellableOrg(p);
    await p.connectWebhook(org.apiKey);
    const policy = await buy(org, { sumInsured: 123_456.78, durationDays: 90 });
    const before = Date.now();

    const reply = await activate(org.apiKey, policy.id, { premiumReference: 'MPESA-RCPT-001' });
    expect(reply.status).toBe(200);
    const data = reply.body.data;
    expect(data).toMatchObject({
      id: policy.id,
      policyNumber: policy.policyNumber,
      status: 'ACTIVE',
      premiumPaid: true,
      daysRemaining: 90,
      premiumReference: 'MPESA-RCPT-001',
    });
    expect(data.onChainPolicyId).toMatch(/^[1-9][0-9]*$/);
    expect(data.txHash).toMatch(/^0x[0-9a-f]{64}$/);
    const starts = Date.parse(data.coverStartsAt);
    expect(starts).toBeGreaterThanOrEqual(before - 1000);
    expect(Date.parse(data.coverEndsAt) - starts).toBe(90 * DAY_MS);

    // The chain holds exactly what the API says: the id, the terms' hash, a successful tx.
    const registered = await onChain(policy.id);
    expect(registered.id.toString()).toBe(data.onChainPolicyId);
    const doc = await stored(policy.id);
    expect(doc?.termsHash).toBe(termsHashOf(policyTerms(doc as PolicyDoc)));
    expect(registered.termsHash).toBe(doc?.termsHash);
    const receipt = await chain.getTransactionReceipt({ hash: data.txHash as Hex });
    expect(receipt.status).toBe('success');

    const delivery = await p.receiver.waitFor(
      (d) =>
        d.event === 'policy.activated' &&
        (d.body as { data: { policyId: string } }).data.policyId === policy.id,
    );
    expect(delivery.verified).toBe(true);
    expect(delivery.body).toMatchObject({
      event: 'policy.activated',
      data: {
        policyId: policy.id,
        onChainPolicyId: data.onChainPolicyId,
        policyNumber: policy.policyNumber,
        farmerId: org.farmerId,
        sumInsured: 123_456.78,
        txHash: data.txHash,
      },
    });

    const read = await p.gateway.api('GET', `/policies/${policy.id}`, { key: org.apiKey });
    expect(read.body.data).toMatchObject({ status: 'ACTIVE', onChainPolicyId: data.onChainPolicyId });
    const status = await p.gateway.api('GET', `/policies/${policy.id}/status`, { key: org.apiKey });
    expect(status.body.data).toMatchObject({
      status: 'ACTIVE',
      activatedOnChain: true,
      activation: { via: 'PARTNER', txHash: data.txHash, pending: false },
      nextStep: 'Covered; determinations arrive by webhook',
    });
  });

  it('answers a repeated activation with the same active policy: no second transaction, no second event', async () => {
    const org = await sellableOrg(p);
    await p.connectWebhook(org.apiKey);
    const policy = await buy(org);
    const first = await activate(org.apiKey, policy.id);
    expect(first.status).toBe(200);
    const idsBefore = await lastId();

    const again = await activate(org.apiKey, policy.id, { premiumReference: 'another' });
    expect(again.status).toBe(200);
    expect(again.body.data).toMatchObject({
      status: 'ACTIVE',
      onChainPolicyId: first.body.data.onChainPolicyId,
      txHash: first.body.data.txHash,
      coverStartsAt: first.body.data.coverStartsAt,
      premiumReference: null,
    });
    expect(await lastId()).toBe(idsBefore);
    await p.receiver.waitFor(
      (d) =>
        d.event === 'policy.activated' &&
        (d.body as { data: { policyId: string } }).data.policyId === policy.id,
    );
    // Proving that no second policy.activated comes: after the outbox is drained, give the
    // webhooks service a fixed 500 ms to consume and record anything a second activation emitted.
    await p.policy.drainOutbox();
    await new Promise((r) => setTimeout(r, 500));
    const deliveries = await p.gateway.api('GET', '/organizations/me/webhook/deliveries', {
      key: org.apiKey,
    });
    expect(
      deliveries.body.data.deliveries.filter((d: { event: string }) => d.event === 'policy.activated'),
    ).toHaveLength(1);
  });

  it('activates once when the partner sends the same activation several times at once', async () => {
    const org = await sellableOrg(p);
    const policy = await buy(org);
    const idsBefore = await lastId();

    const replies = await Promise.all(Array.from({ length: 5 }, () => activate(org.apiKey, policy.id)));
    expect(replies.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    expect(new Set(replies.map((r) => r.body.data.onChainPolicyId)).size).toBe(1);
    expect(new Set(replies.map((r) => r.body.data.txHash)).size).toBe(1);
    expect(await lastId()).toBe(idsBefore + 1n);
    expect((await stored(policy.id))?.status).toBe('ACTIVE');
    // One event: without a webhook URL it still becomes a (FAILED) delivery row the partner can list.
    await p.policy.drainOutbox();
    const activatedRows = async () =>
      (
        await p.gateway.api('GET', '/organizations/me/webhook/deliveries', { key: org.apiKey })
      ).body.data.deliveries.filter((d: { event: string }) => d.event === 'policy.activated');
    await eventually(async () => expect(await activatedRows()).not.toHaveLength(0), {
      message: 'a policy.activated delivery row',
    });
    // Proving that no second one comes: a fixed 300 ms for any other to be consumed and recorded.
    await new Promise((r) => setTimeout(r, 300));
    expect(await activatedRows()).toHaveLength(1);
  });

  it('refuses a Tier 2 policy with 403: its premium comes by mobile money, which activates it', async () => {
    const org = await sellableOrg(p, { tier: 'DETERMINATION_AND_SETTLEMENT' });
    const policy = await buy(org);
    const reply = await activate(org.apiKey, policy.id);
    expect(reply.status).toBe(403);
    expect(reply.body.error.code).toBe('FORBIDDEN');
    expect(reply.body.error.message).toMatch(/mobile money/);
    const doc = await stored(policy.id);
    expect(doc).toMatchObject({ status: 'PENDING', premiumPaid: false, onChainPolicyId: null });
    expect((await onChain(policy.id)).id).toBe(0n);
  });

  it("answers 404 for another organization's policy and an unknown id, and 400 for bad input, changing nothing", async () => {
    const owner = await sellableOrg(p);
    const other = await sellableOrg(p);
    const policy = await buy(owner);

    const foreign = await activate(other.apiKey, policy.id);
    const unknown = await activate(other.apiKey, '0b3c6f1e-9f8a-4d2b-8c61-2f4a5e6d7c8b');
    expect([foreign.status, foreign.body]).toEqual([unknown.status, unknown.body]);
    expect(foreign.body.error.code).toBe('NOT_FOUND');

    const malformed = await activate(owner.apiKey, 'not-a-uuid');
    expect([malformed.status, malformed.body.error.details]).toEqual([
      400,
      [{ field: 'id', message: 'must be a uuid' }],
    ]);
    const unknownKey = await activate(owner.apiKey, policy.id, { premiumReference: 'x', status: 'ACTIVE' });
    expect(unknownKey.status).toBe(400);
    expect(unknownKey.body.error.details).toEqual([{ field: 'status', message: expect.any(String) }]);
    const tooLong = await activate(owner.apiKey, policy.id, { premiumReference: 'r'.repeat(101) });
    expect(tooLong.body.error.details).toEqual([
      { field: 'premiumReference', message: 'must be at most 100 characters' },
    ]);
    const notObject = await activate(owner.apiKey, policy.id, ['x']);
    expect(notObject.status).toBe(400);

    expect(await stored(policy.id)).toMatchObject({ status: 'PENDING', onChainPolicyId: null, outbox: [] });
    expect((await onChain(policy.id)).id).toBe(0n);
  });

  it('expires an active policy once its cover has ended (scheduled sweep), and refuses to activate it again', async () => {
    const org = await sellableOrg(p);
    const policy = await buy(org, { durationDays: 30 });
    expect((await activate(org.apiKey, policy.id)).status).toBe(200);
    const untouched = await buy(org);
    expect((await activate(org.apiKey, untouched.id)).status).toBe(200);

    // Thirty days pass for this policy only.
    const past = new Date(Date.now() - 1000);
    await p.db
      .collection<PolicyDoc>('policies')
      .updateOne(
        { _id: policy.id },
        { $set: { coverStartsAt: new Date(past.getTime() - 30 * DAY_MS), coverEndsAt: past } },
      );

    const doc = await eventually(async () => {
      const d = await stored(policy.id);
      expect(d?.status).toBe('EXPIRED');
      return d;
    });
    expect(doc?.expiredAt).toBeInstanceOf(Date);
    expect((await stored(untouched.id))?.status).toBe('ACTIVE');

    const read = await p.gateway.api('GET', `/policies/${policy.id}`, { key: org.apiKey });
    expect(read.body.data).toMatchObject({ status: 'EXPIRED', daysRemaining: 0 });
    const again = await activate(org.apiKey, policy.id);
    expect([again.status, again.body.error.code]).toEqual([400, 'INVALID_INPUT']);
    expect(again.body.error.message).toMatch(/EXPIRED/);
  });
});
