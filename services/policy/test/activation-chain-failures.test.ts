import { policyRefOf, policyRegistryAbi } from '@parametric/chain';
import { type LocalChain, startLocalChain } from '@parametric/local-chain';
import { createProducer, type Producer, policyActivationJobId } from '@parametric/queue';
import { connectRedis, eventually, testRedisUrl } from '@parametric/test-harness';
import { Queue } from 'bullmq';
import { createPublicClient, http } from 'viem';
import { type RpcProxy, startRpcProxy } from '../../../libs/chain/test/rpc-proxy';
import type { PolicyDoc } from '../src/policies/model';
import {
  cropPurchase,
  type PolicyPlatformWithWebhooks,
  type SellableOrg,
  sellableOrg,
  startPolicyPlatformWithWebhooks,
} from './support';

// This file runs its own anvil behind a proxy, so it can stop the node, bring it back, and
// make calls hang, without disturbing the run's shared chain.

const BREAKER_RESET_MS = 2500;

describe('activation when the chain fails', () => {
  let node: LocalChain;
  let proxy: RpcProxy;
  let p: PolicyPlatformWithWebhooks;
  let activations: Producer<'policy-activations'>;

  const privateChainEnv = () => ({ ...process.env, CHAIN_RPC_URL: '' });

  beforeAll(async () => {
    node = await startLocalChain(privateChainEnv());
    proxy = await startRpcProxy(node.rpcUrl);
    p = await startPolicyPlatformWithWebhooks({
      CHAIN_RPC_URL: proxy.url,
      CHAIN_REGISTRY_ADDRESS: node.registryAddress,
      CHAIN_PRIVATE_KEY: node.ownerPrivateKey,
      CHAIN_TIMEOUT_MS: '400',
      CHAIN_BREAKER_RESET_MS: String(BREAKER_RESET_MS),
      ACTIVATION_RETRY_BASE_MS: '150',
      ACTIVATION_RETRY_MAX_MS: '300',
      SWEEP_INTERVAL_MS: '300',
    });
    // What the payment flow does once a premium is received.
    activations = createProducer('policy-activations', {
      connection: testRedisUrl(),
      prefix: p.config.REDIS_PREFIX,
    });
  });
  afterAll(async () => {
    await activations.close();
    await p.stop();
    await proxy.close();
    await node.stop();
  });

  /** Stops the node; `restart` brings up a fresh one (same registry address) behind the proxy. */
  async function stopNode() {
    await node.stop();
    return async () => {
      const fresh = await startLocalChain(privateChainEnv());
      expect(fresh.registryAddress).toBe(node.registryAddress);
      node = fresh;
      proxy.upstream = fresh.rpcUrl;
    };
  }

  const redis = connectRedis();
  afterAll(() => redis.quit());
  const inspectActivations = () =>
    new Queue('policy-activations', { connection: redis, prefix: p.config.REDIS_PREFIX });

  const stored = (id: string) => p.db.collection<PolicyDoc>('policies').findOne({ _id: id });
  const buy = async (org: SellableOrg) => {
    const reply = await p.gateway.api('POST', '/policies/purchase', {
      key: org.apiKey,
      body: cropPurchase(org),
    });
    if (reply.status !== 201) throw new Error(`purchase failed: ${JSON.stringify(reply.body)}`);
    return reply.body.data.policy as { id: string; policyNumber: string };
  };
  const activate = (org: SellableOrg, id: string) =>
    p.gateway.api('PUT', `/policies/${id}/activate`, { key: org.apiKey });
  const idOnChain = () => {
    const chain = createPublicClient({ transport: http(node.rpcUrl) });
    return (policyId: string) =>
      chain.readContract({
        address: node.registryAddress,
        abi: policyRegistryAbi,
        functionName: 'idOf',
        args: [policyRefOf(policyId)],
      });
  };
  /** Nothing of an activation is stored: still PENDING, unpaid, no chain ids, no event. */
  const expectUntouched = async (id: string) =>
    expect(await stored(id)).toMatchObject({
      status: 'PENDING',
      premiumPaid: false,
      onChainPolicyId: null,
      txHash: null,
      coverStartsAt: null,
      outbox: [],
      outboxPending: false,
    });
  /** Waits until the breaker has let a trial call through and closed again. */
  const activateOnceRecovered = (org: SellableOrg, id: string) =>
    eventually(
      async () => {
        const reply = await activate(org, id);
        if (reply.status !== 200) throw new Error(`${reply.status} ${JSON.stringify(reply.body)}`);
        return reply;
      },
      { timeout: BREAKER_RESET_MS + 10_000, message: `activation of ${id} once the breaker closes` },
    );

  it('answers 502 BLOCKCHAIN_ERROR with the node stopped, opens the breaker (no RPC at all), then half-opens and closes', async () => {
    const org = await sellableOrg(p);
    const [a, b, c] = [await buy(org), await buy(org), await buy(org)];
    const restart = await stopNode();

    const messages: string[] = [];
    while (messages.length < 10) {
      const reply = await activate(org, a.id);
      expect([reply.status, reply.body.error.code]).toEqual([502, 'BLOCKCHAIN_ERROR']);
      messages.push(reply.body.error.message);
      if (/circuit breaker is open/.test(reply.body.error.message)) break;
    }
    expect(messages[0]).toMatch(/chain RPC unavailable/);
    expect(messages.length).toBeGreaterThanOrEqual(4); // at least volumeThreshold (3) real failures first
    expect(messages.at(-1)).toMatch(/circuit breaker is open.*stays PENDING/);

    // Open: partners get an immediate 502 and the chain is not called at all.
    const seen = proxy.requests;
    const open = await activate(org, b.id);
    expect([open.status, open.body.error.code]).toEqual([502, 'BLOCKCHAIN_ERROR']);
    expect(open.body.error.message).toMatch(/circuit breaker is open/);
    expect(proxy.requests).toBe(seen);
    for (const policy of [a, b, c]) await expectUntouched(policy.id);

    await restart();
    // After the reset timeout one trial call goes through (half-open); its success closes it.
    const recovered = await activateOnceRecovered(org, a.id);
    expect(recovered.body.data).toMatchObject({ status: 'ACTIVE', premiumPaid: true });
    expect(proxy.requests).toBeGreaterThan(seen);
    const closed = await activate(org, b.id);
    expect([closed.status, closed.body.data.status]).toEqual([200, 'ACTIVE']);
    expect(await idOnChain()(b.id)).toBe(BigInt(closed.body.data.onChainPolicyId));
  });

  it('answers 502 when chain calls time out, and a registration that landed before the timeout is completed by the retry', async () => {
    const org = await sellableOrg(p);
    const slow = await buy(org);
    const landed = await buy(org);

    // Every call hangs: a timeout, nothing sent.
    proxy.hang = () => true;
    const timedOut = await activate(org, slow.id);
    expect([timedOut.status, timedOut.body.error.code]).toEqual([502, 'BLOCKCHAIN_ERROR']);
    expect(timedOut.body.error.message).toMatch(/timed out/);
    await expectUntouched(slow.id);

    // Only the receipt hangs: the transaction lands on chain, yet the call times out.
    proxy.hang = (method) => method === 'eth_getTransactionReceipt';
    const lost = await activate(org, landed.id);
    expect([lost.status, lost.body.error.code]).toEqual([502, 'BLOCKCHAIN_ERROR']);
    await expectUntouched(landed.id);
    const registeredId = await idOnChain()(landed.id);
    expect(registeredId).toBeGreaterThan(0n);

    proxy.hang = undefined;
    const retried = await activateOnceRecovered(org, landed.id);
    expect(retried.body.data.onChainPolicyId).toBe(registeredId.toString());
    const afterwards = await activateOnceRecovered(org, slow.id);
    expect(afterwards.body.data.status).toBe('ACTIVE');
  });

  it('Tier 2: the queued activation retries with backoff while the node is down, then activates and emits the event', async () => {
    const org = await sellableOrg(p, { tier: 'DETERMINATION_AND_SETTLEMENT' });
    await p.connectWebhook(org.apiKey);
    const policy = await buy(org);
    const restart = await stopNode();

    const job = { policyId: policy.id, organizationId: org.id, paymentId: 'pay_mpesa_QK7X1' };
    await activations.add(job, { jobId: policyActivationJobId(policy.id) });
    await activations.add(job, { jobId: policyActivationJobId(policy.id) }); // a repeated request collapses

    const status = () =>
      p.gateway.api('GET', `/policies/${policy.id}/status`, { key: org.apiKey }).then((r) => r.body.data);
    const failing = await eventually(
      async () => {
        const s = await status();
        expect(s.activation.failedAttempts).toBeGreaterThanOrEqual(3);
        return s;
      },
      { timeout: 15_000 },
    );
    expect(failing).toMatchObject({
      status: 'PENDING',
      premiumPaid: true,
      activation: { pending: true, lastError: expect.stringMatching(/on chain/) },
      nextStep: 'No action: the premium is received and the policy is being activated on chain',
    });

    await restart();
    const active = await eventually(
      async () => {
        const s = await status();
        expect(s.status).toBe('ACTIVE');
        return s;
      },
      { timeout: BREAKER_RESET_MS + 15_000 },
    );
    expect(active.activation).toMatchObject({ via: 'PAYMENT', pending: false });
    const doc = await stored(policy.id);
    expect(doc).toMatchObject({
      premiumReference: 'pay_mpesa_QK7X1',
      activatedVia: 'PAYMENT',
      activationRequestedAt: null,
    });

    const delivery = await p.receiver.waitFor(
      (d) =>
        d.event === 'policy.activated' &&
        (d.body as { data: { policyId: string } }).data.policyId === policy.id,
    );
    expect(delivery.verified).toBe(true);
    expect((delivery.body as { data: unknown }).data).toMatchObject({
      onChainPolicyId: doc?.onChainPolicyId,
    });
    expect(
      p.receiver.received.filter(
        (d) => (d.body as { data?: { policyId?: string } }).data?.policyId === policy.id,
      ),
    ).toHaveLength(1);
  });

  it('Tier 2: a paid policy whose job Redis lost is re-queued by the sweep and activated', async () => {
    const org = await sellableOrg(p, { tier: 'DETERMINATION_AND_SETTLEMENT' });
    const policy = await buy(org);
    const restart = await stopNode();
    await activations.add(
      { policyId: policy.id, organizationId: org.id, paymentId: 'pay_lost_1' },
      { jobId: policyActivationJobId(policy.id) },
    );
    await eventually(
      async () => expect((await stored(policy.id))?.activationFailures ?? 0).toBeGreaterThanOrEqual(1),
      { timeout: 15_000 },
    );

    // Redis loses the queue's data.
    const queue = inspectActivations();
    try {
      await queue.obliterate({ force: true });
      expect(await queue.getJob(policyActivationJobId(policy.id))).toBeUndefined();
    } finally {
      await queue.close();
    }

    await restart();
    const doc = await eventually(
      async () => {
        const d = await stored(policy.id);
        expect(d?.status).toBe('ACTIVE');
        return d;
      },
      { timeout: BREAKER_RESET_MS + 15_000 },
    );
    expect(doc).toMatchObject({ premiumReference: 'pay_lost_1', activatedVia: 'PAYMENT' });
  });

  it("Tier 2: Redis lost all its data, the sweeps' schedules too: they come back and the paid policy is activated", async () => {
    const org = await sellableOrg(p, { tier: 'DETERMINATION_AND_SETTLEMENT' });
    const policy = await buy(org);
    const restart = await stopNode();
    await activations.add(
      { policyId: policy.id, organizationId: org.id, paymentId: 'pay_lost_2' },
      { jobId: policyActivationJobId(policy.id) },
    );
    await eventually(
      async () => expect((await stored(policy.id))?.activationFailures ?? 0).toBeGreaterThanOrEqual(1),
      { timeout: 15_000 },
    );

    // Redis loses every queue's data: the activation job and the sweeps' job schedulers.
    const queues = [
      inspectActivations(),
      new Queue('policy-sweeps', { connection: redis, prefix: p.config.REDIS_PREFIX }),
    ];
    try {
      // Not checked empty afterwards: the service puts its schedules back on its own interval,
      // which can come before any check. The activation job is gone for good, so only a sweep
      // scheduled again can re-queue it: the policy turning ACTIVE below is that proof.
      for (const queue of queues) await queue.obliterate({ force: true });
    } finally {
      for (const queue of queues) await queue.close();
    }

    await restart();
    const doc = await eventually(
      async () => {
        const d = await stored(policy.id);
        expect(d?.status).toBe('ACTIVE');
        return d;
      },
      { timeout: BREAKER_RESET_MS + 15_000 },
    );
    expect(doc).toMatchObject({ premiumReference: 'pay_lost_2', activatedVia: 'PAYMENT' });
  });

  it('Tier 2 job for a Tier 1 policy fails for good and marks nothing paid', async () => {
    const org = await sellableOrg(p);
    const policy = await buy(org);
    const queue = inspectActivations();
    try {
      const job = await activations.add(
        { policyId: policy.id, organizationId: org.id, paymentId: 'pay_wrong_tier' },
        { jobId: policyActivationJobId(policy.id) },
      );
      const state = await eventually(
        async () => {
          const s = await queue.getJobState(job.id as string);
          expect(s).toBe('failed');
          return s;
        },
        { timeout: 15_000 },
      );
      expect(state).toBe('failed');
      const failed = await queue.getJob(job.id as string);
      expect(failed?.failedReason).toMatch(/^FORBIDDEN: .*PUT \/policies\/\{id\}\/activate/);
      expect(failed?.attemptsMade).toBe(1);
    } finally {
      await queue.close();
    }
    await expectUntouched(policy.id);
    expect(await stored(policy.id)).toMatchObject({ activationRequestedAt: null, premiumReference: null });
  });
});
