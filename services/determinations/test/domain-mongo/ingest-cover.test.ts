import { randomUUID } from 'node:crypto';
import { verifyDetermination } from '@parametric/determination-verify';
import { AppError } from '@parametric/http';
import { connectMongoose, type MongooseHandle } from '@parametric/test-harness';
import type { CoverDoc } from '../../src/cover/claim';
import type { DeterminationDoc } from '../../src/determinations/model';
import { type IngestDeps, ingestBatch, ingestDetermination } from '../../src/ingestion/domain';
import type { PolicySnapshot } from '../../src/ingestion/policies';
import { determinationRepositories } from '../../src/repositories';
import { generateSigningKeyPem, loadSigningKeys } from '../../src/signing/keys';
import { policySnapshot } from '../domain/fixtures';
import { assessment } from '../support';

const T0 = new Date('2026-11-01T08:00:00.000Z');
const DAY = 86_400_000;
const keys = loadSigningKeys(generateSigningKeyPem());
const jwks = keys.jwks;

let mongo: MongooseHandle;
let repositories: ReturnType<typeof determinationRepositories>;

beforeAll(async () => {
  mongo = await connectMongoose('determinations-ingest-cover');
  repositories = determinationRepositories(mongo.connection);
  await repositories.init();
});

afterAll(async () => {
  await mongo.close();
});

function policyOf(overrides: Partial<PolicySnapshot> = {}): PolicySnapshot {
  return policySnapshot({
    sumInsuredMinor: '2000000', // 20,000.00 KES
    coverStartsAt: new Date(T0.getTime() - 30 * DAY).toISOString(),
    coverEndsAt: new Date(T0.getTime() + 150 * DAY).toISOString(),
    ...overrides,
  });
}

function depsFor(policy: PolicySnapshot, data = repositories.acrossOrganizations()): IngestDeps {
  return { data, lookupPolicies: async () => [policy], keys, reportDueSeconds: 30 * 86_400, now: () => T0 };
}

function body(policy: PolicySnapshot, overrides: Record<string, unknown> = {}) {
  const b = assessment(
    { policyId: policy.id },
    { assessedAt: new Date(T0.getTime() - 3_600_000).toISOString(), ...overrides },
  );
  return {
    ...b,
    evidence: {
      ...b.evidence,
      periodStart: new Date(T0.getTime() - 10 * DAY).toISOString(),
      periodEnd: T0.toISOString(),
    },
  } as never;
}

/** What a partner reads of a stored determination: the signed fields beside the signature. */
const partnerRecord = (d: DeterminationDoc) => ({
  ...d.signed,
  canonicalPayload: d.canonicalPayload,
  canonicalHash: d.canonicalHash,
  signature: d.signature,
  kid: d.kid,
});

