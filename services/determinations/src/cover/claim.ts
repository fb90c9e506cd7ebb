import { AppError } from '@parametric/http';

/** One determination's take of a policy's cover. Amounts are integer strings in minor units. */
export interface CoverClaim {
  determinationId: string;
  amountMinor: string;
  uncappedMinor: string;
  remainingBeforeMinor: string;
  claimedAt: Date;
}

/** A policy's cover as stored (`_id` = policy id); see ./model.ts. */
export interface CoverDoc {
  _id: string;
  organizationId: string;
  currency: string;
  exponent: number;
  sumInsuredMinor: string;
  /** The sum of `claims[].amountMinor`. */
  owedMinor: string;
  /** Bumped by every write: the compare-and-set token. */
  seq: number;
  /** In the order they were made: the issue order the cap follows. */
  claims: CoverClaim[];
}

/**
 * Where covers live: MongoDB in the service (./mongo-store.ts), memory in unit tests. Two
 * conditional writes are all `claimCover` needs to be race-free.
 */
export interface CoverStore {
  /** The policy's cover, or null before its first claim. */
  find(policyId: string): Promise<CoverDoc | null>;
  /** The covers of several policies in one read; a policy before its first claim is absent. */
  findMany(policyIds: readonly string[]): Promise<Map<string, CoverDoc>>;
  /** Creates the cover; false when it already exists (a parallel first claim won). */
  create(cover: CoverDoc): Promise<boolean>;
  /** `create` for several covers in one write: the ids of those created (the others existed). */
  createMany(covers: readonly CoverDoc[]): Promise<Set<string>>;
  /**
   * Sets `owedMinor`, appends `claims` (in their order) and bumps `seq`, only if `seq` is still
   * `expectedSeq`; false when another claim wrote first.
   */
  append(policyId: string, expectedSeq: number, owedMinor: string, claims: CoverClaim[]): Promise<boolean>;
}

/** The policy whose cover is claimed, as the determinations know it. */
export interface CoverTerms {
  policyId: string;
  organizationId: string;
  currency: string;
  exponent: number;
  sumInsuredMinor: bigint;
  at: Date;
}

/** One determination's request for its share of the cover. */
export interface CoverRequest {
  /** The claiming determination: a retried ingestion of the same key gets its claim back. */
  determinationId: string;
  /** sumInsured × bp / 10000, truncated: what it would owe with the whole cover left. */
  uncappedMinor: bigint;
}

export type ClaimCoverInput = CoverTerms & CoverRequest;

export interface CoverTaken {
  /** What the determination owes: min(uncapped, remaining cover). */
  amountMinor: bigint;
  uncappedMinor: bigint;
  /** The cover left before this determination: sum insured less what earlier ones owe. */
  remainingBeforeMinor: bigint;
  /** True when the remaining cover, not the formula, set the amount. */
  capped: boolean;
}

export interface ClaimCoverOptions {
  /** Compare-and-set attempts before giving up with a retriable 503. */
  maxAttempts?: number;
  /** Waits before attempt `attempt` + 1 (jittered in the service; none in unit tests). */
  pause?: (attempt: number) => Promise<void>;
}

/**
 * Enough for every ingestion lane of the service (INGEST_CONCURRENCY, each batch in flight,
 * the ops door) to claim one policy's cover at once: each round lets at least one through.
 */
const MAX_ATTEMPTS = 30;

/** Full jitter, at most 100 ms a wait: 30 attempts wait under 3 s in all. */
const jitteredPause = (attempt: number) =>
  new Promise<void>((resolve) => setTimeout(resolve, Math.random() * Math.min(100, 2 ** attempt * 2)));

/**
 * Takes a determination's amount owed from its policy's cover: min(uncapped, sum insured − what
 * the policy's earlier determinations owe). Idempotent on `determinationId` (an ingestion retried
 * after a crash between claim and insert gets the same amount, never a second claim), and
 * race-free: every write is conditional on the cover's `seq`, so of two concurrent claims one
 * re-reads the cover the other left. A claim of 0 writes nothing: the cover never grows back,
 * so a retry gets 0 again.
 */
export async function claimCover(
  store: CoverStore,
  input: ClaimCoverInput,
  options: ClaimCoverOptions = {},
): Promise<CoverTaken> {
  const [taken] = await claimCovers(store, input, [input], options);
  return taken as CoverTaken;
}

