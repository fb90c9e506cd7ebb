import { randomUUID } from 'node:crypto';
import { type ApprovalAction, type ApprovalStatus, FOUR_EYES_ROUTES } from '@parametric/contracts';
import { AppError, ERROR_STATUS, type ErrorCode, type OpsCapability } from '@parametric/http';
import { exponentOf, minorFromNumber, parseMinor } from '@parametric/money';
import type { Clock } from '../clock';
import type { ApprovalPerson, ApprovalRecord, ApprovalSettlement, ApprovalStore } from './store';

/**
 * Four eyes on money-moving ops actions (issue 25; docs/ops.md, "Four eyes"). An operator's
 * request for a gated action is kept PENDING; a different operator whose role may take the
 * action approves it, and only then is it carried out, once, with the approver's role.
 *
 * The invariant (test/property/four-eyes.property.test.ts): an action is carried out only after
 * an approval by someone other than its requester holding its capability, before it expired, and
 * at most once however many approvals race — a second is refused, not executed.
 */

/** Who decides: only an operator (a person) requests or decides; clients and break-glass never do. */
export interface Decider extends ApprovalPerson {
  kind: 'operator' | 'client' | 'break-glass' | 'metrics-scrape';
  capabilities: readonly OpsCapability[];
}

/** The validated input of a gated request: its path parameters and body. */
export interface GatedInput {
  params: Record<string, string>;
  body: unknown;
}

/** What carrying an approved action out gave. */
export type ActionOutcome =
  | { kind: 'done'; status: number; data: unknown }
  /** The action refused (a 4xx): it changed nothing, and will not change its mind. */
  | { kind: 'refused'; status: number; code: string; message: string }
  /** The action could not be asked (a service unreachable or failing): it may be approved again. */
  | { kind: 'unavailable'; message: string };

export interface ApprovalsDeps {
  store: ApprovalStore;
  clock: Clock;
  /** How long a request waits for its approval (OPS_APPROVAL_TTL_HOURS). */
  ttlMs: number;
  /**
   * How long an approver's claim holds before another approval may take the request again: longer
   * than carrying the action out can take (the forwarding timeout), so a claim is only retaken
   * when its process was lost.
   */
  leaseMs: number;
  /** Carries the action out with the approver's role (approvals/execute.ts). */
  execute: (approval: ApprovalRecord, approver: Decider, requestId: string) => Promise<ActionOutcome>;
  /** Writes the execution (or refusal) to the audit trail, naming both operators. */
  audited: (approval: ApprovalRecord, outcome: ActionOutcome, requestId: string) => Promise<void>;
}

/** The capability an action needs: its route's (FOUR_EYES_ROUTES). */
export function capabilityOfAction(action: ApprovalAction): OpsCapability {
  return FOUR_EYES_ROUTES[action].capability as OpsCapability;
}

/**
 * Whether recording `requested` capacity over `current` needs a second operator: an increase
 * (in minor units of the requested currency; another currency's capacity counts as none) of more
 * than `thresholdMajor` whole units of that currency.
 */
export function capacityIncreaseNeedsApproval(
  current: { amount: string; currency: string } | null,
  requested: { amount: number; currency: string },
  thresholdMajor: bigint,
): boolean {
  const exponent = exponentOf(requested.currency);
  if (exponent === undefined) return true; // not a currency the platform knows: a person looks
  const requestedMinor = minorFromNumber(requested.amount, exponent);
  const currentMinor =
    current && current.currency === requested.currency ? parseMinor(current.amount, exponent) : 0n;
  return requestedMinor - currentMinor > thresholdMajor * 10n ** BigInt(exponent);
}

