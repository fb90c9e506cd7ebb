import { createHash, randomUUID } from 'node:crypto';
import {
  type DeterminationIngestInput,
  determinationIngestInput,
  type PartnerSettlementStatus,
} from '@parametric/contracts';
import { canonicalBytes } from '@parametric/determination-verify';
import { createEvent, outboxInsert, outboxWritten } from '@parametric/events';
import { AppError, type FieldError, fieldErrors } from '@parametric/http';
import { isDuplicateKey, writeErrorsOf } from '@parametric/mongo';
import { type JobOutboxEntry, jobOutboxInsert, outboxJob, payoutOriginationJobId } from '@parametric/queue';
import type { Clock } from '../clock';
import {
  type CoverRequest,
  type CoverTaken,
  claimCoversOfPolicies,
  type PolicyClaimResult,
} from '../cover/claim';
import { owedFigure, uncappedOwedMinor } from '../determinations/amount';
import type { DeterminationDoc } from '../determinations/model';
import { damageSummaryJob } from '../determinations/summaries';
import { deliveredEventData } from '../determinations/views';
import type { DeterminationMetrics } from '../metrics';
import type { AllDeterminations } from '../repositories';
import type { SigningKeys } from '../signing/keys';
import { evidenceHash, type SignedDeterminationPayload, signDetermination } from '../signing/sign';
import { type Attribution, attribute } from './attribution';
import type { PolicyLookupMany, PolicySnapshot } from './policies';

export interface IngestDeps {
  /** Across organizations: ingestion finds the organization through the policy. */
  data: Pick<AllDeterminations, 'determinations' | 'evidence' | 'ingestionKeys' | 'covers'>;
  /** Every policy an ingestion needs, in one look-up however many determinations it holds. */
  lookupPolicies: PolicyLookupMany;
  /** Signs the determinations of live policies. */
  keys: SigningKeys;
  /**
   * Signs the determinations of sandbox organizations' policies; without them (production with
   * no SANDBOX_SIGNING_KEYS) such a determination is refused, never signed with a live key.
   */
  sandboxKeys?: SigningKeys;
  reportDueSeconds: number;
  now: Clock;
  /** Counts each determination this ingestion inserted (never a replay): issued by tier, or unattributed. */
  metrics?: Pick<DeterminationMetrics, 'issued' | 'unattributed'>;
}

export interface Ingested {
  /** True when the key was already ingested with this content: nothing was written or emitted. */
  replayed: boolean;
  determination: DeterminationDoc;
}

/** An assessment may be at most this far in the future (clock skew between pipeline and us). */
const ASSESSED_AT_SKEW_MS = 5 * 60_000;

/**
 * Ingests one assessment: the ops door and the `determination-ingest` queue. The batch door
 * runs the same steps (`ingestMany`) for all its items at once.
 */
export async function ingestDetermination(
  raw: DeterminationIngestInput,
  deps: IngestDeps,
): Promise<Ingested> {
  const [outcome] = await ingestMany([raw], deps);
  if (!outcome || 'error' in outcome) throw outcome?.error;
  return outcome.ingested;
}

/** What became of one assessment: ingested (or replayed), or the error that refused it. */
type Outcome = { ingested: Ingested } | { error: unknown };

/** An assessment on its way through `ingestMany`. */
interface Item {
  at: number;
  input: DeterminationIngestInput;
  fingerprint: string;
  determinationId: string;
}

/**
 * Ingests assessments, the outcomes in their order; each is ingested or refused on its own, as
 * if alone. Idempotent on `idempotencyKey` and race-safe: the keys are claimed first (fixing
 * each determination id and content fingerprint), then the records are inserted under those ids
 * with their events and jobs in the same document, so any number of parallel ingestions of one
 * key make one determination and one event. In between, attributed determinations take their
 * amounts owed from their policies' covers (`claimCovers`, idempotent on the determination id,
 * in the assessments' order): what each signs is its capped amount.
 *
 * Every step is one round trip for all the assessments (claims, replays, the policy look-up,
 * evidence, covers per policy, the insert): a batch costs about what one assessment does.
 */
