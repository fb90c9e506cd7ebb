import { createHash, randomUUID } from 'node:crypto';
import {
  type DeterminationIngestInput,
  determinationIngestInput,
  type PartnerSettlementStatus,
} from '@parametric/contracts';
import { canonicalBytes } from '@parametric/determination-verify';
import { createEvent, outboxInsert } from '@parametric/events';
import { AppError, type FieldError, fieldErrors } from '@parametric/http';
import { isDuplicateKey } from '@parametric/mongo';
import { type JobOutboxEntry, jobOutboxInsert, outboxJob, payoutOriginationJobId } from '@parametric/queue';
import type { Clock } from '../clock';
import { type CoverTaken, claimCover } from '../cover/claim';
import { owedFigure, uncappedOwedMinor } from '../determinations/amount';
import type { DeterminationDoc } from '../determinations/model';
import { damageSummaryJob } from '../determinations/summaries';
import { deliveredEventData } from '../determinations/views';
import type { DeterminationMetrics } from '../metrics';
import type { AllDeterminations } from '../repositories';
import type { SigningKeys } from '../signing/keys';
import { evidenceHash, type SignedDeterminationPayload, signDetermination } from '../signing/sign';
import { attribute } from './attribution';
import type { PolicyLookup, PolicySnapshot } from './policies';

export interface IngestDeps {
  /** Across organizations: ingestion finds the organization through the policy. */
  data: Pick<AllDeterminations, 'determinations' | 'evidence' | 'ingestionKeys' | 'covers'>;
  lookupPolicy: PolicyLookup;
  keys: SigningKeys;
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
 * Ingests one assessment: the one domain function behind the ops door, the batch door and
 * the `determination-ingest` queue. Idempotent on `idempotencyKey` and race-safe: the key is
 * claimed first (fixing the determination id and the content fingerprint), then the record is
 * inserted under that id with its event and jobs in the same write, so any number of parallel
 * ingestions of one key make one determination and one event. In between, an attributed
 * determination takes its amount owed from the policy's cover (`claimCover`, idempotent on the
 * determination id): what it signs is the capped amount.
 */
export async function ingestDetermination(
  raw: DeterminationIngestInput,
  deps: IngestDeps,
): Promise<Ingested> {
  const input = normalized(raw);
  const receivedAt = deps.now();
  if (Date.parse(input.assessedAt) > receivedAt.getTime() + ASSESSED_AT_SKEW_MS) {
    throw AppError.invalid('Invalid determination', [
      { field: 'assessedAt', message: 'must not be in the future' },
    ]);
  }
  const fingerprint = sha256Hex(canonicalBytes(input));
  const claim = await claimKey(deps, input.idempotencyKey, fingerprint, receivedAt);
  if (claim.fingerprint !== fingerprint) {
    throw AppError.conflict(
      `Idempotency key "${input.idempotencyKey}" was already used for a different determination`,
      [{ field: 'idempotencyKey', message: 'already used with different content' }],
    );
  }
  // A key claimed just now has no record yet; an older claim may (a replay) or may not (its
  // first ingestion is still running, or crashed before the insert).
  if (!claim.claimedNow) {
    const existing = await deps.data.determinations.findById(claim.determinationId).lean<DeterminationDoc>();
    if (existing) return { replayed: true, determination: existing };
  }

  const determinationId = claim.determinationId;
  const attribution = await attribute(input, deps.lookupPolicy);
  const hashOfEvidence = evidenceHash(input.evidence);
  // Written first: a determination is never without its evidence. Same id, same content.
  await deps.data.evidence.updateOne(
    { _id: determinationId },
    {
      $setOnInsert: {
        organizationId: attribution.attributed ? attribution.policy.organizationId : null,
        evidence: input.evidence,
        evidenceHash: hashOfEvidence,
        createdAt: receivedAt,
      },
    },
    { upsert: true },
  );

  const base = {
    _id: determinationId,
    idempotencyKey: input.idempotencyKey,
    fingerprint,
    kind: input.kind,
    methodologyVersion: input.methodologyVersion,
    triggered: input.triggered,
    damagePercentBp: input.damagePercentBp,
    assessedAt: new Date(input.assessedAt),
    receivedAt,
    evidenceHash: hashOfEvidence,
  };
  // Taken before signing: the capped amount is the one signed.
  const cover = attribution.attributed
    ? await takeCover(determinationId, input, attribution.policy, deps)
    : undefined;
  const doc = attribution.attributed
    ? issued(base, input, attribution.policy, deps, cover)
    : {
        ...base,
        status: 'UNATTRIBUTED' as const,
        unattributedReason: attribution.reason,
        organizationId: null,
        policyId: attribution.policy?.id ?? input.policyId ?? null,
        policyNumber: attribution.policy?.policyNumber ?? input.policyNumber ?? null,
      };
  try {
    const created = await deps.data.determinations.create(doc);
    if (doc.status === 'ISSUED') deps.metrics?.issued(doc.settlementMode);
    else deps.metrics?.unattributed();
    return { replayed: false, determination: created.toObject() as DeterminationDoc };
  } catch (err) {
    if (!isDuplicateKey(err)) throw err;
    // A parallel ingestion of the same key inserted first: its record is the one.
    const winner = await deps.data.determinations.findById(determinationId).lean<DeterminationDoc>();
    if (!winner) throw err;
    return { replayed: true, determination: winner };
  }
}

