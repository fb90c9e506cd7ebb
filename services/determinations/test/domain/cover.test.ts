import { randomUUID } from 'node:crypto';
import { AppError } from '@parametric/http';
import fc from 'fast-check';
import {
  type ClaimCoverInput,
  type CoverStore,
  claimCover,
  claimCovers,
  claimCoversOfPolicies,
  type PolicyClaims,
} from '../../src/cover/claim';
import { uncappedOwedMinor } from '../../src/determinations/amount';
import { policySnapshot } from './fixtures';
import { memoryCoverStore } from './memory-cover-store';

const noPause = async () => undefined;
const AT = new Date('2026-11-20T08:00:00.000Z');

/** A policy of `sumInsuredMinor` and a claim on it for a `bp` determination. */
function coverOf(sumInsuredMinor: bigint, currency = 'KES', exponent = 2) {
  const policy = policySnapshot({ currency, exponent, sumInsuredMinor: sumInsuredMinor.toString() });
  const input = (bp: number, determinationId: string = randomUUID()): ClaimCoverInput => ({
    policyId: policy.id,
    organizationId: policy.organizationId,
    currency,
    exponent,
    sumInsuredMinor,
    determinationId,
    uncappedMinor: uncappedOwedMinor(policy, bp) as bigint,
    at: AT,
  });
  return { policy, input };
}

/** Every store operation runs when the scheduler says: claims' reads and writes interleave in every order. */
const scheduled = (s: fc.Scheduler, inner: CoverStore): CoverStore => ({
  find: s.scheduleFunction(inner.find),
  findMany: s.scheduleFunction(inner.findMany),
  create: s.scheduleFunction(inner.create),
  createMany: s.scheduleFunction(inner.createMany),
  append: s.scheduleFunction(inner.append),
});

const sumOf = (values: bigint[]) => values.reduce((a, b) => a + b, 0n);
/** The lesser of two bigints (Math.min takes numbers only). */
const least = (a: bigint, b: bigint) => (b < a ? b : a);