async function ingestMany(raws: readonly DeterminationIngestInput[], deps: IngestDeps): Promise<Outcome[]> {
  const outcomes: Outcome[] = new Array(raws.length);
  const receivedAt = deps.now();
  const fail = (items: readonly Item[], error: unknown) => {
    for (const item of items) outcomes[item.at] = { error };
  };

  const prepared: Omit<Item, 'determinationId'>[] = [];
  raws.forEach((raw, at) => {
    try {
      const input = normalized(raw);
      if (Date.parse(input.assessedAt) > receivedAt.getTime() + ASSESSED_AT_SKEW_MS) {
        throw AppError.invalid('Invalid determination', [
          { field: 'assessedAt', message: 'must not be in the future' },
        ]);
      }
      prepared.push({ at, input, fingerprint: sha256Hex(canonicalBytes(input)) });
    } catch (error) {
      outcomes[at] = { error };
    }
  });

  let claims: Map<string, KeyClaim>;
  try {
    claims = await claimKeys(deps, prepared, receivedAt);
  } catch (err) {
    fail(prepared as Item[], err);
    return outcomes;
  }

  // Per key, the first assessment with the claimed content goes on; later ones with the same
  // content are replays of it, as a parallel ingestion of that key would be.
  const leaders = new Map<string, Item>();
  const followers: Item[] = [];
  const claimedNow: Item[] = [];
  const claimedBefore: Item[] = [];
  for (const { at, input, fingerprint } of prepared) {
    const claim = claims.get(input.idempotencyKey);
    if (!claim) {
      outcomes[at] = { error: new Error(`ingestion key ${input.idempotencyKey} vanished after its claim`) };
      continue;
    }
    if (claim.fingerprint !== fingerprint) {
      outcomes[at] = {
        error: AppError.conflict(
          `Idempotency key "${input.idempotencyKey}" was already used for a different determination`,
          [{ field: 'idempotencyKey', message: 'already used with different content' }],
        ),
      };
      continue;
    }
    const item = { at, input, fingerprint, determinationId: claim.determinationId };
    if (leaders.has(input.idempotencyKey)) {
      followers.push(item);
      continue;
    }
    leaders.set(input.idempotencyKey, item);
    (claim.claimedNow ? claimedNow : claimedBefore).push(item);
  }

  // A key claimed just now has no record yet; an older claim may (a replay) or may not (its
  // first ingestion is still running, or crashed before the insert).
  const fresh = [...claimedNow];
  if (claimedBefore.length > 0) {
    try {
      const existing = await findDeterminations(
        deps,
        claimedBefore.map((i) => i.determinationId),
      );
      for (const item of claimedBefore) {
        const determination = existing.get(item.determinationId);
        if (determination) outcomes[item.at] = { ingested: { replayed: true, determination } };
        else fresh.push(item);
      }
    } catch (err) {
      fail(claimedBefore, err);
    }
  }
  fresh.sort((a, b) => a.at - b.at);
  if (fresh.length > 0) await ingestFresh(fresh, deps, receivedAt, outcomes);

  for (const follower of followers) {
    const leader = outcomes[(leaders.get(follower.input.idempotencyKey) as Item).at] as Outcome;
    outcomes[follower.at] =
      'error' in leader
        ? leader
        : { ingested: { replayed: true, determination: leader.ingested.determination } };
  }
  return outcomes;
}

