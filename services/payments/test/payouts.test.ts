import { randomUUID } from 'node:crypto';
import { parseExposition, sampleValue } from '@parametric/metrics';
import { eventually } from '@parametric/test-harness';
import type { ReceivedDelivery } from '@parametric/webhook-receiver';
import mongoose from 'mongoose';
import { activateAsPaid, assessment, buyCrop } from '../../determinations/test/support';
import { call, type SignedInOperator, signInOperator } from '../../gateway/test/support';
import { farmerBody, plotBody, type SellableOrg, sellableOrg } from '../../policy/test/support';
import { type PayoutPlatform, startPayoutPlatform } from './support';

// Tier 2 payouts through the whole platform (docs/payments.md, "Payouts"): a real determination
// on a paid policy → `payout-originations` → the payments service reads what it owes from the
// determinations service → M-Pesa B2C (the simulator, over HTTP) → its callbacks → the partner's
// events, reads and the policy read. The state machine's rules are tested on their own in
// test/domain/payouts.test.ts; these prove the wiring.

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
  parts: { part: number; amountKES: string; status: string; mobileMoneyRef: string | null }[];
  attemptHistory: {
    kind: string;
    part: number;
    attempt: number;
    originatorConversationId: string;
    resultCode: string | null;
  }[];
}

let p: PayoutPlatform;
let db: mongoose.Connection;

async function openPlatform(
  overrides: Record<string, string> = {},
  simulator: { initiatorName?: string } = {},
) {
  p = await startPayoutPlatform({ ...FAST, ...overrides }, simulator);
  const { MONGO_URL, MONGO_DB } = p.stack.config;
  db = await mongoose.createConnection(MONGO_URL, { dbName: MONGO_DB }).asPromise();
}

async function closePlatform() {
  await db?.close();
  await p?.stop();
}

/** Farmers by organization and phone: a phone is unique among an organization's farmers. */
const farmers = new Map<string, { farmerId: string; plotId: string }>();

async function farmerWith(org: SellableOrg, phone: string) {
  const known = farmers.get(`${org.id}:${phone}`);
  if (known) return known;
  const farmer = await p.gateway.api('POST', '/farmers', {
    key: org.apiKey,
    body: farmerBody({ phoneNumber: phone }),
  });
  if (farmer.status !== 201) throw new Error(`farmer: ${JSON.stringify(farmer.body)}`);
  const farmerId = farmer.body.data.id as string;
  await p.gateway.ops('POST', `/farmers/${farmerId}/kyc`, { body: { status: 'APPROVED' } });
  const plot = await p.gateway.api('POST', '/plots', { key: org.apiKey, body: plotBody(farmerId) });
  const made = { farmerId, plotId: plot.body.data.id as string };
  farmers.set(`${org.id}:${phone}`, made);
  return made;
}

/** A paid (ACTIVE) Tier 2 crop policy of the organization, for its farmer with this phone (the phone decides the B2C outcome). */
async function paidPolicyFor(org: SellableOrg, phone: string, sumInsured = 50_000): Promise<string> {
  const policyId = await buyCrop(p, { ...org, ...(await farmerWith(org, phone)) }, sumInsured);
  await activateAsPaid(p, org, policyId);
  return policyId;
}

/** A triggered determination of `bp` on the policy; its id. */
async function determine(policyId: string, bp: number): Promise<string> {
  const reply = await p.gateway.ops('POST', '/determinations', {
    body: assessment({ policyId }, { damagePercentBp: bp }),
  });
  if (reply.status !== 201) throw new Error(`determination: ${JSON.stringify(reply.body)}`);
  return reply.body.data.determination.determinationId as string;
}

/** The payout its payout-originations job made for the determination. */
const payoutOf = (determinationId: string) =>
  eventually(
    async () => {
      const doc = await db.collection('payouts').findOne({ determinationId });
      expect(doc).not.toBeNull();
      return String(doc?._id);
    },
    { timeout: 20_000, message: `the payout of determination ${determinationId}` },
  );

const readPayout = async (org: SellableOrg, id: string) =>
  (await p.gateway.api('GET', `/payouts/${id}`, { key: org.apiKey })).body.data as Payout;