describe('claimCover: the amounts owed by a policy’s determinations never exceed its sum insured', () => {
  it('caps a determination at the remaining cover, and owes 0 once the cover is exhausted', async () => {
    const store = memoryCoverStore();
    const { policy, input } = coverOf(2_000_000n); // 20,000.00 KES
    const first = await claimCover(store, input(6_000), { pause: noPause });
    const second = await claimCover(store, input(6_000), { pause: noPause });
    const third = await claimCover(store, input(6_000), { pause: noPause });
    expect(first).toEqual({
      amountMinor: 1_200_000n,
      uncappedMinor: 1_200_000n,
      remainingBeforeMinor: 2_000_000n,
      capped: false,
    });
    expect(second).toEqual({
      amountMinor: 800_000n,
      uncappedMinor: 1_200_000n,
      remainingBeforeMinor: 800_000n,
      capped: true,
    });
    expect(third).toEqual({
      amountMinor: 0n,
      uncappedMinor: 1_200_000n,
      remainingBeforeMinor: 0n,
      capped: true,
    });
    const [cover] = store.all();
    expect(cover).toMatchObject({
      _id: policy.id,
      organizationId: policy.organizationId,
      sumInsuredMinor: '2000000',
      owedMinor: '2000000',
      seq: 2,
    });
    // The exhausted claim took nothing and wrote nothing.
    expect(cover?.claims.map((c) => c.amountMinor)).toEqual(['1200000', '800000']);
  });

  it('gives two 100% determinations one sum insured: the second owes 0', async () => {
    const store = memoryCoverStore();
    const { input } = coverOf(2_000_000n);
    const amounts = [
      await claimCover(store, input(10_000), { pause: noPause }),
      await claimCover(store, input(10_000), { pause: noPause }),
    ].map((t) => t.amountMinor);
    expect(amounts).toEqual([2_000_000n, 0n]);
  });

  it('does not cap a determination that fits exactly into the remaining cover', async () => {
    const store = memoryCoverStore();
    const { input } = coverOf(2_000_000n);
    await claimCover(store, input(4_000), { pause: noPause });
    const rest = await claimCover(store, input(6_000), { pause: noPause });
    expect(rest).toMatchObject({ amountMinor: 1_200_000n, remainingBeforeMinor: 1_200_000n, capped: false });
  });

  it('writes nothing for a determination that owes nothing (untriggered, 0 bp)', async () => {
    const store = memoryCoverStore();
    const { input } = coverOf(2_000_000n);
    expect(await claimCover(store, input(0), { pause: noPause })).toEqual({
      amountMinor: 0n,
      uncappedMinor: 0n,
      remainingBeforeMinor: 2_000_000n,
      capped: false,
    });
    expect(store.all()).toEqual([]);
  });

  it('gives a retried ingestion (same determination id) its first claim back, never a second one', async () => {
    const store = memoryCoverStore();
    const { input } = coverOf(2_000_000n);
    const crashed = input(6_000, 'det-crashed-before-insert');
    const first = await claimCover(store, crashed, { pause: noPause });
    // Another determination takes the rest before the retry comes.
    await claimCover(store, input(10_000), { pause: noPause });
    const retried = await claimCover(store, crashed, { pause: noPause });
    expect(retried).toEqual(first);
    expect(retried.amountMinor).toBe(1_200_000n);
    const [cover] = store.all();
    expect(cover?.owedMinor).toBe('2000000');
    expect(cover?.claims.filter((c) => c.determinationId === 'det-crashed-before-insert')).toHaveLength(1);
  });

  it('is exact in currencies without minor units (UGX, exponent 0)', async () => {
    const store = memoryCoverStore();
    const { input } = coverOf(1_000_001n, 'UGX', 0);
    const amounts = [];
    for (const bp of [3_333, 3_333, 3_333, 3_333]) {
      amounts.push((await claimCover(store, input(bp), { pause: noPause })).amountMinor);
    }
    // 1,000,001 × 33.33 % = 333,300.33 → 333,300 three times, then only the 101 UGX left.
    expect(amounts).toEqual([333_300n, 333_300n, 333_300n, 101n]);
    expect(sumOf(amounts)).toBe(1_000_001n);
  });

  it('is exact for sums beyond 2^53 minor units', async () => {
    const store = memoryCoverStore();
    const sum = 2n ** 64n + 12_345n;
    const { input } = coverOf(sum, 'UGX', 0);
    const first = await claimCover(store, input(9_999), { pause: noPause });
    const second = await claimCover(store, input(9_999), { pause: noPause });
    expect(first.amountMinor).toBe((sum * 9_999n) / 10_000n);
    expect(second.amountMinor).toBe(sum - first.amountMinor);
    expect(second.capped).toBe(true);
    expect(store.all()[0]?.owedMinor).toBe(sum.toString());
  });

  it('refuses a policy whose terms differ from the cover it opened, rather than cap on the wrong sum', async () => {
    const store = memoryCoverStore();
    const { input } = coverOf(2_000_000n);
    await claimCover(store, input(1_000), { pause: noPause });
    await expect(
      claimCover(store, { ...input(1_000), sumInsuredMinor: 4_000_000n }, { pause: noPause }),
    ).rejects.toThrow(/was opened as .*2000000.*now says .*4000000/);
    await expect(
      claimCover(store, { ...input(1_000), organizationId: randomUUID() }, { pause: noPause }),
    ).rejects.toThrow(/was opened as/);
    expect(store.all()[0]?.claims).toHaveLength(1);
  });

  it('gives up with a retriable 503 after a bounded number of lost races, having taken nothing', async () => {
    const inner = memoryCoverStore();
    const { input } = coverOf(2_000_000n);
    await claimCover(inner, input(1_000), { pause: noPause });
    // Another writer always gets in between our read and our write.
    const contended: CoverStore = { ...inner, append: async () => false, create: async () => false };
    const pauses: number[] = [];
    const claim = claimCover(contended, input(1_000), {
      maxAttempts: 5,
      pause: async (attempt) => {
        pauses.push(attempt);
      },
    });
    await expect(claim).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE', status: 503 });
    await expect(claim).rejects.toBeInstanceOf(AppError);
    expect(pauses).toEqual([1, 2, 3, 4]);
    expect(inner.all()[0]?.owedMinor).toBe('200000');
  });

  const currencies = [
    ['KES', 2],
    ['UGX', 0],
    ['RWF', 0],
    ['NGN', 2],
  ] as const;
  // Up to 2^70 minor units: well beyond 2^53 (where a float stops counting units).
  const sums = fc.oneof(fc.bigInt({ min: 0n, max: 10_000_000n }), fc.bigInt({ min: 0n, max: 2n ** 70n }));

  it('never lets a sequence of determinations owe more than the sum insured, and owes it all once exhausted', async () => {
    await fc.assert(
      fc.asyncProperty(
        sums,
        fc.constantFrom(...currencies),
        fc.array(fc.integer({ min: 0, max: 10_000 }), { maxLength: 12 }),
        async (sum, [currency, exponent], bps) => {
          const store = memoryCoverStore();
          const { input } = coverOf(sum, currency, exponent);
          const amounts: bigint[] = [];
          let remaining = sum;
          for (const bp of bps) {
            const claim = input(bp);
            const taken = await claimCover(store, claim, { pause: noPause });
            // In order: each one owes the formula's amount or what is left, whichever is less.
            const expected = least(claim.uncappedMinor, remaining);
            expect(taken.amountMinor).toBe(expected);
            expect(taken.remainingBeforeMinor).toBe(remaining);
            expect(taken.capped).toBe(expected < claim.uncappedMinor);
            remaining -= expected;
            amounts.push(taken.amountMinor);
          }
          const total = sumOf(amounts);
          const uncappedTotal = sumOf(bps.map((bp) => input(bp).uncappedMinor));
          expect(total <= sum).toBe(true);
          expect(total).toBe(least(uncappedTotal, sum));
          expect(store.all()[0]?.owedMinor ?? '0').toBe(total.toString());
        },
      ),
      { numRuns: 500 },
    );
  });

  it('never lets concurrent claims take the same cover twice, in any interleaving', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.scheduler(),
        sums,
        fc.array(fc.integer({ min: 0, max: 10_000 }), { minLength: 1, maxLength: 8 }),
        fc.array(fc.nat(), { maxLength: 3 }),
        async (s, sum, bps, retried) => {
          const inner = memoryCoverStore();
          // Every store operation runs when the scheduler says: reads and writes of different
          // claims interleave in every order fast-check can think of.
          const store = scheduled(s, inner);
          const { input } = coverOf(sum, 'UGX', 0);
          const claims = bps.map((bp) => input(bp));
          // Some ingestions run twice at once (a retried key racing its first run): same id.
          const runs = [...claims, ...retried.map((i) => claims[i % claims.length] as ClaimCoverInput)];
          const all = Promise.all(runs.map((c) => claimCover(store, c, { pause: noPause })));
          const taken = await s.waitFor(all);

          const byDetermination = new Map<string, bigint>();
          runs.forEach((c, i) => {
            const amount = (taken[i] as { amountMinor: bigint }).amountMinor;
            const before = byDetermination.get(c.determinationId);
            // Both runs of one determination get the same amount.
            if (before !== undefined) expect(amount).toBe(before);
            byDetermination.set(c.determinationId, amount);
          });
          const total = sumOf([...byDetermination.values()]);
          const uncappedTotal = sumOf(claims.map((c) => c.uncappedMinor));
          expect(total <= sum).toBe(true);
          expect(total).toBe(least(uncappedTotal, sum));
          const cover = inner.all()[0];
          expect(cover?.owedMinor ?? '0').toBe(total.toString());
          // One claim per determination that took something, with what it was told.
          const written = cover?.claims ?? [];
          expect(new Set(written.map((c) => c.determinationId)).size).toBe(written.length);
          for (const c of written) expect(BigInt(c.amountMinor)).toBe(byDetermination.get(c.determinationId));
          expect(written.length).toBe([...byDetermination.values()].filter((a) => a > 0n).length);
        },
      ),
      { numRuns: 300 },
    );
  });

  /** Splits `items` into consecutive batches at the given cut points (any order, repeats ignored). */
  const batchesOf = <T>(items: T[], cuts: number[]): T[][] => {
    const at = [...new Set(cuts.map((c) => c % (items.length + 1)))].sort((a, b) => a - b);
    const edges = [0, ...at, items.length];
    return edges
      .slice(1)
      .map((end, i) => items.slice(edges[i], end))
      .filter((b) => b.length > 0);
  };
  /** A cover's claims as the cap reads them (when they were made aside). */
  const claimsOf = (store: ReturnType<typeof memoryCoverStore>) =>
    (store.all()[0]?.claims ?? []).map(({ claimedAt: _at, ...claim }) => claim);

  it('claims a batch of one policy’s determinations in one write, exactly as one claim after another would', async () => {
    await fc.assert(
      fc.asyncProperty(
        sums,
        fc.array(fc.integer({ min: 0, max: 10_000 }), { maxLength: 12 }),
        fc.array(fc.nat(), { maxLength: 4 }),
        async (sum, bps, cuts) => {
          const { input } = coverOf(sum, 'KES', 2);
          const claims = bps.map((bp) => input(bp));
          const oneByOne = memoryCoverStore();
          const expected = [];
          for (const claim of claims) expected.push(await claimCover(oneByOne, claim, { pause: noPause }));

          const inner = memoryCoverStore();
          let writes = 0;
          const counted: CoverStore = {
            ...inner,
            create: (cover) => {
              writes++;
              return inner.create(cover);
            },
            append: (...args) => {
              writes++;
              return inner.append(...args);
            },
          };
          const batches = batchesOf(claims, cuts);
          const taken = [];
          for (const batch of batches) {
            const terms = batch[0] as ClaimCoverInput;
            taken.push(...(await claimCovers(counted, terms, batch, { pause: noPause })));
          }
          expect(taken).toEqual(expected);
          expect(claimsOf(inner)).toEqual(claimsOf(oneByOne));
          expect(inner.all()[0]?.owedMinor).toBe(oneByOne.all()[0]?.owedMinor);
          // At most one write a batch (none for a batch that takes nothing).
          expect(writes).toBeLessThanOrEqual(batches.length);

          // The same batches again (a retried request): the same amounts, nothing written. (A 0
          // is not stored, so its retry sees the cover as it is now: 0 again, as claimCover says.)
          const before = writes;
          const again = [];
          for (const batch of batches) {
            again.push(
              ...(await claimCovers(counted, batch[0] as ClaimCoverInput, batch, { pause: noPause })),
            );
          }
          expect(again.map((t) => t.amountMinor)).toEqual(expected.map((t) => t.amountMinor));
          expect(writes).toBe(before);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('never lets concurrent batches (and single claims) take the same cover twice, in any interleaving', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.scheduler(),
        sums,
        fc.array(fc.integer({ min: 0, max: 10_000 }), { minLength: 1, maxLength: 10 }),
        fc.array(fc.nat(), { maxLength: 4 }),
        fc.array(fc.nat(), { maxLength: 4 }),
        async (s, sum, bps, cuts, retried) => {
          const inner = memoryCoverStore();
          const store = scheduled(s, inner);
          const { input } = coverOf(sum, 'UGX', 0);
          const claims = bps.map((bp) => input(bp));
          // Batches racing each other, and some determinations retried alone at the same time.
          const batches = [
            ...batchesOf(claims, cuts),
            ...retried.map((i) => [claims[i % claims.length] as ClaimCoverInput]),
          ];
          const answers = await s.waitFor(
            Promise.all(
              batches.map((batch) =>
                claimCovers(store, batch[0] as ClaimCoverInput, batch, { pause: noPause }),
              ),
            ),
          );

          const byDetermination = new Map<string, bigint>();
          batches.forEach((batch, b) => {
            batch.forEach((claim, i) => {
              const amount = ((answers[b] as { amountMinor: bigint }[])[i] as { amountMinor: bigint })
                .amountMinor;
              const before = byDetermination.get(claim.determinationId);
              if (before !== undefined) expect(amount).toBe(before);
              byDetermination.set(claim.determinationId, amount);
            });
          });
          const total = sumOf([...byDetermination.values()]);
          expect(total <= sum).toBe(true);
          expect(total).toBe(least(sumOf(claims.map((c) => c.uncappedMinor)), sum));
          const written = claimsOf(inner);
          expect(inner.all()[0]?.owedMinor ?? '0').toBe(total.toString());
          expect(new Set(written.map((c) => c.determinationId)).size).toBe(written.length);
          // The cap follows the stored order: each claim saw the cover its predecessors left.
          let remaining = sum;
          for (const c of written) {
            expect(BigInt(c.remainingBeforeMinor)).toBe(remaining);
            expect(BigInt(c.amountMinor)).toBe(least(BigInt(c.uncappedMinor), remaining));
            expect(BigInt(c.amountMinor)).toBe(byDetermination.get(c.determinationId));
            remaining -= BigInt(c.amountMinor);
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  describe('several policies at once (an ops-door batch)', () => {
    /** Policies with their determinations: the sum insured and each determination's bp. */
    const policiesArb = fc.array(
      fc.record({
        sum: sums,
        bps: fc.array(fc.integer({ min: 0, max: 10_000 }), { minLength: 1, maxLength: 5 }),
      }),
      { minLength: 1, maxLength: 5 },
    );
    const claimsOfPolicies = (policies: { sum: bigint; bps: number[] }[]) =>
      policies.map(({ sum, bps }) => {
        const { input } = coverOf(sum, 'KES', 2);
        return bps.map((bp) => input(bp));
      });
    const asPolicyClaims = (claims: ClaimCoverInput[]): PolicyClaims => ({
      terms: claims[0] as ClaimCoverInput,
      requests: claims,
    });
    const coverOfPolicy = (store: ReturnType<typeof memoryCoverStore>, policyId: string) =>
      store.all().find((c) => c._id === policyId);

    it('gives each policy what claimCovers gives it, with one read and one create for all the first claims', async () => {
      await fc.assert(
        fc.asyncProperty(policiesArb, fc.boolean(), async (policies, claimedBefore) => {
          const perPolicy = claimsOfPolicies(policies);
          const alone = memoryCoverStore();
          const inner = memoryCoverStore();
          // Some covers exist already (earlier determinations of the policies), in both stores.
          if (claimedBefore)
            for (const claims of perPolicy) {
              const earlier = { ...(claims[0] as ClaimCoverInput), determinationId: randomUUID() };
              await claimCover(alone, earlier, { pause: noPause });
              await claimCover(inner, earlier, { pause: noPause });
            }
          const expected = [];
          for (const claims of perPolicy)
            expected.push(await claimCovers(alone, claims[0] as ClaimCoverInput, claims, { pause: noPause }));

          const calls = { find: 0, findMany: 0, create: 0, createMany: 0, append: 0 };
          const count = <A extends unknown[], R>(name: keyof typeof calls, f: (...a: A) => R) => {
            return (...a: A): R => {
              calls[name]++;
              return f(...a);
            };
          };
          const counted: CoverStore = {
            find: count('find', inner.find),
            findMany: count('findMany', inner.findMany),
            create: count('create', inner.create),
            createMany: count('createMany', inner.createMany),
            append: count('append', inner.append),
          };
          const results = await claimCoversOfPolicies(counted, perPolicy.map(asPolicyClaims), {
            pause: noPause,
          });

          expect(results).toEqual(expected.map((taken) => ({ taken })));
          for (const claims of perPolicy) {
            const id = (claims[0] as ClaimCoverInput).policyId;
            const mine = coverOfPolicy(inner, id);
            const theirs = coverOfPolicy(alone, id);
            expect(mine?.owedMinor).toBe(theirs?.owedMinor);
            expect(mine?.claims.map((c) => c.determinationId)).toEqual(
              theirs?.claims.map((c) => c.determinationId),
            );
          }
          // No race here: nothing is read or created policy by policy.
          expect(calls.find).toBe(0);
          expect(calls.create).toBe(0);
          expect(calls.findMany).toBe(1);
          expect(calls.createMany).toBeLessThanOrEqual(1);
          expect(calls.append).toBeLessThanOrEqual(claimedBefore ? perPolicy.length : 0);
        }),
        { numRuns: 200 },
      );
    });

    it('never lets concurrent multi-policy batches and single claims take a cover twice, in any interleaving', async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.scheduler(),
          policiesArb,
          fc.array(fc.nat(), { maxLength: 4 }),
          async (s, policies, retried) => {
            const inner = memoryCoverStore();
            const store = scheduled(s, inner);
            const perPolicy = claimsOfPolicies(policies);
            const all = perPolicy.flat();
            // Two batches over every policy, each with half the determinations (by position),
            // and some determinations retried alone at the same time.
            const halves = [0, 1].map((h) =>
              perPolicy.map((claims) => claims.filter((_, i) => i % 2 === h)).filter((c) => c.length > 0),
            );
            const singles = retried.map((i) => all[i % all.length] as ClaimCoverInput);
            const answers = await s.waitFor(
              Promise.all([
                ...halves.map((half) =>
                  claimCoversOfPolicies(store, half.map(asPolicyClaims), { pause: noPause }).then((results) =>
                    results.flatMap((r, p) => {
                      if (!('taken' in r)) throw r.error;
                      return (half[p] as ClaimCoverInput[]).map((c, i) => [c, r.taken[i]] as const);
                    }),
                  ),
                ),
                ...singles.map((c) =>
                  claimCover(store, c, { pause: noPause }).then((t) => [[c, t] as const]),
                ),
              ]),
            );

            const byDetermination = new Map<string, bigint>();
            for (const [claim, taken] of answers.flat()) {
              const amount = (taken as { amountMinor: bigint }).amountMinor;
              const before = byDetermination.get(claim.determinationId);
              if (before !== undefined) expect(amount).toBe(before);
              byDetermination.set(claim.determinationId, amount);
            }
            for (const claims of perPolicy) {
              const sum = (claims[0] as ClaimCoverInput).sumInsuredMinor;
              const total = sumOf(claims.map((c) => byDetermination.get(c.determinationId) as bigint));
              expect(total <= sum).toBe(true);
              expect(total).toBe(least(sumOf(claims.map((c) => c.uncappedMinor)), sum));
              const cover = coverOfPolicy(inner, (claims[0] as ClaimCoverInput).policyId);
              expect(cover?.owedMinor ?? '0').toBe(total.toString());
              const written = cover?.claims ?? [];
              expect(new Set(written.map((c) => c.determinationId)).size).toBe(written.length);
              let remaining = sum;
              for (const c of written) {
                expect(BigInt(c.remainingBeforeMinor)).toBe(remaining);
                expect(BigInt(c.amountMinor)).toBe(byDetermination.get(c.determinationId));
                remaining -= BigInt(c.amountMinor);
              }
            }
          },
        ),
        { numRuns: 300 },
      );
    });

    it("keeps one policy's failure its own: a cover opened with other terms fails that policy only", async () => {
      const store = memoryCoverStore();
      const a = coverOf(1_000_000n).input;
      const b = coverOf(1_000_000n).input;
      await claimCover(store, a(100), { pause: noPause });
      const otherTerms = { ...a(500), currency: 'UGX', exponent: 0 };
      const results = await claimCoversOfPolicies(
        store,
        [asPolicyClaims([otherTerms]), asPolicyClaims([b(2_500)])],
        { pause: noPause },
      );
      expect(results[0]).toEqual({ error: expect.any(Error) });
      expect(results[1]).toEqual({ taken: [expect.objectContaining({ amountMinor: 250_000n })] });
      expect(coverOfPolicy(store, otherTerms.policyId)?.claims).toHaveLength(1);
    });
  });
});
