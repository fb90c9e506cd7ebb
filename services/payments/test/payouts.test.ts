import { randomUUID } from 'node:crypto';
import { parseExposition, sampleValue } from '@parametric/metrics';
import { createProducer, type Producer } from '@parametric/queue';
import { eventually } from '@parametric/test-harness';
import type { ReceivedDelivery } from '@parametric/webhook-receiver';
import { farmerBody, plotBody, type SellableOrg, sellableOrg } from '../../policy/test/support';
import { type PaymentsPlatform, startPaymentsPlatform } from './support';

const FAST = {
  PAYOUT_RETRY_BASE_SECONDS: '0.05',
  PAYOUT_STATUS_POLL_MS: '50',
  PAYOUT_MAX_ATTEMPTS: '3',
};

const B2C_PATH = '/mpesa/b2c/v3/paymentrequest';
const STATUS_PATH = '/mpesa/transactionstatus/v1/query';

interface Payout {
  payoutId: string;
  status: string;
  attempts: number;
  mobileMoneyRef: string | null;
  reason: string | null;
  amountKES: string;
  owedKES: string;
  amountUSDC: string;
  quoteId: string;
}

/** Farmers by organization and phone: a phone is unique among an organization's farmers. */
const farmers = new Map<string, { farmerId: string; plotId: string }>();

async function farmerWith(p: PaymentsPlatform, org: SellableOrg, phone: string) {
  const known = farmers.get(`${org.id}:${phone}`);
  if (known) return known;
  const farmer = await p.gateway.api('POST', '/farmers', {
    key: org.apiKey,
    body: farmerBody({ phoneNumber: phone }),
  });
  if (farmer.status !== 201) throw new Error(`farmer: ${JSON.stringify(farmer.body)}`);
  const farmerId = farmer.body.data.id as string;
  const kyc = await p.gateway.ops('POST', `/farmers/${farmerId}/kyc`, { body: { status: 'APPROVED' } });
  if (kyc.status >= 300) throw new Error(`kyc: ${JSON.stringify(kyc.body)}`);
  const plot = await p.gateway.api('POST', '/plots', { key: org.apiKey, body: plotBody(farmerId) });
  const made = { farmerId, plotId: plot.body.data.id as string };
  farmers.set(`${org.id}:${phone}`, made);
  return made;
}

/** A policy for the organization's farmer with this phone (the phone decides the B2C outcome). */
async function policyFor(p: PaymentsPlatform, org: SellableOrg, phone: string) {
  const { farmerId, plotId } = await farmerWith(p, org, phone);
  const bought = await p.gateway.api('POST', '/policies/purchase', {
    key: org.apiKey,
    body: {
      farmerId,
      productType: 'CROP',
      plotId,
      sumInsured: 50_000,
      coverageType: 'DROUGHT',
      durationDays: 180,
    },
  });
  if (bought.status !== 201) throw new Error(`purchase: ${JSON.stringify(bought.body)}`);
  return bought.body.data.policy.id as string;
}

const origination = (org: SellableOrg, policyId: string, amountMinor = '500000') => ({
  determinationId: randomUUID(),
  policyId,
  organizationId: org.id,
  amountMinor,
  currency: 'KES',
  exponent: 2,
});

async function originate(p: PaymentsPlatform, org: SellableOrg, phone: string): Promise<Payout> {
  const policyId = await policyFor(p, org, phone);
  const reply = await p.gateway.ops('POST', '/payouts', { body: origination(org, policyId) });
  if (reply.status !== 201) throw new Error(`origination: ${JSON.stringify(reply.body)}`);
  return reply.body.data as Payout;
}

const readPayout = async (p: PaymentsPlatform, org: SellableOrg, id: string) =>
  (await p.gateway.api('GET', `/payouts/${id}`, { key: org.apiKey })).body.data as Payout;

const settled = (p: PaymentsPlatform, org: SellableOrg, id: string, status: 'COMPLETED' | 'FAILED') =>
  eventually(
    async () => {
      const read = await readPayout(p, org, id);
      expect(read.status).toBe(status);
      return read;
    },
    { timeout: 20_000, message: `payout ${id} to be ${status}` },
  );