describe('ingestion takes the amount owed from the policy’s cover', () => {
  it('signs the capped amount: full, then capped, then "0" with NOT_REQUIRED, each verifiable', async () => {
    const policy = policyOf();
    const deps = depsFor(policy);
    const issued = [];
    for (let i = 0; i < 3; i++) {
      issued.push((await ingestDetermination(body(policy, { damagePercentBp: 6_000 }), deps)).determination);
    }
    expect(issued.map((d) => d.owedMinor)).toEqual(['1200000', '800000', '0']);
    expect(issued.map((d) => d.signed?.amountOwed?.amountMinor)).toEqual(['1200000', '800000', '0']);
    expect(issued.map((d) => d.partnerSettlementStatus)).toEqual(['PENDING', 'PENDING', 'NOT_REQUIRED']);
    expect(issued[2]?.dueAt).toBeNull();
    expect(issued.map((d) => [d.uncappedOwedMinor, d.coverRemainingBeforeMinor])).toEqual([
      ['1200000', '2000000'],
      ['1200000', '800000'],
      ['1200000', '0'],
    ]);
    for (const d of issued)
      expect(verifyDetermination(partnerRecord(d), jwks)).toEqual({
        valid: true,
        kid: d.kid,
        sandbox: false,
      });
    expect(issued[2]?.signed?.amountOwed).toMatchObject({ amount: '0.00', damagePercentBp: 6_000 });
  });

  it('keeps the cover an ingestion claimed before it crashed, and gives its retry the same amount', async () => {
    const policy = policyOf();
    const data = repositories.acrossOrganizations();
    // The process dies between the claim and the insert of the record.
    const killed = new Proxy(data.determinations.collection, {
      get: (target, key, receiver) =>
        key === 'insertMany'
          ? async () => {
              throw new Error('killed before the insert');
            }
          : Reflect.get(target, key, receiver),
    });
    const crashing = new Proxy(data.determinations, {
      get: (target, key, receiver) => (key === 'collection' ? killed : Reflect.get(target, key, receiver)),
    });
    const first = body(policy, { damagePercentBp: 6_000 });
    await expect(
      ingestDetermination(first, depsFor(policy, { ...data, determinations: crashing })),
    ).rejects.toThrow('killed before the insert');

    // Another determination comes in meanwhile: the crashed one's 12,000.00 is taken.
    const other = await ingestDetermination(body(policy, { damagePercentBp: 6_000 }), depsFor(policy));
    expect(other.determination.owedMinor).toBe('800000');

    // The pipeline retries the same assessment: same key, same determination id, same claim.
    const retried = await ingestDetermination(first, depsFor(policy));
    expect(retried.replayed).toBe(false);
    expect(retried.determination.owedMinor).toBe('1200000');
    expect(retried.determination.signed?.amountOwed?.basis).not.toContain('capped');

    const cover = await mongo.connection.collection<CoverDoc>('policy_covers').findOne({ _id: policy.id });
    expect(cover?.owedMinor).toBe('2000000');
    expect(cover?.claims.map((c) => [c.determinationId, c.amountMinor])).toEqual([
      [retried.determination._id, '1200000'],
      [other.determination._id, '800000'],
    ]);
  });

  it('claims nothing for a Tier 1 currency without a registered exponent (no amount, nothing to cap)', async () => {
    const policy = policyOf({ currency: 'ZMW', exponent: 2 });
    const { determination } = await ingestDetermination(body(policy), depsFor(policy));
    expect(determination.signed).toMatchObject({
      amountOwed: null,
      amountOwedUnavailableReason: 'CURRENCY_EXPONENT_UNREGISTERED',
    });
    expect(determination.partnerSettlementStatus).toBe('PENDING');
    expect(
      await mongo.connection.collection('policy_covers').countDocuments({ _id: policy.id } as never),
    ).toBe(0);
  });

  it('caps Tier 2 payouts: two 100 % determinations, one payout job of the sum insured', async () => {
    const policy = policyOf({ settlementMode: 'DETERMINATION_AND_SETTLEMENT', organizationId: randomUUID() });
    const deps = depsFor(policy);
    const a = await ingestDetermination(body(policy, { damagePercentBp: 10_000 }), deps);
    const b = await ingestDetermination(body(policy, { damagePercentBp: 10_000 }), deps);
    const payoutsOf = (d: DeterminationDoc) =>
      d.jobOutbox.filter((j) => j.queue === 'payout-originations').map((j) => j.payload);
    // The payout reads its amount from the determination: the first owes the whole cover.
    expect(payoutsOf(a.determination)).toEqual([
      expect.objectContaining({ determinationId: a.determination._id }),
    ]);
    expect(a.determination.owedMinor).toBe('2000000');
    expect(payoutsOf(b.determination)).toEqual([]);
    expect(b.determination).toMatchObject({ owedMinor: '0', partnerSettlementStatus: 'NOT_APPLICABLE' });
  });

  describe('the batch door: every step once for the whole batch, each item answered as if alone', () => {
    const unexpected = (err: unknown) => {
      throw err;
    };

    it('caps a policy’s items in the batch’s order, in one cover write, and answers each like the single door', async () => {
      const policy = policyOf();
      const other = policyOf({ organizationId: randomUUID() });
      const looked: unknown[] = [];
      const deps: IngestDeps = {
        ...depsFor(policy),
        lookupPolicies: async (references) => {
          looked.push(references);
          return [policy, other];
        },
      };
      const items = [
        body(policy, { damagePercentBp: 6_000 }), // 12,000.00 of 20,000.00
        body(other, { damagePercentBp: 1_000 }),
        body(policy, { damagePercentBp: 6_000 }), // capped at the 8,000.00 left
        body(policy, { damagePercentBp: 1_000 }), // nothing left
      ];
      const results = await ingestBatch(items, deps, { onUnexpected: unexpected });
      expect(results.map((r) => [r.index, r.status, r.determination?.owedMinor])).toEqual([
        [0, 201, '1200000'],
        [1, 201, '200000'],
        [2, 201, '800000'],
        [3, 201, '0'],
      ]);
      // One look-up for the batch, each policy once.
      expect(looked).toEqual([{ policyIds: [policy.id, other.id], policyNumbers: [] }]);
      const cover = await mongo.connection.collection<CoverDoc>('policy_covers').findOne({ _id: policy.id });
      expect(cover).toMatchObject({ owedMinor: '2000000', seq: 1 });
      expect(cover?.claims.map((c) => c.amountMinor)).toEqual(['1200000', '800000']);
      // What was stored is what was answered, signed and verifiable.
      for (const r of results) {
        const stored = await repositories
          .acrossOrganizations()
          .determinations.findById(r.determination?._id)
          .lean<DeterminationDoc>();
        expect(stored).toEqual(r.determination);
        expect(verifyDetermination(partnerRecord(stored as DeterminationDoc), jwks).valid).toBe(true);
      }

      // The same batch again: every item a replay of its record, nothing claimed twice.
      const again = await ingestBatch(items, deps, { onUnexpected: unexpected });
      expect(again.map((r) => [r.status, r.replayed, r.determination?._id])).toEqual(
        results.map((r) => [200, true, r.determination?._id]),
      );
      expect(
        (await mongo.connection.collection<CoverDoc>('policy_covers').findOne({ _id: policy.id }))?.seq,
      ).toBe(1);
    });

    it('answers a key given twice in one batch as one determination and its replay, and other content under it as a conflict', async () => {
      const policy = policyOf();
      const first = body(policy, { damagePercentBp: 2_000 }) as { idempotencyKey: string };
      const results = await ingestBatch(
        [first, { ...first }, { ...first, damagePercentBp: 3_000 }],
        depsFor(policy),
        { onUnexpected: unexpected },
      );
      expect(results.map((r) => r.status)).toEqual([201, 200, 409]);
      expect(results[1]?.determination?._id).toBe(results[0]?.determination?._id);
      expect(results[2]?.error).toMatchObject({ code: 'CONFLICT' });
      expect(
        await repositories
          .acrossOrganizations()
          .determinations.countDocuments({ idempotencyKey: first.idempotencyKey }),
      ).toBe(1);
    });

    it('answers 503 for every item while the policy service cannot answer, never “no such policy”, and the retry issues them', async () => {
      const policy = policyOf();
      const items = [body(policy), body(policy, { damagePercentBp: 1_000 })];
      const down: IngestDeps = {
        ...depsFor(policy),
        lookupPolicies: async () => {
          throw new AppError('SERVICE_UNAVAILABLE', 'Policies cannot be read right now');
        },
      };
      const refused = await ingestBatch(items, down, { onUnexpected: unexpected });
      expect(refused.map((r) => [r.status, r.error?.code])).toEqual([
        [503, 'SERVICE_UNAVAILABLE'],
        [503, 'SERVICE_UNAVAILABLE'],
      ]);
      const retried = await ingestBatch(items, depsFor(policy), { onUnexpected: unexpected });
      expect(retried.map((r) => [r.status, r.determination?.status])).toEqual([
        [201, 'ISSUED'],
        [201, 'ISSUED'],
      ]);
    });

    const byNumber = (item: { policyId?: string }, policyNumber: string) => {
      const { policyId: _byId, ...rest } = item;
      return { ...rest, policyNumber };
    };

    it('leaves unattributed what no policy takes, beside what one does', async () => {
      const policy = policyOf();
      const results = await ingestBatch(
        [body(policy), byNumber(body(policy), 'KE-209901-ZZZZZZ'), { nonsense: true }],
        depsFor(policy),
        { onUnexpected: unexpected },
      );
      expect(results.map((r) => [r.status, r.determination?.status ?? r.error?.code])).toEqual([
        [201, 'ISSUED'],
        [201, 'UNATTRIBUTED'],
        [400, 'INVALID_INPUT'],
      ]);
      expect(results[1]?.determination).toMatchObject({
        unattributedReason: 'POLICY_NOT_FOUND',
        policyNumber: 'KE-209901-ZZZZZZ',
        outbox: [],
        outboxPending: false,
      });
    });

    it('signs a sandbox policy’s items with the sandbox keys, and without them refuses only those, writing nothing for them', async () => {
      const live = policyOf();
      const sandbox = policyOf({ organizationId: randomUUID(), environment: 'sandbox' });
      const sandboxKeys = loadSigningKeys(generateSigningKeyPem(), 'sandbox');
      const lookupPolicies = async () => [live, sandbox];
      const items = () => [body(live), body(sandbox), body(live)];

      const signed = await ingestBatch(
        items(),
        { ...depsFor(live), lookupPolicies, sandboxKeys },
        { onUnexpected: unexpected },
      );
      expect(signed.map((r) => [r.status, r.determination?.kid])).toEqual([
        [201, keys.activeKid],
        [201, sandboxKeys.activeKid],
        [201, keys.activeKid],
      ]);

      const withoutSandbox = items();
      const sandboxKey = (withoutSandbox[1] as unknown as { idempotencyKey: string }).idempotencyKey;
      const refused = await ingestBatch(
        withoutSandbox,
        { ...depsFor(live), lookupPolicies },
        { onUnexpected: unexpected },
      );
      expect(refused.map((r) => [r.status, r.determination?.kid ?? r.error?.code])).toEqual([
        [201, keys.activeKid],
        [400, 'INVALID_INPUT'],
        [201, keys.activeKid],
      ]);
      expect(refused[1]?.error?.details).toEqual([
        {
          field: 'policyId',
          message: 'names a sandbox policy; this deployment signs no sandbox determinations',
        },
      ]);
      const all = repositories.acrossOrganizations();
      const refusedId = (
        await mongo.connection
          .collection<{ _id: string; determinationId: string }>('ingestion_keys')
          .findOne({ _id: sandboxKey })
      )?.determinationId;
      expect(refusedId).toBeDefined();
      expect(await all.determinations.countDocuments({ _id: refusedId })).toBe(0);
      expect(await all.evidence.countDocuments({ _id: refusedId })).toBe(0);
      // The first batch's sandbox item took from the cover; the refused one claimed nothing.
      const cover = await mongo.connection.collection<CoverDoc>('policy_covers').findOne({ _id: sandbox.id });
      expect(cover?.claims).toHaveLength(1);
    });
  });
});
