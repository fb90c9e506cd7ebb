import { randomUUID } from 'node:crypto';
import { connectMongoose, type MongooseHandle } from '@parametric/test-harness';
import {
  type ClaimCoverInput,
  type CoverDoc,
  claimCover,
  claimCoversOfPolicies,
} from '../../src/cover/claim';
import { type CoverModel, coverModel } from '../../src/cover/model';
import { mongoCoverStore } from '../../src/cover/mongo-store';

let mongo: MongooseHandle;
let model: CoverModel;

beforeAll(async () => {
  mongo = await connectMongoose('determinations-cover');
  model = coverModel(mongo.connection);
  await model.init();
});

afterAll(async () => {
  await mongo.close();
});

/** Claims on one fresh policy of `sumInsuredMinor` KES minor units. */
function policyCover(sumInsuredMinor: bigint) {
  const policyId = randomUUID();
  const organizationId = randomUUID();
  const input = (uncappedMinor: bigint, determinationId: string = randomUUID()): ClaimCoverInput => ({
    policyId,
    organizationId,
    currency: 'KES',
    exponent: 2,
    sumInsuredMinor,
    determinationId,
    uncappedMinor,
    at: new Date(),
  });
  const stored = () => model.findById(policyId).lean<CoverDoc>();
  return { input, stored };
}

describe('claimCover on MongoDB, with real concurrency', () => {
  it('gives 10 parallel 6,000 bp determinations exactly the sum insured between them', async () => {
    const store = mongoCoverStore(model);
    const { input, stored } = policyCover(2_000_000n); // 20,000.00 KES; 60 % = 12,000.00
    const claims = Array.from({ length: 10 }, () => input(1_200_000n));
    const taken = await Promise.all(claims.map((c) => claimCover(store, c)));
    const amounts = taken.map((t) => t.amountMinor);
    expect(amounts.reduce((a, b) => a + b, 0n)).toBe(2_000_000n);
    // Whatever the order: one full 12,000.00, one capped 8,000.00, the rest 0.
    expect([...amounts].sort((a, b) => (a < b ? 1 : a > b ? -1 : 0))).toEqual([
      1_200_000n,
      800_000n,
      ...Array(8).fill(0n),
    ]);
    const cover = await stored();
    expect(cover).toMatchObject({ owedMinor: '2000000', sumInsuredMinor: '2000000', seq: 2 });
    expect(cover?.claims.map((c) => c.amountMinor)).toEqual(['1200000', '800000']);
    // Each claim on the cover is the amount its determination was told.
    for (const c of cover?.claims ?? []) {
      const i = claims.findIndex((x) => x.determinationId === c.determinationId);
      expect(taken[i]?.amountMinor).toBe(BigInt(c.amountMinor));
      expect(taken[i]?.remainingBeforeMinor).toBe(BigInt(c.remainingBeforeMinor));
    }
  });

  it('keeps many small parallel claims exact, and replays a claim by its determination id', async () => {
    const store = mongoCoverStore(model);
    const { input, stored } = policyCover(2_000_001n);
    const claims = Array.from({ length: 24 }, () => input(100_000n)); // 24 × 1,000.00 > 20,000.01
    const taken = await Promise.all(claims.map((c) => claimCover(store, c)));
    const total = taken.reduce((a, t) => a + t.amountMinor, 0n);
    expect(total).toBe(2_000_001n);
    const cover = await stored();
    expect(cover?.owedMinor).toBe('2000001');
    expect(new Set(cover?.claims.map((c) => c.determinationId)).size).toBe(cover?.claims.length);

    // The same determinations again (ingestions retried after a crash): the same amounts, no new claim.
    const again = await Promise.all(claims.map((c) => claimCover(store, c)));
    expect(again.map((t) => t.amountMinor)).toEqual(taken.map((t) => t.amountMinor));
    expect((await stored())?.seq).toBe(cover?.seq);
  });

  it('claims many policies at once against parallel single claims: each cover exact, first covers created once', async () => {
    const store = mongoCoverStore(model);
    const policies = Array.from({ length: 20 }, () => policyCover(2_000_000n));
    // Every policy gets a 60 % determination in the batch and another alone, at the same time.
    const batch = policies.map(({ input }) => input(1_200_000n));
    const singles = policies.map(({ input }) => input(1_200_000n));
    const [results, alone] = await Promise.all([
      claimCoversOfPolicies(
        store,
        batch.map((c) => ({ terms: c, requests: [c] })),
      ),
      Promise.all(singles.map((c) => claimCover(store, c))),
    ]);
    for (const [i, { stored }] of policies.entries()) {
      const result = results[i];
      if (!result || !('taken' in result)) throw new Error(`policy ${i}: ${JSON.stringify(result)}`);
      const amounts = [result.taken[0]?.amountMinor, alone[i]?.amountMinor].sort();
      // One of the two owes 12,000.00, the other what is left: 8,000.00.
      expect(amounts).toEqual([1_200_000n, 800_000n]);
      const cover = await stored();
      expect(cover?.owedMinor).toBe('2000000');
      expect(cover?.claims).toHaveLength(2);
    }
  });
});