/**
 * What the determination may owe given what the policy's earlier determinations owe. None is
 * claimed when the amount cannot be computed (a Tier 1 currency without a registered exponent:
 * no amount, so nothing to cap).
 */
async function takeCover(
  determinationId: string,
  input: DeterminationIngestInput,
  policy: PolicySnapshot,
  deps: IngestDeps,
): Promise<CoverTaken | undefined> {
  const uncapped = uncappedOwedMinor(policy, input.damagePercentBp);
  if (uncapped === null) return undefined;
  return claimCover(deps.data.covers, {
    policyId: policy.id,
    organizationId: policy.organizationId,
    currency: policy.currency,
    exponent: policy.exponent,
    sumInsuredMinor: BigInt(policy.sumInsuredMinor),
    determinationId,
    uncappedMinor: uncapped,
    at: deps.now(),
  });
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
  const signature = signDetermination(payload, deps.keys);
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

/** Claims the key, or returns the earlier claim (ours or a parallel ingestion's). */
async function claimKey(deps: IngestDeps, key: string, fingerprint: string, at: Date) {
  const { ingestionKeys } = deps.data;
  const claim = { fingerprint, determinationId: randomUUID(), createdAt: at };
  try {
    const stored = await ingestionKeys
      .findOneAndUpdate({ _id: key }, { $setOnInsert: claim }, { upsert: true, returnDocument: 'after' })
      .lean();
    if (stored) return { ...stored, claimedNow: stored.determinationId === claim.determinationId };
  } catch (err) {
    // Two upserts of one new key: the loser's insert hits the unique _id; the winner's claim holds.
    if (!isDuplicateKey(err)) throw err;
  }
  const stored = await ingestionKeys.findById(key).lean();
  if (!stored) throw new Error(`ingestion key ${key} vanished after its claim`);
  return { ...stored, claimedNow: false };
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
 * else), `concurrency` at a time, results in the items' order.
 */
export async function ingestBatch(
  items: readonly unknown[],
  deps: IngestDeps,
  options: { concurrency: number; onUnexpected: (err: unknown, index: number) => void },
): Promise<BatchItemResult[]> {
  const results: BatchItemResult[] = new Array(items.length);
  let next = 0;
  async function lane(): Promise<void> {
    while (next < items.length) {
      const index = next++;
      results[index] = await ingestItem(items[index], index, deps, options.onUnexpected);
    }
  }
  await Promise.all(Array.from({ length: Math.min(options.concurrency, items.length) }, lane));
  return results;
}

async function ingestItem(
  item: unknown,
  index: number,
  deps: IngestDeps,
  onUnexpected: (err: unknown, index: number) => void,
): Promise<BatchItemResult> {
  const parsed = determinationIngestInput.safeParse(item);
  if (!parsed.success) {
    return {
      index,
      status: 400,
      error: {
        code: 'INVALID_INPUT',
        message: 'Invalid determination',
        details: fieldErrors(parsed.error, '(item)'),
      },
    };
  }
  try {
    const { replayed, determination } = await ingestDetermination(parsed.data, deps);
    return { index, status: replayed ? 200 : 201, replayed, determination };
  } catch (err) {
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
}