/**
 * `claimCover` for several determinations of one policy at once (a batch of the ops door): they
 * claim in the order given, as if one after the other, in a single compare-and-set write. The
 * answers are in the requests' order; a determination id given twice gets one claim and the same
 * answer twice.
 */
export async function claimCovers(
  store: CoverStore,
  terms: CoverTerms,
  requests: readonly CoverRequest[],
  options: ClaimCoverOptions = {},
): Promise<CoverTaken[]> {
  checkRequests(terms, requests);
  const maxAttempts = options.maxAttempts ?? MAX_ATTEMPTS;
  const pause = options.pause ?? jitteredPause;
  for (let attempt = 1; attempt <= maxAttempts; attempt++) {
    const cover = await store.find(terms.policyId);
    const plan = planClaims(cover, terms, requests);
    if (await written(store, cover, terms, plan)) return plan.taken;
    if (attempt < maxAttempts) await pause(attempt);
  }
  throw new AppError(
    'SERVICE_UNAVAILABLE',
    `The cover of policy ${terms.policyId} is being claimed by other determinations right now; retry the same idempotency key`,
  );
}

/** A policy's determinations claiming together (`claimCovers`' arguments). */
export interface PolicyClaims {
  terms: CoverTerms;
  requests: readonly CoverRequest[];
}

/** One policy's answer in `claimCoversOfPolicies`: its amounts, or why it has none. */
export type PolicyClaimResult = { taken: CoverTaken[] } | { error: unknown };

/**
 * `claimCovers` for several policies at once (the policies of an ops-door batch), with the
 * round trips of a batch rather than of each policy: every policy's first attempt reads its
 * cover in one `findMany` and the policies' first covers are created in one `createMany`;
 * claims on an existing cover are appended (one conditional write each, in parallel). A policy
 * whose write lost a race goes on alone through `claimCovers`, which re-reads its cover: each
 * policy's claims stay one compare-and-set of its own cover, so the amounts are those of
 * `claimCovers` policy by policy. Answers are in the order of `policies`; one policy's failure
 * (a cover opened with other terms, a store error) is its own.
 */
export async function claimCoversOfPolicies(
  store: CoverStore,
  policies: readonly PolicyClaims[],
  options: ClaimCoverOptions = {},
): Promise<PolicyClaimResult[]> {
  const ids = policies.map((p) => p.terms.policyId);
  if (new Set(ids).size !== ids.length) throw new Error('claimCoversOfPolicies: a policy is given twice');
  let found: Map<string, CoverDoc>;
  try {
    found = await store.findMany(ids);
  } catch (error) {
    return policies.map(() => ({ error }));
  }
  const plans = policies.map(({ terms, requests }) => {
    try {
      checkRequests(terms, requests);
      const cover = found.get(terms.policyId) ?? null;
      return { cover, plan: planClaims(cover, terms, requests) };
    } catch (error) {
      return { error };
    }
  });
  const firsts = plans.flatMap((p, i) =>
    'plan' in p && p.cover === null && p.plan.fresh.length > 0
      ? [firstCover(policies[i]?.terms as CoverTerms, p.plan)]
      : [],
  );
  let created: Set<string> | { error: unknown } = new Set();
  if (firsts.length > 0) created = await store.createMany(firsts).catch((error: unknown) => ({ error }));
  return Promise.all(
    plans.map(async (p, i): Promise<PolicyClaimResult> => {
      if ('error' in p) return { error: p.error };
      const { terms, requests } = policies[i] as PolicyClaims;
      try {
        if (p.plan.fresh.length === 0) return { taken: p.plan.taken };
        if (p.cover === null) {
          if (!(created instanceof Set)) return { error: created.error };
          if (created.has(terms.policyId)) return { taken: p.plan.taken };
        } else if (await store.append(terms.policyId, p.cover.seq, p.plan.owed.toString(), p.plan.fresh)) {
          return { taken: p.plan.taken };
        }
        return { taken: await claimCovers(store, terms, requests, options) };
      } catch (error) {
        return { error };
      }
    }),
  );
}

