import { verifyDetermination } from '@parametric/determination-verify';
import { EVENT_CATALOG } from '@parametric/events';
import { createProducer, determinationIngestJobId } from '@parametric/queue';
import { eventually } from '@parametric/test-harness';
import {
  type ActivePolicy,
  activeCropPolicy,
  assessment,
  type DeterminationsPlatform,
  startDeterminationsPlatform,
} from './support';

let p: DeterminationsPlatform;
let policy: ActivePolicy;

beforeAll(async () => {
  p = await startDeterminationsPlatform();
  policy = await activeCropPolicy(p, { sumInsured: 50_000 });
  await p.connectWebhook(policy.org.apiKey);
}, 120_000);

afterAll(async () => {
  await p?.stop();
});

const ingest = (body: unknown) => p.gateway.ops('POST', '/determinations', { body });
const determinationsOf = (filter: Record<string, unknown>) =>
  p.db.collection('determinations').countDocuments(filter);
const deliveredFor = (id: string) =>
  p.receiver.received.filter(
    (d) =>
      d.verified &&
      d.event === 'determination.delivered' &&
      (d.body as { data: { determinationId: string } }).data.determinationId === id,
  );

describe('POST /ops/determinations', () => {
  it('issues a signed determination with the exact amount owed, delivers it, and the partner verifies it from the JWKS', async () => {
    const body = assessment({ policyId: policy.policyId });
    const reply = await ingest(body);
    expect(reply.status).toBe(201);
    const d = reply.body.data.determination;
    expect(reply.body.data.replayed).toBe(false);
    expect(d).toMatchObject({
      status: 'ISSUED',
      organizationId: policy.org.id,
      policyId: policy.policyId,
      policyNumber: policy.policyNumber,
      kind: 'CROP_DAMAGE',
      methodologyVersion: 'drought-index-v2.1',
      triggered: true,
      damagePercentBp: 2_500,
      settlementMode: 'DETERMINATION',
      settledByMicrocrop: false,
      amountOwed: {
        amountMinor: '1250000',
        amount: '12500.00',
        currency: 'KES',
        exponent: 2,
        damagePercentBp: 2_500,
      },
      partnerSettlementStatus: 'PENDING',
      verifiedByMicrocrop: false,
      verificationStatus: 'UNVERIFIED',
    });
    expect(d.amountOwedUnavailableReason).toBeUndefined();

    // The partner reads it through the gateway and verifies it with nothing but the public keys.
    const read = await p.gateway.api('GET', `/determinations/${d.determinationId}`, {
      key: policy.org.apiKey,
    });
    expect(read.status).toBe(200);
    const jwks = await p.gateway.api('GET', '/.well-known/jwks.json');
    expect(jwks.status).toBe(200);
    expect(verifyDetermination(read.body.data, jwks.body)).toEqual({
      valid: true,
      kid: read.body.data.kid,
      sandbox: false,
    });
    expect(Date.parse(read.body.data.dueAt) - Date.parse(read.body.data.issuedAt)).toBe(30 * 86_400_000);

    // determination.delivered: the determination's fields, signed by the partner's webhook secret.
    const [delivery] = await p.receiver.waitForCount(1, (x) => deliveredFor(d.determinationId).includes(x));
    const event = delivery?.body as { event: string; data: Record<string, unknown> };
    expect(EVENT_CATALOG['determination.delivered'].safeParse(event.data).success).toBe(true);
    expect(event.data).toEqual({
      determinationId: d.determinationId,
      policyId: policy.policyId,
      policyNumber: policy.policyNumber,
      kind: 'CROP_DAMAGE',
      methodologyVersion: 'drought-index-v2.1',
      triggered: true,
      damagePercentBp: 2_500,
      assessedAt: new Date(body.assessedAt).toISOString(),
      canonicalHash: read.body.data.canonicalHash,
      settlementMode: 'DETERMINATION',
      settledByMicrocrop: false,
      amountOwed: read.body.data.amountOwed,
      links: {
        self: `/determinations/${d.determinationId}`,
        evidence: `/determinations/${d.determinationId}/evidence`,
      },
    });
  });

  it('answers a replay of the same key and content with the same determination, emitting nothing', async () => {
    const body = assessment({ policyId: policy.policyId });
    const first = await ingest(body);
    const again = await ingest(body);
    expect(first.status).toBe(201);
    expect(again.status).toBe(200);
    expect(again.body.data.replayed).toBe(true);
    expect(again.body.data.determination).toEqual(first.body.data.determination);
    const id = first.body.data.determination.determinationId;
    await eventually(() => expect(deliveredFor(id)).toHaveLength(1), { message: 'the first delivery' });
    await p.determinations.drainOutbox();
    expect(await determinationsOf({ idempotencyKey: body.idempotencyKey })).toBe(1);
    const rows = await p.gateway.api('GET', '/organizations/me/webhook/deliveries?limit=100', {
      key: policy.org.apiKey,
    });
    const forId = rows.body.data.deliveries.filter(
      (r: { event: string; id: string }) =>
        r.event === 'determination.delivered' && deliveredFor(id)[0]?.deliveryId === r.id,
    );
    expect(forId).toHaveLength(1);
  });

  it('refuses the same key with different content with 409 naming the key, and changes nothing', async () => {
    const body = assessment({ policyId: policy.policyId });
    const first = await ingest(body);
    const other = await ingest({ ...body, damagePercentBp: 3_000 });
    expect(other.status).toBe(409);
    expect(other.body.error.code).toBe('CONFLICT');
    expect(other.body.error.message).toContain(body.idempotencyKey);
    const stored = await p.db.collection('determinations').findOne({ idempotencyKey: body.idempotencyKey });
    expect(stored?._id).toBe(first.body.data.determination.determinationId);
    expect(stored?.damagePercentBp).toBe(2_500);
  });

  it('makes one determination and one event of 10 parallel identical ingestions', async () => {
    const body = assessment({ policyId: policy.policyId });
    const replies = await Promise.all(Array.from({ length: 10 }, () => ingest(body)));
    expect(replies.map((r) => r.status).sort()).toEqual([200, 200, 200, 200, 200, 200, 200, 200, 200, 201]);
    const ids = new Set(replies.map((r) => r.body.data.determination.determinationId));
    expect(ids.size).toBe(1);
    const [id] = [...ids];
    expect(await determinationsOf({ idempotencyKey: body.idempotencyKey })).toBe(1);
    await p.determinations.drainOutbox();
    await eventually(() => expect(deliveredFor(id)).toHaveLength(1), { message: 'one delivery' });
    const stored = await p.db.collection('determinations').findOne({ _id: id as never });
    expect(stored?.outbox).toEqual([]);
  });

  it('finds the policy by policyNumber', async () => {
    const reply = await ingest(assessment({ policyNumber: policy.policyNumber }));
    expect(reply.status).toBe(201);
    expect(reply.body.data.determination).toMatchObject({ status: 'ISSUED', policyId: policy.policyId });
  });

  it('issues an untriggered determination with nothing owed and no report due', async () => {
    const reply = await ingest(
      assessment({ policyId: policy.policyId }, { triggered: false, damagePercentBp: 0 }),
    );
    expect(reply.status).toBe(201);
    expect(reply.body.data.determination).toMatchObject({
      triggered: false,
      amountOwed: { amountMinor: '0', amount: '0.00' },
      partnerSettlementStatus: 'NOT_REQUIRED',
      dueAt: null,
    });
  });
});