const about = (payoutId: string) => (d: ReceivedDelivery) =>
  d.verified && (d.body as { data: { payoutId?: string } }).data?.payoutId === payoutId;

const payoutEvents = (p: PaymentsPlatform, payoutId: string) =>
  p.receiver.verified().filter((d) => d.event?.startsWith('payout.') && about(payoutId)(d));

const b2cRequests = (p: PaymentsPlatform, payoutId: string) =>
  p.simulator
    .requests()
    .filter(
      (r) =>
        r.path === B2C_PATH &&
        String((r.body as { OriginatorConversationID?: string }).OriginatorConversationID).startsWith(
          payoutId,
        ),
    );

/** `payouts_total` by state, from the payments service's `/metrics`. */
async function payoutCounts(p: PaymentsPlatform) {
  const samples = parseExposition(await (await fetch(`${p.payments.url}/metrics`)).text());
  const count = (state: string) => sampleValue(samples, 'payouts_total', { state });
  return {
    originated: count('originated'),
    succeeded: count('succeeded'),
    failed: count('failed'),
    retrying: count('retrying'),
  };
}

describe('payouts (Tier 2, M-Pesa B2C)', () => {
  let p: PaymentsPlatform;
  let org: SellableOrg;
  let tier1: SellableOrg;
  let originations: Producer<'payout-originations'>;

  beforeAll(async () => {
    p = await startPaymentsPlatform(FAST);
    org = await sellableOrg(p.asPolicyPlatform, {
      capacity: 100_000_000,
      tier: 'DETERMINATION_AND_SETTLEMENT',
    });
    tier1 = await sellableOrg(p.asPolicyPlatform, { capacity: 100_000_000, tier: 'DETERMINATION' });
    await p.connectWebhook(org.apiKey);
    originations = createProducer('payout-originations', {
      connection: p.config.REDIS_URL,
      prefix: p.config.REDIS_PREFIX,
    });
  }, 120_000);

  afterAll(async () => {
    await originations?.close();
    await p?.stop();
  });

  it('pays the farmer from a payout-originations job: COMPLETED with the receipt, one payout.completed', async () => {
    const policyId = await policyFor(p, org, '+254722000001');
    // 5,000.40 KES owed: M-Pesa pays whole shillings, so 5,000 are paid and the owed figure is shown.
    const job = origination(org, policyId, '500040');
    await originations.add(job, { jobId: `payout-${job.determinationId}` });
    const stored = await eventually(
      async () => {
        const doc = await p.db.collection('payouts').findOne({ determinationId: job.determinationId });
        expect(doc).not.toBeNull();
        return doc as unknown as { _id: string; amountUSDC: string; quoteId: string };
      },
      { timeout: 20_000, message: 'the payout to be originated' },
    );
    const done = await settled(p, org, stored._id, 'COMPLETED');
    expect(done).toMatchObject({
      amountKES: '5000.00',
      owedKES: '5000.40',
      amountUSDC: expect.stringMatching(/^\d+\.\d{6}$/),
      mobileMoneyRef: expect.any(String),
      reason: null,
      attempts: 1,
    });
    // The quote taken at origination is kept and readable.
    const quote = await p.gateway.api('GET', `/payments/quotes/${done.quoteId}`, { key: org.apiKey });
    expect(quote.body.data.convertedAmount).toBe(done.amountUSDC);
    const delivery = await p.receiver.waitFor(
      (d) => d.event === 'payout.completed' && about(stored._id)(d),
      20_000,
    );
    expect((delivery.body as { data: unknown }).data).toEqual({
      payoutId: stored._id,
      policyId,
      amountUSDC: done.amountUSDC,
      amountKES: '5000.00',
      mobileMoneyRef: done.mobileMoneyRef,
    });
    expect(b2cRequests(p, stored._id)).toHaveLength(1);
    // The policy read shows it (policy-summaries, newest revision).
    await eventually(
      async () => {
        const policy = (await p.gateway.api('GET', `/policies/${policyId}`, { key: org.apiKey })).body.data;
        expect(policy.payouts).toEqual([
          expect.objectContaining({
            payoutId: stored._id,
            determinationId: job.determinationId,
            status: 'COMPLETED',
            amount: '5000.00',
            mobileMoneyRef: done.mobileMoneyRef,
          }),
        ]);
      },
      { timeout: 20_000, message: 'the policy read to show the payout' },
    );
    // A second job for the same determination makes no second payout.
    const again = await p.gateway.ops('POST', '/payouts', { body: job });
    expect(again.status).toBe(200);
    expect(again.body.data.payoutId).toBe(stored._id);
    expect(await p.db.collection('payouts').countDocuments({ determinationId: job.determinationId })).toBe(1);
  });

  it('fails a 2040 (unregistered recipient) at once, with one payout.failed', async () => {
    const before = await payoutCounts(p);
    const payout = await originate(p, org, '+254722000021');
    const failed = await settled(p, org, payout.payoutId, 'FAILED');
    expect(await payoutCounts(p)).toEqual({
      ...before,
      originated: before.originated + 1,
      failed: before.failed + 1,
    });
    expect(failed).toMatchObject({ reason: 'RECIPIENT_NOT_REGISTERED', attempts: 1, mobileMoneyRef: null });
    const delivery = await p.receiver.waitFor(
      (d) => d.event === 'payout.failed' && about(payout.payoutId)(d),
      20_000,
    );
    expect((delivery.body as { data: unknown }).data).toEqual({
      payoutId: payout.payoutId,
      policyId: expect.any(String),
      amountUSDC: payout.amountUSDC,
      reason: 'RECIPIENT_NOT_REGISTERED',
    });
    expect(b2cRequests(p, payout.payoutId)).toHaveLength(1);
    await p.payments.drainOutbox();
    expect(payoutEvents(p, payout.payoutId)).toHaveLength(1);
  });

  it('retries a retriable ResultCode with a new OriginatorConversationID, after Transaction Status says the first did not pay', async () => {
    const before = await payoutCounts(p);
    const payout = await originate(p, org, '+254722000011');
    const done = await settled(p, org, payout.payoutId, 'COMPLETED');
    expect(done.attempts).toBe(2);
    // payouts_total: originated, one further attempt, succeeded; each once.
    expect(await payoutCounts(p)).toEqual({
      ...before,
      originated: before.originated + 1,
      retrying: before.retrying + 1,
      succeeded: before.succeeded + 1,
    });
    const b2c = b2cRequests(p, payout.payoutId);
    expect(b2c.map((r) => (r.body as { OriginatorConversationID: string }).OriginatorConversationID)).toEqual(
      [payout.payoutId, `${payout.payoutId}-2`],
    );
    const status = p.simulator
      .requests()
      .filter(
        (r) =>
          r.path === STATUS_PATH &&
          (r.body as { OriginalConversationID?: string }).OriginalConversationID === payout.payoutId,
      );
    expect(status).toHaveLength(1);
    // Asked before the second payment was sent.
    expect(status[0]?.seq).toBeLessThan(b2c[1]?.seq as number);
    await p.receiver.waitFor((d) => d.event === 'payout.completed' && about(payout.payoutId)(d), 20_000);
    await p.payments.drainOutbox();
    expect(payoutEvents(p, payout.payoutId)).toHaveLength(1);
  });

  it('takes a QueueTimeOut as unknown: Transaction Status finds it Completed, and it is paid once', async () => {
    const payout = await originate(p, org, '+254722000090');
    const done = await settled(p, org, payout.payoutId, 'COMPLETED');
    expect(done.mobileMoneyRef).toEqual(expect.any(String));
    expect(done.attempts).toBe(1);
    expect(b2cRequests(p, payout.payoutId)).toHaveLength(1);
    const kinds = await p.db
      .collection('provider_callbacks')
      .find({ transactionId: payout.payoutId })
      .map((c) => c.kind)
      .toArray();
    expect(kinds.sort()).toEqual(['B2C_TIMEOUT', 'STATUS_RESULT']);
    await p.receiver.waitFor((d) => d.event === 'payout.completed' && about(payout.payoutId)(d), 20_000);
  });

  it('changes nothing on a duplicate Result: one payout.completed', async () => {
    const payout = await originate(p, org, '+254722000091');
    await settled(p, org, payout.payoutId, 'COMPLETED');
    const outcomes = await eventually(
      async () => {
        const found = await p.db
          .collection('provider_callbacks')
          .find({ kind: 'B2C_RESULT', transactionId: payout.payoutId })
          .map((c) => c.outcome as string)
          .toArray();
        expect(found).toHaveLength(2);
        return found.sort();
      },
      { message: 'both Results to be recorded' },
    );
    expect(outcomes).toEqual(['COMPLETED', 'DUPLICATE']);
    await p.receiver.waitFor((d) => d.event === 'payout.completed' && about(payout.payoutId)(d), 20_000);
    await p.payments.drainOutbox();
    expect(payoutEvents(p, payout.payoutId)).toHaveLength(1);
  });

  it('sends a throttled B2C (spike arrest) again later with the same id, and never fails the payout for it', async () => {
    const policyId = await policyFor(p, org, '+254722000001');
    p.simulator.failNext(1, { status: 500, errorCode: '500.003.02', errorMessage: 'Spike Arrest Violation' });
    const reply = await p.gateway.ops('POST', '/payouts', { body: origination(org, policyId) });
    expect(reply.status).toBe(201);
    const payoutId = reply.body.data.payoutId as string;
    const done = await settled(p, org, payoutId, 'COMPLETED');
    expect(done.attempts).toBe(1);
    const sent = b2cRequests(p, payoutId);
    expect(
      sent.map((r) => [r.status, (r.body as { OriginatorConversationID: string }).OriginatorConversationID]),
    ).toEqual([
      [500, payoutId],
      [200, payoutId],
    ]);
  });

  it('ignores forged and malformed callbacks (200, recorded, nothing changed)', async () => {
    const forged = await fetch(`${p.payments.callbackUrl}/mpesa/not-the-token/b2c/result`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ Result: { ResultCode: 0 } }),
    });
    expect(forged.status).toBe(200);
    const malformed = await fetch(
      `${p.payments.callbackUrl}/mpesa/${p.config.PAYMENTS_CALLBACK_TOKEN}/b2c/result`,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ nothing: true }),
      },
    );
    expect(malformed.status).toBe(200);
    const outcomes = await p.db
      .collection('provider_callbacks')
      .find({ kind: 'B2C_RESULT', outcome: { $in: ['REJECTED_TOKEN', 'MALFORMED'] } })
      .map((c) => c.outcome as string)
      .toArray();
    expect(outcomes.sort()).toEqual(['MALFORMED', 'REJECTED_TOKEN']);
  });

  it('originates for Tier 2 only: ops origination of a Tier 1 policy is 403 and its queue job fails, paying nothing', async () => {
    const policyId = await policyFor(p, tier1, '+254722000001');
    const body = origination(tier1, policyId);
    const reply = await p.gateway.ops('POST', '/payouts', { body });
    expect(reply.status).toBe(403);
    expect(reply.body.error.code).toBe('TIER_NOT_ENTITLED');
    const job = await originations.add(body, { jobId: `payout-${body.determinationId}` });
    await eventually(async () => expect(await job.getState()).toBe('failed'), {
      timeout: 20_000,
      message: 'the Tier 1 origination job to fail',
    });
    expect(await p.db.collection('payouts').countDocuments({ policyId })).toBe(0);
    const listed = await p.gateway.api('GET', '/payouts', { key: tier1.apiKey });
    expect(listed.status).toBe(200);
    expect(listed.body.data).toEqual([]);
  });

  // Found by the bad-input sweep: the 404 was answered but not in the ops document (the
  // gateway's call() holds every answer to the document).
  it('originates only for a policy of the organization: an unknown one is 404 NOT_FOUND, nothing written', async () => {
    const reply = await p.gateway.ops('POST', '/payouts', { body: origination(tier1, randomUUID()) });
    expect([reply.status, reply.body.error?.code]).toEqual([404, 'NOT_FOUND']);
    expect(await p.db.collection('payouts').countDocuments({ organizationId: tier1.id })).toBe(0);
  });

  it('lists the organization’s payouts newest first, by status, a page at a time', async () => {
    const all = await p.gateway.api('GET', '/payouts?limit=100', { key: org.apiKey });
    expect(all.status).toBe(200);
    const items = all.body.data as (Payout & { createdAt: string })[];
    expect(items.length).toBeGreaterThanOrEqual(5);
    const times = items.map((i) => i.createdAt);
    expect([...times].sort().reverse()).toEqual(times);
    const failed = await p.gateway.api('GET', '/payouts?status=FAILED', { key: org.apiKey });
    expect((failed.body.data as Payout[]).every((i) => i.status === 'FAILED')).toBe(true);
    expect(failed.body.data.length).toBeGreaterThanOrEqual(1);
    const second = await p.gateway.api('GET', '/payouts?limit=1&page=2', { key: org.apiKey });
    expect(second.body.data).toHaveLength(1);
    expect(second.body.data[0].payoutId).toBe(items[1]?.payoutId);
    expect(second.body.pagination).toMatchObject({ page: 2, limit: 1, total: items.length });
    const bad = await p.gateway.api('GET', '/payouts?status=LOST', { key: org.apiKey });
    expect(bad.status).toBe(400);
  });

  it('retries only a FAILED payout (409 otherwise) and only the organization’s own (404)', async () => {
    const payout = await originate(p, org, '+254722000001');
    await settled(p, org, payout.payoutId, 'COMPLETED');
    const conflict = await p.gateway.api('POST', `/payouts/${payout.payoutId}/retry`, { key: org.apiKey });
    expect(conflict.status).toBe(409);
    const stranger = await p.gateway.api('POST', `/payouts/${payout.payoutId}/retry`, { key: tier1.apiKey });
    const unknown = await p.gateway.api('POST', `/payouts/${randomUUID()}/retry`, { key: tier1.apiKey });
    expect([stranger.status, unknown.status]).toEqual([404, 404]);
    expect(stranger.body).toEqual(unknown.body);
    const read = await p.gateway.api('GET', `/payouts/${payout.payoutId}`, { key: tier1.apiKey });
    expect(read.status).toBe(404);
  });
});