const settled = (org: SellableOrg, id: string, status: 'COMPLETED' | 'FAILED') =>
  eventually(
    async () => {
      const read = await readPayout(org, id);
      expect(read.status).toBe(status);
      return read;
    },
    { timeout: 20_000, message: `payout ${id} to be ${status}` },
  );

const about = (payoutId: string) => (d: ReceivedDelivery) =>
  d.verified && (d.body as { data: { payoutId?: string } }).data?.payoutId === payoutId;

const payoutEvents = (payoutId: string) =>
  p.receiver.verified().filter((d) => d.event?.startsWith('payout.') && about(payoutId)(d));

const b2cRequests = (payoutId: string) =>
  p.stack.simulator
    .requests()
    .filter(
      (r) =>
        r.path === B2C_PATH &&
        String((r.body as { OriginatorConversationID?: string }).OriginatorConversationID).startsWith(
          payoutId,
        ),
    );

async function payoutCounts() {
  const samples = parseExposition(await (await fetch(`${p.stack.payments.url}/metrics`)).text());
  const count = (state: string) => sampleValue(samples, 'payouts_total', { state });
  return {
    originated: count('originated'),
    succeeded: count('succeeded'),
    failed: count('failed'),
    retrying: count('retrying'),
  };
}

describe('payouts (Tier 2, M-Pesa B2C)', () => {
  let org: SellableOrg;
  let tier1: SellableOrg;

  beforeAll(async () => {
    await openPlatform();
    org = await sellableOrg(p.asPolicyPlatform, {
      capacity: 1_000_000_000,
      tier: 'DETERMINATION_AND_SETTLEMENT',
    });
    tier1 = await sellableOrg(p.asPolicyPlatform, { capacity: 100_000_000, tier: 'DETERMINATION' });
    await p.connectWebhook(org.apiKey);
  }, 120_000);

  afterAll(closePlatform);

  it('pays a sandbox organization’s test determination to a simulator test number, completed exactly once', async () => {
    const registered = await p.gateway.register({ environment: 'sandbox' });
    const tier = await p.gateway.ops('POST', `/organizations/${registered.id}/service-tier`, {
      body: { serviceTier: 'DETERMINATION_AND_SETTLEMENT' },
    });
    expect(tier.status).toBe(200);
    const sandbox = { id: registered.id, apiKey: registered.apiKey } as SellableOrg;
    // The simulator POSTs this number's B2C Result twice.
    const policyId = await paidPolicyFor(sandbox, '+254722000091', 20_000);
    const issued = await p.gateway.api('POST', '/sandbox/determinations', {
      key: sandbox.apiKey,
      body: { policyId, triggered: true, damagePercentBp: 2_500 },
    });
    expect(issued.status).toBe(201);
    const payoutId = await payoutOf(issued.body.data.determinationId);
    const done = await settled(sandbox, payoutId, 'COMPLETED');
    expect(done).toMatchObject({ amountKES: '5000.00', mobileMoneyRef: expect.any(String) });
    expect(b2cRequests(payoutId)).toHaveLength(1);
    expect(await db.collection('payouts').findOne({ _id: payoutId as never })).toMatchObject({
      environment: 'sandbox',
      phone: '+254722000091',
    });
    // The duplicate Result changed nothing: still one completion.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect((await readPayout(sandbox, payoutId)).status).toBe('COMPLETED');
  });

  it('refuses a sandbox organization’s payout to a farmer whose number is not a test number: nothing written, nothing sent', async () => {
    const registered = await p.gateway.register({ environment: 'sandbox' });
    await p.gateway.ops('POST', `/organizations/${registered.id}/service-tier`, {
      body: { serviceTier: 'DETERMINATION_AND_SETTLEMENT' },
    });
    const sandbox = { id: registered.id, apiKey: registered.apiKey } as SellableOrg;
    const policyId = await paidPolicyFor(sandbox, '+254712345678', 20_000);
    const issued = await p.gateway.api('POST', '/sandbox/determinations', {
      key: sandbox.apiKey,
      body: { policyId, triggered: true, damagePercentBp: 2_500 },
    });
    const determinationId = issued.body.data.determinationId as string;
    const asked = await p.gateway.ops('POST', '/payouts', { body: { determinationId } });
    expect([asked.status, asked.body.error?.details]).toEqual([
      400,
      [{ field: 'phoneNumber', message: expect.stringContaining('+254722000091') }],
    ]);
    expect(await db.collection('payouts').countDocuments({ determinationId })).toBe(0);
  });

  it('pays what a determination owes, rounded up to whole shillings: COMPLETED, one payout.completed, every attempt shown', async () => {
    // 12,345.67 KES × 33.33% = 4,114.81 KES owed (truncated to the cent): 4,115 paid.
    const policyId = await paidPolicyFor(org, '+254722000001', 12_345.67);
    const determinationId = await determine(policyId, 3_333);
    const payoutId = await payoutOf(determinationId);
    const done = await settled(org, payoutId, 'COMPLETED');
    expect(done).toMatchObject({
      amountKES: '4115.00',
      owedKES: '4114.81',
      amountUSDC: expect.stringMatching(/^\d+\.\d{6}$/),
      mobileMoneyRef: expect.any(String),
      reason: null,
      attempts: 1,
      parts: [{ part: 1, amountKES: '4115.00', status: 'COMPLETED', mobileMoneyRef: done.mobileMoneyRef }],
    });
    expect(done.attemptHistory.map((a) => [a.kind, a.part, a.attempt, a.originatorConversationId])).toEqual([
      ['B2C_REQUEST', 1, 1, payoutId],
      ['B2C_RESPONSE', 1, 1, payoutId],
      ['B2C_RESULT', 1, 1, payoutId],
    ]);
    expect(b2cRequests(payoutId).map((r) => (r.body as { Amount: number }).Amount)).toEqual([4115]);
    const quote = await p.gateway.api('GET', `/payments/quotes/${done.quoteId}`, { key: org.apiKey });
    expect(quote.body.data.convertedAmount).toBe(done.amountUSDC);
    const delivery = await p.receiver.waitFor(
      (d) => d.event === 'payout.completed' && about(payoutId)(d),
      20_000,
    );
    expect((delivery.body as { data: unknown }).data).toEqual({
      payoutId,
      policyId,
      amountUSDC: done.amountUSDC,
      amountKES: '4115.00',
      mobileMoneyRef: done.mobileMoneyRef,
    });
    // The policy read shows it (policy-summaries, newest revision).
    await eventually(
      async () => {
        const policy = (await p.gateway.api('GET', `/policies/${policyId}`, { key: org.apiKey })).body.data;
        expect(policy.payouts).toEqual([
          expect.objectContaining({ payoutId, determinationId, status: 'COMPLETED', amount: '4115.00' }),
        ]);
      },
      { timeout: 20_000, message: 'the policy read to show the payout' },
    );
    // Ops asking again for the same determination make no second payout.
    const again = await p.gateway.ops('POST', '/payouts', { body: { determinationId } });
    expect([again.status, again.body.data.payoutId]).toEqual([200, payoutId]);
    expect(await db.collection('payouts').countDocuments({ determinationId })).toBe(1);
  });

  it('pays a policy’s cover once: a second 100% determination owes nothing and pays nothing', async () => {
    const policyId = await paidPolicyFor(org, '+254722000001', 20_000);
    const first = await determine(policyId, 10_000);
    const second = await determine(policyId, 10_000);
    const payoutId = await payoutOf(first);
    const done = await settled(org, payoutId, 'COMPLETED');
    expect([done.amountKES, done.owedKES]).toEqual(['20000.00', '20000.00']);
    const ops = await p.gateway.ops('POST', '/payouts', { body: { determinationId: second } });
    expect([ops.status, ops.body.error?.code]).toEqual([400, 'INVALID_INPUT']);
    expect(await db.collection('payouts').countDocuments({ policyId })).toBe(1);
  });

  it('fails less than M-Pesa’s minimum at once: FAILED BELOW_PROVIDER_MINIMUM, one payout.failed, nothing sent', async () => {
    // 1,000 KES × 0.05% = 0.50 KES owed.
    const policyId = await paidPolicyFor(org, '+254722000001', 1_000);
    const payoutId = await payoutOf(await determine(policyId, 5));
    const failed = await settled(org, payoutId, 'FAILED');
    expect(failed).toMatchObject({
      reason: 'BELOW_PROVIDER_MINIMUM',
      owedKES: '0.50',
      amountKES: '1.00',
      parts: [],
      attempts: 0,
    });
    const delivery = await p.receiver.waitFor(
      (d) => d.event === 'payout.failed' && about(payoutId)(d),
      20_000,
    );
    expect((delivery.body as { data: { reason: string } }).data.reason).toBe('BELOW_PROVIDER_MINIMUM');
    expect(b2cRequests(payoutId)).toHaveLength(0);
    const retry = await p.gateway.api('POST', `/payouts/${payoutId}/retry`, { key: org.apiKey });
    expect(retry.status).toBe(409);
  });

  it('pays more than M-Pesa’s maximum in parts, each once; one payout.completed names every receipt', async () => {
    const policyId = await paidPolicyFor(org, '+254722000001', 600_000);
    const payoutId = await payoutOf(await determine(policyId, 10_000));
    const done = await settled(org, payoutId, 'COMPLETED');
    expect(done.parts.map((part) => [part.part, part.amountKES, part.status])).toEqual([
      [1, '200000.00', 'COMPLETED'],
      [2, '200000.00', 'COMPLETED'],
      [3, '200000.00', 'COMPLETED'],
    ]);
    const sent = b2cRequests(payoutId).map(
      (r) => r.body as { OriginatorConversationID: string; Amount: number },
    );
    expect(sent.map((b) => b.Amount)).toEqual([200_000, 200_000, 200_000]);
    expect(new Set(sent.map((b) => b.OriginatorConversationID)).size).toBe(3);
    const receipts = done.parts.map((part) => part.mobileMoneyRef);
    expect(done.mobileMoneyRef).toBe(receipts.join(','));
    const delivery = await p.receiver.waitFor(
      (d) => d.event === 'payout.completed' && about(payoutId)(d),
      20_000,
    );
    expect((delivery.body as { data: { amountKES: string; mobileMoneyRef: string } }).data).toMatchObject({
      amountKES: '600000.00',
      mobileMoneyRef: receipts.join(','),
    });
    await p.stack.payments.drainOutbox();
    expect(payoutEvents(payoutId)).toHaveLength(1);
  });

  it('fails a 2040 (unregistered recipient) at once, with one payout.failed', async () => {
    const before = await payoutCounts();
    const payoutId = await payoutOf(await determine(await paidPolicyFor(org, '+254722000021'), 2_500));
    const failed = await settled(org, payoutId, 'FAILED');
    expect(failed).toMatchObject({ reason: 'RECIPIENT_NOT_REGISTERED', attempts: 1, mobileMoneyRef: null });
    await p.receiver.waitFor((d) => d.event === 'payout.failed' && about(payoutId)(d), 20_000);
    expect(await payoutCounts()).toEqual({
      ...before,
      originated: before.originated + 1,
      failed: before.failed + 1,
    });
    expect(b2cRequests(payoutId)).toHaveLength(1);
  });

  it('retries a retriable ResultCode with a new OriginatorConversationID, after Transaction Status says the first did not pay', async () => {
    const before = await payoutCounts();
    const payoutId = await payoutOf(await determine(await paidPolicyFor(org, '+254722000011'), 2_500));
    const done = await settled(org, payoutId, 'COMPLETED');
    expect(done.attempts).toBe(2);
    expect(await payoutCounts()).toEqual({
      ...before,
      originated: before.originated + 1,
      retrying: before.retrying + 1,
      succeeded: before.succeeded + 1,
    });
    const b2c = b2cRequests(payoutId);
    expect(b2c.map((r) => (r.body as { OriginatorConversationID: string }).OriginatorConversationID)).toEqual(
      [payoutId, `${payoutId}-2`],
    );
    const status = p.stack.simulator
      .requests()
      .filter(
        (r) =>
          r.path === STATUS_PATH &&
          (r.body as { OriginalConversationID?: string }).OriginalConversationID === payoutId,
      );
    expect(status).toHaveLength(1);
    expect(status[0]?.seq).toBeLessThan(b2c[1]?.seq as number);
    // The ledger shows why it took two tries.
    expect(done.attemptHistory.map((a) => [a.kind, a.attempt, a.resultCode])).toEqual([
      ['B2C_REQUEST', 1, null],
      ['B2C_RESPONSE', 1, '0'],
      ['B2C_RESULT', 1, '1'],
      ['STATUS_QUERY', 1, '0'],
      ['STATUS_RESULT', 1, '0'],
      ['B2C_REQUEST', 2, null],
      ['B2C_RESPONSE', 2, '0'],
      ['B2C_RESULT', 2, '0'],
    ]);
  });

  it('takes a QueueTimeOut as unknown: Transaction Status finds it Completed, and it is paid once', async () => {
    const payoutId = await payoutOf(await determine(await paidPolicyFor(org, '+254722000090'), 2_500));
    const done = await settled(org, payoutId, 'COMPLETED');
    expect([done.attempts, b2cRequests(payoutId).length]).toEqual([1, 1]);
    expect(done.attemptHistory.map((a) => a.kind)).toEqual(
      expect.arrayContaining(['B2C_QUEUE_TIMEOUT', 'STATUS_QUERY', 'STATUS_RESULT']),
    );
  });

  it('changes nothing on a duplicate Result: one payout.completed, one ledger row', async () => {
    const payoutId = await payoutOf(await determine(await paidPolicyFor(org, '+254722000091'), 2_500));
    await settled(org, payoutId, 'COMPLETED');
    await eventually(
      async () => {
        const outcomes = await db
          .collection('provider_callbacks')
          .find({ kind: 'B2C_RESULT', transactionId: payoutId })
          .map((c) => c.outcome as string)
          .toArray();
        expect(outcomes.sort()).toEqual(['COMPLETED', 'DUPLICATE']);
      },
      { message: 'both Results to be recorded' },
    );
    await p.receiver.waitFor((d) => d.event === 'payout.completed' && about(payoutId)(d), 20_000);
    await p.stack.payments.drainOutbox();
    expect(payoutEvents(payoutId)).toHaveLength(1);
    expect(
      (await readPayout(org, payoutId)).attemptHistory.filter((a) => a.kind === 'B2C_RESULT'),
    ).toHaveLength(1);
  });

  it('sends a throttled B2C (spike arrest) again later with the same id, and never fails the payout for it', async () => {
    const policyId = await paidPolicyFor(org, '+254722000001');
    p.stack.simulator.failNext(1, {
      status: 500,
      errorCode: '500.003.02',
      errorMessage: 'Spike Arrest Violation',
    });
    const payoutId = await payoutOf(await determine(policyId, 2_500));
    const done = await settled(org, payoutId, 'COMPLETED');
    expect(done.attempts).toBe(1);
    expect(
      b2cRequests(payoutId).map((r) => [
        r.status,
        (r.body as { OriginatorConversationID: string }).OriginatorConversationID,
      ]),
    ).toEqual([
      [500, payoutId],
      [200, payoutId],
    ]);
  });

  it('ignores forged and malformed callbacks (200, recorded, nothing changed)', async () => {
    const forged = await fetch(`${p.stack.payments.callbackUrl}/mpesa/not-the-token/b2c/result`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ Result: { ResultCode: 0 } }),
    });
    const malformed = await fetch(
      `${p.stack.payments.callbackUrl}/mpesa/${p.stack.config.PAYMENTS_CALLBACK_TOKEN}/b2c/result`,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ nothing: true }),
      },
    );
    expect([forged.status, malformed.status]).toEqual([200, 200]);
    const outcomes = await db
      .collection('provider_callbacks')
      .find({ kind: 'B2C_RESULT', outcome: { $in: ['REJECTED_TOKEN', 'MALFORMED'] } })
      .map((c) => c.outcome as string)
      .toArray();
    expect(outcomes.sort()).toEqual(['MALFORMED', 'REJECTED_TOKEN']);
  });

  it('originates by hand from a determination only: the amount is never taken from the request', async () => {
    const policyId = await paidPolicyFor(org, '+254722000001', 12_345.67);
    const determinationId = await determine(policyId, 10_000);
    const told = await p.gateway.ops('POST', '/payouts', {
      body: {
        determinationId,
        policyId,
        organizationId: org.id,
        amountMinor: '20000000',
        currency: 'KES',
        exponent: 2,
      },
    });
    expect([told.status, told.body.error?.code]).toEqual([400, 'INVALID_INPUT']);
    const unknown = await p.gateway.ops('POST', '/payouts', { body: { determinationId: randomUUID() } });
    expect([unknown.status, unknown.body.error?.code]).toEqual([404, 'NOT_FOUND']);
    const payoutId = await payoutOf(determinationId);
    const done = await settled(org, payoutId, 'COMPLETED');
    expect([done.amountKES, done.owedKES]).toEqual(['12346.00', '12345.67']);
  });

  it('four eyes: an operator’s origination waits for a second FINANCE operator, who originates it once; a refused one is FAILED', async () => {
    const [asker, approver] = await Promise.all([
      signInOperator(p.gateway, 'FINANCE'),
      signInOperator(p.gateway, 'FINANCE'),
    ]);
    const as = (who: SignedInOperator) => (path: string, body?: unknown) =>
      call('POST', `${p.gateway.gateway.opsUrl}${path}`, {
        headers: { authorization: `Bearer ${who.accessToken}` },
        ...(body === undefined ? {} : { body }),
      });
    const determinationId = await determine(await paidPolicyFor(org, '+254722000001', 10_000), 10_000);
    const asked = await as(asker)('/payouts', { determinationId });
    expect(asked.status).toBe(202);
    expect(asked.body.data.approval).toMatchObject({
      action: 'opsOriginatePayout',
      request: { determinationId },
    });
    const approved = await as(approver)(`/approvals/${asked.body.data.approval.id}/approve`);
    expect(approved.status).toBe(200);
    expect(approved.body.data.approval).toMatchObject({
      status: 'EXECUTED',
      requestedBy: { id: asker.id },
      decidedBy: { id: approver.id, role: 'FINANCE' },
    });
    // The determination's one payout, whether the approval or the origination job made it first.
    expect(approved.body.data.result.payoutId).toBe(await payoutOf(determinationId));
    expect(await db.collection('payouts').countDocuments({ determinationId })).toBe(1);

    const policyId = await buyCrop(p, tier1, 50_000);
    await p.gateway.api('PUT', `/policies/${policyId}/activate`, { key: tier1.apiKey });
    const tier1Determination = await determine(policyId, 2_500);
    const refusedAsk = await as(asker)('/payouts', { determinationId: tier1Determination });
    const refused = await as(approver)(`/approvals/${refusedAsk.body.data.approval.id}/approve`);
    expect([refused.status, refused.body.error.code]).toEqual([403, 'TIER_NOT_ENTITLED']);
    const read = await p.gateway.ops('GET', `/approvals/${refusedAsk.body.data.approval.id}`);
    expect(read.body.data).toMatchObject({
      status: 'FAILED',
      error: { status: 403, code: 'TIER_NOT_ENTITLED' },
    });
    expect(await db.collection('payouts').countDocuments({ determinationId: tier1Determination })).toBe(0);
  });

  it('originates for Tier 2 only: a Tier 1 determination is 403 and nothing is paid; an untriggered one is 400', async () => {
    const policyId = await buyCrop(p, tier1, 50_000);
    await p.gateway.api('PUT', `/policies/${policyId}/activate`, { key: tier1.apiKey });
    const determinationId = await determine(policyId, 2_500);
    const reply = await p.gateway.ops('POST', '/payouts', { body: { determinationId } });
    expect([reply.status, reply.body.error?.code]).toEqual([403, 'TIER_NOT_ENTITLED']);
    const untriggered = await p.gateway.ops('POST', '/determinations', {
      body: assessment(
        { policyId: await paidPolicyFor(org, '+254722000001') },
        { triggered: false, damagePercentBp: 0 },
      ),
    });
    const refused = await p.gateway.ops('POST', '/payouts', {
      body: { determinationId: untriggered.body.data.determination.determinationId },
    });
    expect([refused.status, refused.body.error?.code]).toEqual([400, 'INVALID_INPUT']);
    expect(await db.collection('payouts').countDocuments({ organizationId: tier1.id })).toBe(0);
    const listed = await p.gateway.api('GET', '/payouts', { key: tier1.apiKey });
    expect([listed.status, listed.body.data]).toEqual([200, []]);
  });

  it('lists the organization’s payouts newest first, by status, a page at a time', async () => {
    const all = await p.gateway.api('GET', '/payouts?limit=100', { key: org.apiKey });
    expect(all.status).toBe(200);
    const items = all.body.data as (Payout & { createdAt: string })[];
    expect(items.length).toBeGreaterThanOrEqual(5);
    expect(items.every((i) => !('attemptHistory' in i))).toBe(true);
    const times = items.map((i) => i.createdAt);
    expect([...times].sort().reverse()).toEqual(times);
    const failed = await p.gateway.api('GET', '/payouts?status=FAILED', { key: org.apiKey });
    expect((failed.body.data as Payout[]).every((i) => i.status === 'FAILED')).toBe(true);
    expect(failed.body.data.length).toBeGreaterThanOrEqual(1);
    const second = await p.gateway.api('GET', '/payouts?limit=1&page=2', { key: org.apiKey });
    expect(second.body.data[0].payoutId).toBe(items[1]?.payoutId);
    expect(second.body.pagination).toMatchObject({ page: 2, limit: 1, total: items.length });
    expect((await p.gateway.api('GET', '/payouts?status=LOST', { key: org.apiKey })).status).toBe(400);
  });

  it('retries only a FAILED payout (409 otherwise) and only the organization’s own (404)', async () => {
    const payoutId = await payoutOf(await determine(await paidPolicyFor(org, '+254722000001'), 2_500));
    await settled(org, payoutId, 'COMPLETED');
    const conflict = await p.gateway.api('POST', `/payouts/${payoutId}/retry`, { key: org.apiKey });
    expect(conflict.status).toBe(409);
    const stranger = await p.gateway.api('POST', `/payouts/${payoutId}/retry`, { key: tier1.apiKey });
    const unknown = await p.gateway.api('POST', `/payouts/${randomUUID()}/retry`, { key: tier1.apiKey });
    expect([stranger.status, unknown.status]).toEqual([404, 404]);
    expect(stranger.body).toEqual(unknown.body);
    expect((await p.gateway.api('GET', `/payouts/${payoutId}`, { key: tier1.apiKey })).status).toBe(404);
  });
});