describe('unattributed assessments', () => {
  it('keeps one for ops, shows partners nothing and emits nothing', async () => {
    const pendingOrg = policy.org;
    const pending = await p.gateway.api('POST', '/policies/purchase', {
      key: pendingOrg.apiKey,
      body: {
        farmerId: pendingOrg.farmerId,
        productType: 'CROP',
        plotId: pendingOrg.plotId,
        sumInsured: 10_000,
        coverageType: 'DROUGHT',
        durationDays: 90,
      },
    });
    const cases = [
      [assessment({ policyId: '00000000-0000-4000-8000-000000000000' }), 'POLICY_NOT_FOUND'],
      [assessment({ policyId: pending.body.data.policy.id }), 'POLICY_NOT_IN_FORCE'],
      [assessment({ policyId: policy.policyId }, { kind: 'LIVESTOCK_MORTALITY_INDEX' }), 'KIND_MISMATCH'],
      [
        (() => {
          const b = assessment({ policyId: policy.policyId });
          return {
            ...b,
            evidence: {
              ...b.evidence,
              periodStart: '2020-01-01T00:00:00Z',
              periodEnd: '2020-02-01T00:00:00Z',
            },
          };
        })(),
        'OUTSIDE_COVER',
      ],
    ] as const;
    for (const [body, reason] of cases) {
      const reply = await ingest(body);
      expect(reply.status).toBe(201);
      const d = reply.body.data.determination;
      expect(d).toMatchObject({ status: 'UNATTRIBUTED', unattributedReason: reason, organizationId: null });
      expect(d.signature).toBeUndefined();
      expect(d.amountOwed).toBeUndefined();
      const partner = await p.gateway.api('GET', `/determinations/${d.determinationId}`, {
        key: policy.org.apiKey,
      });
      expect(partner.status).toBe(404);
      // A replay of an unattributed one is still the same record.
      const again = await ingest(body);
      expect(again.status).toBe(200);
      expect(again.body.data.determination.determinationId).toBe(d.determinationId);
    }
    const queue = await p.gateway.ops('GET', '/determinations?status=UNATTRIBUTED&limit=100');
    expect(queue.status).toBe(200);
    const reasons = queue.body.data.map((d: { unattributedReason: string }) => d.unattributedReason);
    expect(reasons).toEqual(
      expect.arrayContaining(['POLICY_NOT_FOUND', 'POLICY_NOT_IN_FORCE', 'KIND_MISMATCH', 'OUTSIDE_COVER']),
    );
    expect(queue.body.data.every((d: { status: string }) => d.status === 'UNATTRIBUTED')).toBe(true);
    await p.determinations.drainOutbox();
    const withEvents = await p.db.collection('determinations').countDocuments({
      status: 'UNATTRIBUTED',
      $or: [{ 'outbox.0': { $exists: true } }, { 'jobOutbox.0': { $exists: true } }],
    });
    expect(withEvents).toBe(0);
    const partnerList = await p.gateway.api('GET', '/determinations?limit=100', { key: policy.org.apiKey });
    expect(partnerList.body.data.every((d: { policyId: string }) => d.policyId === policy.policyId)).toBe(
      true,
    );
  });
});