function checkRequests(terms: CoverTerms, requests: readonly CoverRequest[]): void {
  const sumInsured = terms.sumInsuredMinor;
  for (const { uncappedMinor: uncapped } of requests) {
    if (sumInsured < 0n || uncapped < 0n || uncapped > sumInsured) {
      throw new Error(
        `claimCover: uncapped ${uncapped} must lie between 0 and the sum insured ${sumInsured} (policy ${terms.policyId})`,
      );
    }
  }
}

/** What a set of claims takes from a cover as read: the answers, the claims to write, the new total. */
interface ClaimPlan {
  taken: CoverTaken[];
  fresh: CoverClaim[];
  owed: bigint;
}

/**
 * The claims, in order, against the cover as read (null before the first claim): a
 * determination that already claimed gets its claim back, one given twice gets one answer.
 */
function planClaims(cover: CoverDoc | null, terms: CoverTerms, requests: readonly CoverRequest[]): ClaimPlan {
  if (cover) assertSameCover(cover, terms);
  const sumInsured = terms.sumInsuredMinor;
  const stored = new Map((cover?.claims ?? []).map((claim) => [claim.determinationId, claim]));
  const answered = new Map<string, CoverTaken>();
  let owed = cover ? BigInt(cover.owedMinor) : 0n;
  const fresh: CoverClaim[] = [];
  const taken = requests.map(({ determinationId, uncappedMinor: uncapped }) => {
    const earlier = stored.get(determinationId);
    if (earlier) return takenFrom(earlier);
    const known = answered.get(determinationId);
    if (known) return known;
    const remainingBefore = sumInsured - owed;
    // biome-ignore lint/complexity/useMathMinMax: bigints (Math.min takes numbers only)
    const amount = uncapped < remainingBefore ? uncapped : remainingBefore;
    const answer: CoverTaken = {
      amountMinor: amount,
      uncappedMinor: uncapped,
      remainingBeforeMinor: remainingBefore,
      capped: amount < uncapped,
    };
    // A 0 is not written (see claimCover), but its twice-given id must still get this answer.
    answered.set(determinationId, answer);
    if (amount === 0n) return answer;
    owed += amount;
    fresh.push({
      determinationId,
      amountMinor: amount.toString(),
      uncappedMinor: uncapped.toString(),
      remainingBeforeMinor: remainingBefore.toString(),
      claimedAt: terms.at,
    });
    return answer;
  });
  return { taken, fresh, owed };
}

function firstCover(terms: CoverTerms, plan: ClaimPlan): CoverDoc {
  return {
    _id: terms.policyId,
    organizationId: terms.organizationId,
    currency: terms.currency,
    exponent: terms.exponent,
    sumInsuredMinor: terms.sumInsuredMinor.toString(),
    owedMinor: plan.owed.toString(),
    seq: 1,
    claims: plan.fresh,
  };
}

/** The plan's one conditional write (none when it takes nothing); false when another claim wrote first. */
async function written(store: CoverStore, cover: CoverDoc | null, terms: CoverTerms, plan: ClaimPlan) {
  if (plan.fresh.length === 0) return true;
  return cover
    ? store.append(terms.policyId, cover.seq, plan.owed.toString(), plan.fresh)
    : store.create(firstCover(terms, plan));
}

function takenFrom(claim: CoverClaim): CoverTaken {
  const amount = BigInt(claim.amountMinor);
  const uncapped = BigInt(claim.uncappedMinor);
  return {
    amountMinor: amount,
    uncappedMinor: uncapped,
    remainingBeforeMinor: BigInt(claim.remainingBeforeMinor),
    capped: amount < uncapped,
  };
}

/**
 * The cover was opened with the policy's terms; a policy that now says otherwise would make
 * the cap wrong in a way no one could see. Refuse rather than guess.
 */
function assertSameCover(cover: CoverDoc, input: CoverTerms): void {
  const stored = [cover.organizationId, cover.currency, cover.exponent, cover.sumInsuredMinor];
  const given = [input.organizationId, input.currency, input.exponent, input.sumInsuredMinor.toString()];
  if (stored.some((value, i) => value !== given[i])) {
    throw new Error(
      `the cover of policy ${input.policyId} was opened as ${stored.join(' / ')}, the policy now says ${given.join(' / ')}`,
    );
  }
}
