import type { ApprovalAction, ApprovalStatus } from '@parametric/contracts';
import type { ApprovalDoc, ApprovalModel } from './model';

/** An operator as an approval names them. */
export interface ApprovalPerson {
  id: string;
  email: string | null;
  role: string;
}

/** What is stored: every status but EXPIRED, which is a PENDING one read after `expiresAt`. */
export type StoredApprovalStatus = Exclude<ApprovalStatus, 'EXPIRED'>;

export interface ApprovalRecord {
  _id: string;
  action: ApprovalAction;
  status: StoredApprovalStatus;
  method: string;
  path: string;
  organizationId: string | null;
  /** The path parameters the action was asked with (`{ id }` for an organization's). */
  params: Record<string, string>;
  request: unknown;
  requestedBy: ApprovalPerson;
  requestedAt: Date;
  expiresAt: Date;
  decidedBy: ApprovalPerson | null;
  decidedAt: Date | null;
  claim: string | null;
  leaseUntil: Date | null;
  reason: string | null;
  result: unknown;
  error: { status: number; code: string; message: string } | null;
}

/** How an approver takes a request to carry it out. */
export interface ApprovalClaim {
  claim: string;
  leaseUntil: Date;
  decidedBy: ApprovalPerson;
  decidedAt: Date;
}

/** How a claim ends: executed, failed (refused), or released back to PENDING (nothing done). */
export type ApprovalSettlement =
  | { status: 'EXECUTED'; result: unknown }
  | { status: 'FAILED'; error: { status: number; code: string; message: string } }
  | { status: 'PENDING' };

export interface ApprovalListFilter {
  status?: ApprovalStatus;
  action?: ApprovalAction;
  /** Where PENDING ends and EXPIRED begins. */
  now: Date;
}

/**
 * The approvals' storage. Each change is one conditional write, so two approvers racing for
 * one request cannot both carry it out (approvals/domain.ts relies on it).
 */
export interface ApprovalStore {
  insert(record: ApprovalRecord): Promise<void>;
  get(id: string): Promise<ApprovalRecord | undefined>;
  /** PENDING and unexpired at `now`, or EXECUTING with its lease run out: EXECUTING under `claim`. */
  claim(id: string, now: Date, claim: ApprovalClaim): Promise<ApprovalRecord | undefined>;
  /** Only while `claim` still holds it. */
  settle(id: string, claim: string, settlement: ApprovalSettlement): Promise<ApprovalRecord | undefined>;
  /** PENDING and unexpired at `now`: REJECTED. */
  reject(
    id: string,
    now: Date,
    decision: { decidedBy: ApprovalPerson; decidedAt: Date; reason: string | null },
  ): Promise<ApprovalRecord | undefined>;
  /** Newest first. */
  list(
    filter: ApprovalListFilter,
    page: { page: number; limit: number },
  ): Promise<{ items: ApprovalRecord[]; total: number }>;
}

/** Stored fields a settlement sets: released, a claim leaves no trace but the audit trail's. */
export function settledFields(settlement: ApprovalSettlement): Partial<ApprovalRecord> {
  if (settlement.status === 'PENDING') {
    return { status: 'PENDING', claim: null, leaseUntil: null, decidedBy: null, decidedAt: null };
  }
  return settlement.status === 'EXECUTED'
    ? { status: 'EXECUTED', result: settlement.result, claim: null, leaseUntil: null }
    : { status: 'FAILED', error: settlement.error, claim: null, leaseUntil: null };
}

/** The approvals in MongoDB (`ops_approvals`). */
export function mongoApprovalStore(model: ApprovalModel): ApprovalStore {
  const record = (doc: ApprovalDoc | null) => (doc ? (doc as unknown as ApprovalRecord) : undefined);
  return {
    insert: async (approval) => {
      await model.create(approval);
    },
    get: async (id) => record(await model.findById(id).lean<ApprovalDoc>()),
    claim: async (id, now, claim) =>
      record(
        await model
          .findOneAndUpdate(
            {
              _id: id,
              $or: [
                { status: 'PENDING', expiresAt: { $gt: now } },
                { status: 'EXECUTING', leaseUntil: { $lte: now } },
              ],
            },
            { $set: { status: 'EXECUTING', ...claim } },
            { returnDocument: 'after' },
          )
          .lean<ApprovalDoc>(),
      ),
    settle: async (id, claim, settlement) =>
      record(
        await model
          .findOneAndUpdate(
            { _id: id, status: 'EXECUTING', claim },
            { $set: settledFields(settlement) },
            { returnDocument: 'after' },
          )
          .lean<ApprovalDoc>(),
      ),
    reject: async (id, now, decision) =>
      record(
        await model
          .findOneAndUpdate(
            { _id: id, status: 'PENDING', expiresAt: { $gt: now } },
            { $set: { status: 'REJECTED', ...decision } },
            { returnDocument: 'after' },
          )
          .lean<ApprovalDoc>(),
      ),
    list: async (filter, page) => {
      const query = mongoFilter(filter);
      const [items, total] = await Promise.all([
        model
          .find(query)
          .sort({ requestedAt: -1, _id: -1 })
          .skip((page.page - 1) * page.limit)
          .limit(page.limit)
          .lean<ApprovalDoc[]>(),
        model.countDocuments(query),
      ]);
      return { items: items as unknown as ApprovalRecord[], total };
    },
  };
}

function mongoFilter(filter: ApprovalListFilter): Record<string, unknown> {
  const query: Record<string, unknown> = {};
  if (filter.action) query.action = filter.action;
  if (filter.status === 'EXPIRED')
    Object.assign(query, { status: 'PENDING', expiresAt: { $lte: filter.now } });
  else if (filter.status === 'PENDING')
    Object.assign(query, { status: 'PENDING', expiresAt: { $gt: filter.now } });
  else if (filter.status) query.status = filter.status;
  return query;
}