describe('bad input', () => {
  const valid = () => assessment({ policyId: policy.policyId });
  const cases: [string, (b: ReturnType<typeof valid>) => unknown, string][] = [
    ['a missing idempotency key', ({ idempotencyKey: _, ...b }) => b, 'idempotencyKey'],
    [
      'an idempotency key over 200 characters',
      (b) => ({ ...b, idempotencyKey: 'k'.repeat(201) }),
      'idempotencyKey',
    ],
    ['neither policyId nor policyNumber', ({ policyId: _, ...b }) => b, 'policyId'],
    ['a policyId that is not a uuid', (b) => ({ ...b, policyId: 'POL-1' }), 'policyId'],
    ['an unknown kind', (b) => ({ ...b, kind: 'FLOOD' }), 'kind'],
    ['damage above 10000 bp', (b) => ({ ...b, damagePercentBp: 10_001 }), 'damagePercentBp'],
    ['fractional basis points', (b) => ({ ...b, damagePercentBp: 12.5 }), 'damagePercentBp'],
    ['damage on an untriggered assessment', (b) => ({ ...b, triggered: false }), 'damagePercentBp'],
    ['triggered as a string', (b) => ({ ...b, triggered: 'true' }), 'triggered'],
    ['a date without a time zone', (b) => ({ ...b, assessedAt: '2026-11-20T10:00:00' }), 'assessedAt'],
    ['an assessment in the future', (b) => ({ ...b, assessedAt: '2099-01-01T00:00:00Z' }), 'assessedAt'],
    ['an unknown field', (b) => ({ ...b, payoutNow: true }), 'payoutNow'],
    ['no evidence', ({ evidence: _, ...b }) => b, 'evidence'],
    [
      'a period ending before it starts',
      (b) => ({
        ...b,
        evidence: { ...b.evidence, periodStart: b.evidence.periodEnd, periodEnd: b.evidence.periodStart },
      }),
      'evidence.periodEnd',
    ],
    [
      'a hash that is not SHA-256 hex',
      (b) => ({ ...b, evidence: { ...b.evidence, inputDataHashes: [{ name: 'x', sha256: 'ABC' }] } }),
      'evidence.inputDataHashes.0.sha256',
    ],
    [
      'no input data hashes',
      (b) => ({ ...b, evidence: { ...b.evidence, inputDataHashes: [] } }),
      'evidence.inputDataHashes',
    ],
    [
      'a non-finite index value',
      (b) => ({ ...b, evidence: { ...b.evidence, indexValue: '1e400' } }),
      'evidence.indexValue',
    ],
    [
      'an unknown evidence field',
      (b) => ({ ...b, evidence: { ...b.evidence, rainfall: 1 } }),
      'evidence.rainfall',
    ],
  ];

  it.each(cases)(
    'refuses %s with 400 INVALID_INPUT naming the field, and writes nothing',
    async (_what, mutate, field) => {
      const body = mutate(valid()) as { idempotencyKey?: string };
      const before = await determinationsOf({});
      const keysBefore = await p.db.collection('ingestion_keys').countDocuments({});
      const reply = await ingest(body);
      expect(reply.status).toBe(400);
      expect(reply.body.error.code).toBe('INVALID_INPUT');
      expect(reply.body.error.details).toEqual(expect.arrayContaining([expect.objectContaining({ field })]));
      expect(await determinationsOf({})).toBe(before);
      expect(await p.db.collection('ingestion_keys').countDocuments({})).toBe(keysBefore);
    },
  );
});