/** Attributes, caps, signs and inserts the items whose keys have no record yet, in their order. */
async function ingestFresh(items: Item[], deps: IngestDeps, receivedAt: Date, outcomes: Outcome[]) {
  const fail = (some: readonly Item[], error: unknown) => {
    for (const item of some) outcomes[item.at] = { error };
  };
  let found: Found;
  try {
    found = await lookUpPolicies(items, deps);
  } catch (err) {
    fail(items, err);
    return;
  }
  const attributed: { item: Item; attribution: Attribution; hashOfEvidence: string }[] = [];
  for (const item of items) {
    const attribution = attribute(item.input, found);
    // Refused before anything is written for it: no evidence, no cover taken.
    if (attribution.attributed && !signingKeysOf(attribution.policy, deps)) {
      outcomes[item.at] = { error: noSandboxKeys(attribution.policy, item.input) };
      continue;
    }
    attributed.push({ item, attribution, hashOfEvidence: evidenceHash(item.input.evidence) });
  }
  if (attributed.length === 0) return;

  // Written first: a determination is never without its evidence. Same id, same content.
  try {
    await tolerateDuplicates(
      deps.data.evidence.collection.bulkWrite(
        attributed.map(({ item, attribution, hashOfEvidence }) => ({
          updateOne: {
            filter: { _id: item.determinationId },
            update: {
              $setOnInsert: {
                organizationId: attribution.attributed ? attribution.policy.organizationId : null,
                evidence: item.input.evidence,
                evidenceHash: hashOfEvidence,
                createdAt: receivedAt,
              },
            },
            upsert: true,
          },
        })) as never[],
        { ordered: false, ignoreUndefined: true },
      ),
    );
  } catch (err) {
    fail(
      attributed.map(({ item }) => item),
      err,
    );
    return;
  }

  // Taken before signing: the capped amount is the one signed.
  const covers = await takeCovers(attributed, deps);
  const docs: { item: Item; doc: ReturnType<typeof recordOf> }[] = [];
  for (const { item, attribution, hashOfEvidence } of attributed) {
    const cover = covers.get(item.at);
    if (cover && 'error' in cover) {
      outcomes[item.at] = cover;
      continue;
    }
    try {
      docs.push({ item, doc: recordOf(item, attribution, hashOfEvidence, receivedAt, deps, cover?.taken) });
    } catch (err) {
      outcomes[item.at] = { error: err };
    }
  }
  if (docs.length > 0) await insertDeterminations(docs, deps, outcomes);
}

type Found = (reference: { policyId: string } | { policyNumber: string }) => PolicySnapshot | null;

/** One look-up for every policy the items name; the answer resolves each reference. */
async function lookUpPolicies(items: readonly Item[], deps: IngestDeps): Promise<Found> {
  const ids = new Set<string>();
  const numbers = new Set<string>();
  for (const { input } of items) {
    if (input.policyId !== undefined) ids.add(input.policyId);
    else numbers.add(input.policyNumber as string);
  }
  const policies = await deps.lookupPolicies({ policyIds: [...ids], policyNumbers: [...numbers] });
  const byId = new Map(policies.map((p) => [p.id, p]));
  const byNumber = new Map(policies.map((p) => [p.policyNumber, p]));
  return (reference) =>
    ('policyId' in reference ? byId.get(reference.policyId) : byNumber.get(reference.policyNumber)) ?? null;
}

/**
 * What each attributed determination may owe given what its policy's earlier determinations
 * owe: one compare-and-set per policy for all of its determinations, in the items' order. None
 * is claimed when the amount cannot be computed (a Tier 1 currency without a registered
 * exponent: no amount, so nothing to cap).
 */
async function takeCovers(
  attributed: readonly { item: Item; attribution: Attribution }[],
  deps: IngestDeps,
): Promise<Map<number, { taken: CoverTaken } | { error: unknown }>> {
  const byPolicy = new Map<string, { policy: PolicySnapshot; claims: (CoverRequest & { at: number })[] }>();
  for (const { item, attribution } of attributed) {
    if (!attribution.attributed) continue;
    const { policy } = attribution;
    const uncapped = uncappedOwedMinor(policy, item.input.damagePercentBp);
    if (uncapped === null) continue;
    let group = byPolicy.get(policy.id);
    if (!group) {
      group = { policy, claims: [] };
      byPolicy.set(policy.id, group);
    }
    group.claims.push({ at: item.at, determinationId: item.determinationId, uncappedMinor: uncapped });
  }
  const groups = [...byPolicy.values()];
  const at = deps.now();
  const results = await claimCoversOfPolicies(
    deps.data.covers,
    groups.map(({ policy, claims }) => ({
      terms: {
        policyId: policy.id,
        organizationId: policy.organizationId,
        currency: policy.currency,
        exponent: policy.exponent,
        sumInsuredMinor: BigInt(policy.sumInsuredMinor),
        at,
      },
      requests: claims,
    })),
  );
  const covers = new Map<number, { taken: CoverTaken } | { error: unknown }>();
  groups.forEach(({ claims }, g) => {
    const result = results[g] as PolicyClaimResult;
    claims.forEach((claim, i) => {
      covers.set(claim.at, 'taken' in result ? { taken: result.taken[i] as CoverTaken } : result);
    });
  });
  return covers;
}