describe('payouts whose every attempt fails', () => {
  let p: PaymentsPlatform;
  let org: SellableOrg;

  beforeAll(async () => {
    // The simulator knows another initiator: every B2C answers ResultCode 2001 (retriable).
    p = await startPaymentsPlatform(FAST, { initiatorName: 'someone-else' });
    org = await sellableOrg(p.asPolicyPlatform, {
      capacity: 100_000_000,
      tier: 'DETERMINATION_AND_SETTLEMENT',
    });
    await p.connectWebhook(org.apiKey);
  }, 120_000);

  afterAll(async () => {
    await p?.stop();
  });

  it('fails after PAYOUT_MAX_ATTEMPTS with one payout.failed; the partner’s retry sends it again', async () => {
    const payout = await originate(p, org, '+254722000001');
    const failed = await settled(p, org, payout.payoutId, 'FAILED');
    expect(failed).toMatchObject({ attempts: 3, reason: 'PROVIDER_ERROR' });
    expect(b2cRequests(p, payout.payoutId)).toHaveLength(3);
    await p.receiver.waitFor((d) => d.event === 'payout.failed' && about(payout.payoutId)(d), 20_000);
    await p.payments.drainOutbox();
    expect(payoutEvents(p, payout.payoutId)).toHaveLength(1);

    const retried = await p.gateway.api('POST', `/payouts/${payout.payoutId}/retry`, { key: org.apiKey });
    expect(retried.status).toBe(200);
    expect(retried.body.data).toMatchObject({ status: 'PENDING', reason: null });
    const again = await settled(p, org, payout.payoutId, 'FAILED');
    expect(again.attempts).toBe(6);
    await p.receiver.waitForCount(2, (d) => d.event === 'payout.failed' && about(payout.payoutId)(d), 20_000);
  });
});