describe('POST /ops/determinations/batch', () => {
  it('answers every item on its own: created, replayed, invalid with field details, conflicting', async () => {
    const a = assessment({ policyId: policy.policyId });
    // 100 % of a fresh policy: the shared one's cover is partly owed by earlier tests' determinations.
    const fresh = await activeCropPolicy(p, { org: policy.org, sumInsured: 50_000 });
    const b = assessment({ policyId: fresh.policyId }, { damagePercentBp: 10_000 });
    await ingest(a);
    const reply = await p.gateway.ops('POST', '/determinations/batch', {
      body: {
        items: [a, b, { ...b, idempotencyKey: a.idempotencyKey }, { ...a, damagePercentBp: -1 }, 'nonsense'],
      },
    });
    expect(reply.status).toBe(200);
    const results = reply.body.data.results;
    expect(results.map((r: { index: number; status: number }) => [r.index, r.status])).toEqual([
      [0, 200],
      [1, 201],
      [2, 409],
      [3, 400],
      [4, 400],
    ]);
    expect(results[1].determination.amountOwed.amountMinor).toBe('5000000');
    expect(results[3].error.details).toEqual([expect.objectContaining({ field: 'damagePercentBp' })]);
    expect(reply.body.data.summary).toEqual({ created: 1, replayed: 1, failed: 3 });
  });

  it('answers the ingestion fields alone to a caller that prefers return=minimal', async () => {
    const fresh = await activeCropPolicy(p, { org: policy.org, sumInsured: 50_000 });
    const a = assessment({ policyId: fresh.policyId }, { damagePercentBp: 2_500 });
    const items = [a, { ...a, damagePercentBp: -1 }];
    const minimal = await p.gateway.ops('POST', '/determinations/batch', {
      body: { items },
      headers: { prefer: 'respond-async, RETURN="Minimal"; foo=bar' },
    });
    expect(minimal.status).toBe(200);
    expect(minimal.headers.get('preference-applied')).toBe('return=minimal');
    const [made, refused] = minimal.body.data.results;
    expect(made.status).toBe(201);
    expect(made.determination).toEqual({
      determinationId: expect.any(String),
      status: 'ISSUED',
      unattributedReason: null,
      idempotencyKey: a.idempotencyKey,
      organizationId: policy.org.id,
      receivedAt: expect.any(String),
      policyId: fresh.policyId,
      policyNumber: expect.any(String),
      kind: a.kind,
      methodologyVersion: a.methodologyVersion,
      triggered: true,
      damagePercentBp: 2_500,
      assessedAt: expect.any(String),
      owed: { amountMinor: '1250000', currency: 'KES', exponent: 2 },
    });
    expect(refused.error.details).toEqual([expect.objectContaining({ field: 'damagePercentBp' })]);
    // A small batch is kept whole in the audit trail: its body and its answer as answered.
    const [entry] = (
      await p.gateway.ops('GET', '/audit?action=opsIngestDeterminationBatch&limit=100')
    ).body.data.filter((e: { requestId: string }) => e.requestId === minimal.headers.get('x-request-id'));
    expect(entry.request).toEqual(JSON.parse(JSON.stringify({ items })));
    expect(entry.after).toEqual(minimal.body.data);

    // The same items again, full: the replay carries what the determination's own read does.
    const full = await p.gateway.ops('POST', '/determinations/batch', { body: { items: [a] } });
    expect(full.headers.get('preference-applied')).toBeNull();
    const [replay] = full.body.data.results;
    expect(replay).toMatchObject({ status: 200, replayed: true });
    const read = await p.gateway.ops('GET', `/determinations/${made.determination.determinationId}`);
    expect(replay.determination).toEqual(read.body.data);
    expect(replay.determination.signature).toEqual(expect.any(String));
    expect(replay.determination).toMatchObject(made.determination);
  });

  it('takes 1,000 items in one body beyond the partner API’s 1 MiB limit', async () => {
    // Each item about 1.3 KiB (several input data hashes), each refused for its own reason.
    const hashes = Array.from({ length: 8 }, (_, i) => ({ name: `dekad-${i}.tif`, sha256: 'b'.repeat(64) }));
    const items = Array.from({ length: 1_000 }, () => {
      const item = assessment({ policyId: policy.policyId }, { damagePercentBp: 10_001 });
      return { ...item, evidence: { ...item.evidence, inputDataHashes: hashes } };
    });
    const text = JSON.stringify({ items });
    expect(text.length).toBeGreaterThan(1024 * 1024);
    const reply = await p.gateway.ops('POST', '/determinations/batch', { body: { items } });
    expect(reply.status).toBe(200);
    expect(reply.body.data.summary).toEqual({ created: 0, replayed: 0, failed: 1_000 });
    expect(new Set(reply.body.data.results.map((r: { status: number }) => r.status))).toEqual(new Set([400]));

    // The audit trail keeps who sent it and what came of it, the body and answer summarised by size.
    const answered = Buffer.byteLength(JSON.stringify(reply.body));
    expect(answered).toBeGreaterThan(16 * 1024);
    const [entry] = (
      await p.gateway.ops('GET', '/audit?action=opsIngestDeterminationBatch&limit=100')
    ).body.data.filter((e: { requestId: string }) => e.requestId === reply.headers.get('x-request-id'));
    expect(entry).toMatchObject({
      status: 200,
      path: '/ops/determinations/batch',
      request: { omitted: `${Buffer.byteLength(text)} bytes of JSON` },
      after: { omitted: `${answered} bytes of JSON` },
    });
  });

  it('refuses more than 1,000 items before ingesting any', async () => {
    const items = Array.from({ length: 1_001 }, () => assessment({ policyId: policy.policyId }));
    const before = await determinationsOf({});
    const reply = await p.gateway.ops('POST', '/determinations/batch', { body: { items } });
    expect(reply.status).toBe(400);
    expect(reply.body.error.details).toEqual([expect.objectContaining({ field: 'items' })]);
    expect(await determinationsOf({})).toBe(before);
  });
});