/** The record to insert: signed when attributed, the reason when not. */
function recordOf(
  item: Item,
  attribution: Attribution,
  hashOfEvidence: string,
  receivedAt: Date,
  deps: IngestDeps,
  cover: CoverTaken | undefined,
) {
  const { input } = item;
  const base = {
    _id: item.determinationId,
    idempotencyKey: input.idempotencyKey,
    fingerprint: item.fingerprint,
    kind: input.kind,
    methodologyVersion: input.methodologyVersion,
    triggered: input.triggered,
    damagePercentBp: input.damagePercentBp,
    assessedAt: new Date(input.assessedAt),
    receivedAt,
    evidenceHash: hashOfEvidence,
  };
  return attribution.attributed
    ? issued(base, input, attribution.policy, deps, cover)
    : {
        ...base,
        status: 'UNATTRIBUTED' as const,
        unattributedReason: attribution.reason,
        organizationId: null,
        policyId: attribution.policy?.id ?? input.policyId ?? null,
        policyNumber: attribution.policy?.policyNumber ?? input.policyNumber ?? null,
      };
}

/**
 * One unordered insert of every record, each with its event and jobs (the outbox fields the
 * relays read), through the driver: the records are built whole here, with the schema's
 * defaults, so no mongoose document is made of each. A record whose id is taken lost to a
 * parallel ingestion of its key: the stored one is its answer, a replay.
 */
async function insertDeterminations(
  docs: readonly { item: Item; doc: ReturnType<typeof recordOf> }[],
  deps: IngestDeps,
  outcomes: Outcome[],
) {
  const model = deps.data.determinations;
  const records = docs.map(({ doc }) => model.applyDefaults({ ...doc }) as unknown as DeterminationDoc);
  let failed = new Map<number, unknown>();
  try {
    await model.collection.insertMany(records as never[], { ordered: false, ignoreUndefined: true });
  } catch (err) {
    const perItem = writeErrorsOf(err);
    if (!perItem) {
      for (const { item } of docs) outcomes[item.at] = { error: err };
      return;
    }
    failed = perItem;
  } finally {
    // The inserts bypass mongoose's hooks, so wake the relays as those hooks would, naming the
    // documents (one that failed to insert is simply not found pending).
    for (const field of ['outboxPending', 'jobOutboxPending'] as const) {
      const ids = records.filter((r) => r[field]).map((r) => r._id);
      if (ids.length > 0) outboxWritten(model.collection, field, ids);
    }
  }
  const lost = docs.filter((_, i) => isDuplicateKey(failed.get(i)));
  let winners = new Map<string, DeterminationDoc>();
  if (lost.length > 0) {
    try {
      winners = await findDeterminations(
        deps,
        lost.map(({ item }) => item.determinationId),
      );
    } catch (err) {
      for (const { item } of lost) outcomes[item.at] = { error: err };
    }
  }
  docs.forEach(({ item }, i) => {
    const error = failed.get(i);
    const record = records[i] as DeterminationDoc;
    if (error === undefined) {
      if (record.status === 'ISSUED') deps.metrics?.issued(record.settlementMode as never);
      else deps.metrics?.unattributed();
      outcomes[item.at] = { ingested: { replayed: false, determination: record } };
      return;
    }
    if (outcomes[item.at]) return; // the winners' read failed
    const winner = isDuplicateKey(error) ? winners.get(item.determinationId) : undefined;
    outcomes[item.at] = winner ? { ingested: { replayed: true, determination: winner } } : { error };
  });
}

async function findDeterminations(deps: IngestDeps, ids: readonly string[]) {
  const found = await deps.data.determinations
    .find({ _id: { $in: [...new Set(ids)] } })
    .lean<DeterminationDoc[]>();
  return new Map(found.map((d) => [d._id, d]));
}