export function createApprovals(deps: ApprovalsDeps) {
  const statusAt = (approval: ApprovalRecord, now: Date): ApprovalStatus =>
    approval.status === 'PENDING' && approval.expiresAt.getTime() <= now.getTime()
      ? 'EXPIRED'
      : approval.status;
  const view = (approval: ApprovalRecord) => approvalView(approval, statusAt(approval, deps.clock()));

  const found = async (id: string) => {
    const approval = await deps.store.get(id);
    if (!approval) throw AppError.notFound('Approval');
    return approval;
  };

  /** Refuses a decider who is not a person, or (approving) the requester, or without the capability. */
  const mayDecide = (decider: Decider, approval: ApprovalRecord, decision: 'approve' | 'reject') => {
    if (decider.kind !== 'operator') {
      throw AppError.forbidden(
        'Approvals are decided by a signed-in operator, not a machine client or the break-glass token',
      );
    }
    if (decider.id === approval.requestedBy.id) {
      if (decision === 'reject') return; // withdrawing one's own request
      throw AppError.forbidden('You asked for this action: another operator must approve it (four eyes)');
    }
    const capability = capabilityOfAction(approval.action);
    if (!decider.capabilities.includes(capability)) {
      throw AppError.forbidden(
        `Your role ${decider.role} lacks the capability ${capability} this action needs, so it cannot decide it`,
      );
    }
  };

  /** Why a request can no longer be decided (`409`). */
  const notPending = (approval: ApprovalRecord) => {
    const status = statusAt(approval, deps.clock());
    const why: Record<ApprovalStatus, string> = {
      PENDING: 'it is pending',
      EXECUTING: 'another approval is carrying it out',
      EXECUTED: `it was approved by ${approval.decidedBy?.email ?? approval.decidedBy?.id} and carried out`,
      FAILED: 'it was approved and the action refused it',
      REJECTED: `it was rejected by ${approval.decidedBy?.email ?? approval.decidedBy?.id}`,
      EXPIRED: `it expired at ${approval.expiresAt.toISOString()}; ask for the action again`,
    };
    return AppError.conflict(`Approval ${approval._id} cannot be decided: ${why[status]}`);
  };

  return {
    /** Records an operator's request for a gated action; nothing is carried out. */
    request: async (
      requester: ApprovalPerson,
      input: {
        action: ApprovalAction;
        method: string;
        path: string;
        organizationId: string | null;
        params: Record<string, string>;
        request: unknown;
      },
    ) => {
      const now = deps.clock();
      const approval: ApprovalRecord = {
        _id: randomUUID(),
        ...input,
        status: 'PENDING',
        requestedBy: { id: requester.id, email: requester.email, role: requester.role },
        requestedAt: now,
        expiresAt: new Date(now.getTime() + deps.ttlMs),
        decidedBy: null,
        decidedAt: null,
        claim: null,
        leaseUntil: null,
        reason: null,
        result: null,
        error: null,
      };
      await deps.store.insert(approval);
      return view(approval);
    },

    get: async (id: string) => view(await found(id)),

    list: async (query: {
      page: number;
      limit: number;
      status?: ApprovalStatus;
      action?: ApprovalAction;
    }) => {
      const { items, total } = await deps.store.list(
        {
          ...(query.status ? { status: query.status } : {}),
          ...(query.action ? { action: query.action } : {}),
          now: deps.clock(),
        },
        query,
      );
      return { items: items.map(view), total };
    },

    /**
     * Approves and carries out: one conditional claim, so of two racing approvals one carries it
     * out and the other is `409`. A refusal settles it FAILED and is answered as the action
     * answered; an unreachable service releases it to PENDING (`503`): nothing was done.
     */
    approve: async (approver: Decider, id: string, requestId: string) => {
      const approval = await found(id);
      mayDecide(approver, approval, 'approve');
      const now = deps.clock();
      const claim = randomUUID();
      const claimed = await deps.store.claim(id, now, {
        claim,
        leaseUntil: new Date(now.getTime() + deps.leaseMs),
        decidedBy: { id: approver.id, email: approver.email, role: approver.role },
        decidedAt: now,
      });
      if (!claimed) throw notPending((await deps.store.get(id)) ?? approval);

      let outcome: ActionOutcome;
      try {
        outcome = await deps.execute(claimed, approver, requestId);
      } catch (err) {
        await deps.store.settle(id, claim, { status: 'PENDING' });
        throw err;
      }
      const settlement: ApprovalSettlement =
        outcome.kind === 'done'
          ? { status: 'EXECUTED', result: outcome.data }
          : outcome.kind === 'refused'
            ? {
                status: 'FAILED',
                error: { status: outcome.status, code: outcome.code, message: outcome.message },
              }
            : { status: 'PENDING' };
      const settled = await deps.store.settle(id, claim, settlement);
      if (outcome.kind === 'unavailable') {
        throw new AppError(
          'SERVICE_UNAVAILABLE',
          `${outcome.message}; the approval is still pending, approve it again shortly`,
        );
      }
      // Settled by this claim unless its lease ran out and another approval retook it (then that
      // one carries the same idempotent action out, and records it).
      const final = settled ?? claimed;
      await deps.audited(final, outcome, requestId);
      if (outcome.kind === 'refused') {
        const code = (outcome.code in ERROR_STATUS ? outcome.code : 'CONFLICT') as ErrorCode;
        throw new AppError(code, `The approved action was refused: ${outcome.message}`);
      }
      return { approval: view(final), result: outcome.data };
    },

    /** Rejects (or, by its requester, withdraws) a pending request: nothing is carried out. */
    reject: async (decider: Decider, id: string, reason: string | null) => {
      const approval = await found(id);
      mayDecide(decider, approval, 'reject');
      const now = deps.clock();
      const rejected = await deps.store.reject(id, now, {
        decidedBy: { id: decider.id, email: decider.email, role: decider.role },
        decidedAt: now,
        reason,
      });
      if (!rejected) throw notPending((await deps.store.get(id)) ?? approval);
      return view(rejected);
    },
  };
}

export type Approvals = ReturnType<typeof createApprovals>;

/** An approval as ops read it. */
export function approvalView(approval: ApprovalRecord, status: ApprovalStatus) {
  return {
    id: approval._id,
    action: approval.action,
    status,
    method: approval.method,
    path: approval.path,
    organizationId: approval.organizationId,
    request: approval.request ?? null,
    requestedBy: approval.requestedBy,
    requestedAt: approval.requestedAt.toISOString(),
    expiresAt: approval.expiresAt.toISOString(),
    decidedBy: approval.decidedBy ?? null,
    decidedAt: approval.decidedAt ? approval.decidedAt.toISOString() : null,
    reason: approval.reason ?? null,
    result: approval.result ?? null,
    error: approval.error ?? null,
  };
}