describe('the determination-ingest queue (the index pipeline’s door)', () => {
  it('issues what a pipeline enqueues, once, however often the job is sent', async () => {
    const body = assessment({ policyId: policy.policyId });
    const producer = createProducer('determination-ingest', {
      connection: p.config.REDIS_URL,
      prefix: p.config.REDIS_PREFIX,
    });
    try {
      await producer.add(body as never, { jobId: determinationIngestJobId(body.idempotencyKey) });
      await producer.add(body as never, { jobId: `again-${determinationIngestJobId(body.idempotencyKey)}` });
      const stored = await eventually(
        async () => {
          const d = await p.db.collection('determinations').findOne({ idempotencyKey: body.idempotencyKey });
          expect(d?.status).toBe('ISSUED');
          return d;
        },
        { message: 'the queued determination' },
      );
      await eventually(() => expect(deliveredFor(String(stored?._id))).toHaveLength(1), {
        message: 'its delivery',
      });
      expect(await determinationsOf({ idempotencyKey: body.idempotencyKey })).toBe(1);
    } finally {
      await producer.close();
    }
  });

  it('refuses to enqueue an assessment that does not match the declared payload', async () => {
    const producer = createProducer('determination-ingest', {
      connection: p.config.REDIS_URL,
      prefix: p.config.REDIS_PREFIX,
    });
    try {
      const body = { ...assessment({ policyId: policy.policyId }), damagePercentBp: 20_000 };
      await expect(producer.add(body as never)).rejects.toThrow(/damagePercentBp/);
    } finally {
      await producer.close();
    }
  });
});