/** The signed record, its `determination.delivered` event and the jobs it causes. */
function issued(
  base: {
    _id: string;
    triggered: boolean;
    damagePercentBp: number;
    assessedAt: Date;
    receivedAt: Date;
    evidenceHash: string;
  },
  input: DeterminationIngestInput,
  policy: PolicySnapshot,
  deps: IngestDeps,
  cover: CoverTaken | undefined,
) {
  const { amountOwed, amountOwedUnavailableReason, owedMinor } = owedFigure(
    policy,
    input.damagePercentBp,
    cover,
  );
  const tier1 = policy.settlementMode === 'DETERMINATION';
  const payload: SignedDeterminationPayload = {
    determinationId: base._id,
    policyId: policy.id,
    policyNumber: policy.policyNumber,
    kind: input.kind,
    methodologyVersion: input.methodologyVersion,
    triggered: input.triggered,
    damagePercentBp: input.damagePercentBp,
    assessedAt: new Date(input.assessedAt).toISOString(),
    settlementMode: policy.settlementMode,
    settledByMicrocrop: !tier1,
    amountOwed,
    ...(amountOwedUnavailableReason ? { amountOwedUnavailableReason } : {}),
    evidenceHash: base.evidenceHash,
  };
  const keys = signingKeysOf(policy, deps);
  if (!keys) throw noSandboxKeys(policy, input); // ingestFresh refused it before any write
  const signature = signDetermination(payload, keys);
  const issuedAt = base.receivedAt;
  // Nothing owed (a 0 amount, or the cover exhausted by earlier determinations): no report is
  // expected, as for an untriggered one. Without a computable amount one is.
  const reportDue = tier1 && input.triggered && (owedMinor === null || owedMinor > 0n);
  const partnerSettlementStatus: PartnerSettlementStatus = tier1
    ? reportDue
      ? 'PENDING'
      : 'NOT_REQUIRED'
    : 'NOT_APPLICABLE';
  const record = {
    ...base,
    status: 'ISSUED' as const,
    unattributedReason: null,
    organizationId: policy.organizationId,
    policyId: policy.id,
    policyNumber: policy.policyNumber,
    issuedAt,
    settlementMode: policy.settlementMode,
    currency: policy.currency,
    owedMinor: owedMinor === null ? null : owedMinor.toString(),
    // For ops: why the amount is what it is (the cap's inputs); not shown to partners.
    uncappedOwedMinor: cover ? cover.uncappedMinor.toString() : null,
    coverRemainingBeforeMinor: cover ? cover.remainingBeforeMinor.toString() : null,
    signed: payload,
    canonicalPayload: signature.canonicalPayload,
    canonicalHash: signature.canonicalHash,
    signature: signature.signature,
    kid: signature.kid,
    partnerSettlementStatus,
    dueAt: reportDue ? new Date(issuedAt.getTime() + deps.reportDueSeconds * 1000) : null,
  };
  const event = createEvent(
    'determination.delivered',
    policy.organizationId,
    deliveredEventData(record as unknown as DeterminationDoc),
  );
  const jobs: JobOutboxEntry[] = [damageSummaryJob(record)];
  // Tier 2: one payout per triggered determination with something to pay (docs/payments.md,
  // "Origination"), of its capped amount: a determination on exhausted cover originates nothing.
  if (!tier1 && input.triggered && owedMinor !== null && owedMinor > 0n) {
    jobs.push(
      outboxJob(
        'payout-originations',
        {
          determinationId: base._id,
          policyId: policy.id,
          organizationId: policy.organizationId,
        },
        payoutOriginationJobId(base._id),
      ),
    );
  }
  return { ...record, ...outboxInsert(event), ...jobOutboxInsert(...jobs) };
}

/**
 * The keys a policy's determinations are signed with: the sandbox keys for a sandbox
 * organization's policy, whichever door the assessment came in by; undefined when this
 * deployment has none (ingestFresh refuses the assessment).
 */
function signingKeysOf(policy: PolicySnapshot, deps: IngestDeps): SigningKeys | undefined {
  return policy.environment === 'sandbox' ? deps.sandboxKeys : deps.keys;
}

function noSandboxKeys(policy: PolicySnapshot, input: DeterminationIngestInput): AppError {
  return AppError.invalid(
    `Policy ${policy.policyNumber} belongs to a sandbox organization and this deployment has no sandbox signing keys (SANDBOX_SIGNING_KEYS): its determinations are never signed with a live key`,
    [
      {
        field: input.policyId !== undefined ? 'policyId' : 'policyNumber',
        message: 'names a sandbox policy; this deployment signs no sandbox determinations',
      },
    ],
  );
}

interface KeyClaim {
  fingerprint: string;
  determinationId: string;
  claimedNow: boolean;
}

/**
 * Claims every item's key in one unordered write, then reads the claims back: a key's claim is
 * ours (claimed now) or an earlier or parallel ingestion's. The first item of a key sets what a
 * new claim holds.
 */
