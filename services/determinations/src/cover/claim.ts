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
  /** Creates the cover; false when it already exists (a parallel first claim won). */
  create(cover: CoverDoc): Promise<boolean>;
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
  const sumInsured = terms.sumInsuredMinor;
  for (const { uncappedMinor: uncapped } of requests) {
    if (sumInsured < 0n || uncapped < 0n || uncapped > sumInsured) {
      throw new Error(
        `claimCover: uncapped ${uncapped} must lie between 0 and the sum insured ${sumInsured} (policy ${terms.policyId})`,
      );
    }
  }
  const maxAttempts = options.maxAttempts ?? MAX_ATTEMPTS;
  const pause = options.pause ?? jitteredPause;
  for (let attempt = 1; attempt <= maxAttempts; attempt++) {
    const cover = await store.find(terms.policyId);
    if (cover) assertSameCover(cover, terms);
    const stored = new Map((cover?.claims ?? []).map((claim) => [claim.determinationId, claim]));
    const answered = new Map<string, CoverTaken>();
    const owedBefore = cover ? BigInt(cover.owedMinor) : 0n;
    let owed = owedBefore;
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
      // A 0 is not written (see above), but its twice-given id must still get this answer.
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
    if (fresh.length === 0) return taken;
    const written = cover
      ? await store.append(terms.policyId, cover.seq, owed.toString(), fresh)
      : await store.create({
          _id: terms.policyId,
          organizationId: terms.organizationId,
          currency: terms.currency,
          exponent: terms.exponent,
          sumInsuredMinor: sumInsured.toString(),
          owedMinor: owed.toString(),
          seq: 1,
          claims: fresh,
        });
    if (written) return taken;
    if (attempt < maxAttempts) await pause(attempt);
  }
  throw new AppError(
    'SERVICE_UNAVAILABLE',
    `The cover of policy ${terms.policyId} is being claimed by other determinations right now; retry the same idempotency key`,
  );
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