describe('payouts whose every attempt fails', () => {
  let org: SellableOrg;

  beforeAll(async () => {
    // The simulator knows another initiator: every B2C answers ResultCode 2001 (retriable).
    await openPlatform({}, { initiatorName: 'someone-else' });
    org = await sellableOrg(p.asPolicyPlatform, {
      capacity: 100_000_000,
      tier: 'DETERMINATION_AND_SETTLEMENT',
    });
    await p.connectWebhook(org.apiKey);
  }, 120_000);

  afterAll(closePlatform);

  it('fails after PAYOUT_MAX_ATTEMPTS with one payout.failed; the retry sends it again, the earlier attempts still shown', async () => {
    const payoutId = await payoutOf(await determine(await paidPolicyFor(org, '+254722000001'), 2_500));
    const failed = await settled(org, payoutId, 'FAILED');
    expect(failed).toMatchObject({ attempts: 3, reason: 'PROVIDER_ERROR' });
    expect(b2cRequests(payoutId)).toHaveLength(3);
    await p.receiver.waitFor((d) => d.event === 'payout.failed' && about(payoutId)(d), 20_000);

    const retried = await p.gateway.api('POST', `/payouts/${payoutId}/retry`, { key: org.apiKey });
    expect(retried.status).toBe(200);
    expect(retried.body.data).toMatchObject({ status: 'PENDING', reason: null });
    const again = await settled(org, payoutId, 'FAILED');
    expect(again.attempts).toBe(6);
    await p.receiver.waitForCount(2, (d) => d.event === 'payout.failed' && about(payoutId)(d), 20_000);
    const requests = again.attemptHistory.filter((a) => a.kind === 'B2C_REQUEST').map((a) => a.attempt);
    expect(requests).toEqual([1, 2, 3, 4, 5, 6]);
  });
});