async function claimKeys(
  deps: IngestDeps,
  items: readonly { input: DeterminationIngestInput; fingerprint: string }[],
  at: Date,
): Promise<Map<string, KeyClaim>> {
  const ours = new Map<string, { fingerprint: string; determinationId: string; createdAt: Date }>();
  for (const { input, fingerprint } of items) {
    if (!ours.has(input.idempotencyKey)) {
      ours.set(input.idempotencyKey, { fingerprint, determinationId: randomUUID(), createdAt: at });
    }
  }
  if (ours.size === 0) return new Map();
  const keys = deps.data.ingestionKeys.collection;
  // Two upserts of one new key: the loser's insert hits the unique _id; the winner's claim holds.
  await tolerateDuplicates(
    keys.bulkWrite(
      [...ours].map(([key, claim]) => ({
        updateOne: { filter: { _id: key }, update: { $setOnInsert: claim }, upsert: true },
      })) as never[],
      { ordered: false },
    ),
  );
  const stored = await keys
    .find<{ _id: string; fingerprint: string; determinationId: string }>({
      _id: { $in: [...ours.keys()] } as never,
    })
    .toArray();
  return new Map(
    stored.map((claim) => [
      claim._id,
      {
        fingerprint: claim.fingerprint,
        determinationId: claim.determinationId,
        claimedNow: claim.determinationId === ours.get(claim._id)?.determinationId,
      },
    ]),
  );
}

/** An unordered write whose only refusals are duplicate keys (a parallel writer's) succeeded. */
async function tolerateDuplicates(write: Promise<unknown>): Promise<void> {
  try {
    await write;
  } catch (err) {
    const perItem = writeErrorsOf(err);
    if (!perItem || [...perItem.values()].some((e) => !isDuplicateKey(e))) throw err;
  }
}

/**
 * Strings in Unicode NFC, so the same text typed two ways is the same content (the fingerprint)
 * and signs to the same bytes (RFC 8785 does not normalize).
 */
function normalized(input: DeterminationIngestInput): DeterminationIngestInput {
  return nfc(input) as DeterminationIngestInput;
}

function nfc(value: unknown): unknown {
  if (typeof value === 'string') return value.normalize('NFC');
  if (Array.isArray(value)) return value.map(nfc);
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, nfc(v)]));
  }
  return value;
}

function sha256Hex(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

export interface BatchItemResult {
  index: number;
  status: number;
  replayed?: boolean;
  determination?: DeterminationDoc;
  error?: { code: string; message: string; details?: FieldError[] };
}

/**
 * The batch door: each item validated and ingested on its own (a refused item refuses nothing
 * else), all together (`ingestMany`), results in the items' order.
 */
export async function ingestBatch(
  items: readonly unknown[],
  deps: IngestDeps,
  options: { onUnexpected: (err: unknown, index: number) => void },
): Promise<BatchItemResult[]> {
  const results: BatchItemResult[] = new Array(items.length);
  const valid: { index: number; input: DeterminationIngestInput }[] = [];
  items.forEach((item, index) => {
    const parsed = determinationIngestInput.safeParse(item);
    if (parsed.success) {
      valid.push({ index, input: parsed.data });
      return;
    }
    results[index] = {
      index,
      status: 400,
      error: {
        code: 'INVALID_INPUT',
        message: 'Invalid determination',
        details: fieldErrors(parsed.error, '(item)'),
      },
    };
  });
  const outcomes = await ingestMany(
    valid.map((v) => v.input),
    deps,
  );
  valid.forEach(({ index }, i) => {
    results[index] = resultOf(outcomes[i] as Outcome, index, options.onUnexpected);
  });
  return results;
}

function resultOf(
  outcome: Outcome,
  index: number,
  onUnexpected: (err: unknown, index: number) => void,
): BatchItemResult {
  if ('ingested' in outcome) {
    const { replayed, determination } = outcome.ingested;
    return { index, status: replayed ? 200 : 201, replayed, determination };
  }
  const err = outcome.error;
  if (err instanceof AppError) {
    return {
      index,
      status: err.status,
      error: {
        code: err.code,
        message: err.message,
        // Our domain errors carry field details only.
        ...(Array.isArray(err.details) ? { details: err.details as FieldError[] } : {}),
      },
    };
  }
  onUnexpected(err, index);
  return {
    index,
    status: 500,
    error: { code: 'INTERNAL_ERROR', message: 'This item could not be ingested' },
  };
}
