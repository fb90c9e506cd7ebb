import { defineRoute } from '@parametric/http';
import { z } from 'zod';
import { idParams, oneOf, pageQuery, timestamp } from './common';

/**
 * Four eyes on money-moving ops actions (issue 25; docs/ops.md, "Four eyes"): a manual payout
 * origination, a capacity increase above OPS_APPROVAL_CAPACITY_THRESHOLD and a service-tier
 * change, asked by an operator, are kept as a pending approval and carried out only when a
 * different operator whose role may take the action approves it. Which routes these are is
 * `FOUR_EYES_ROUTES` (four-eyes.ts).
 */

/**
 * `EXECUTING` while an approver's claim carries the action out (a claim not finished within its
 * lease, its process lost, may be approved again: every gated action is idempotent). `EXPIRED` is
 * a pending request past `expiresAt` (OPS_APPROVAL_TTL_HOURS); `FAILED` an action that answered
 * with a refusal (it changed nothing).
 */
export const APPROVAL_STATUSES = [
  'PENDING',
  'EXECUTING',
  'EXECUTED',
  'FAILED',
  'REJECTED',
  'EXPIRED',
] as const;
export type ApprovalStatus = (typeof APPROVAL_STATUSES)[number];

/** The operationIds of the actions that need a second operator. */
export const APPROVAL_ACTIONS = ['opsOriginatePayout', 'opsRecordCapacity', 'opsSetServiceTier'] as const;
export type ApprovalAction = (typeof APPROVAL_ACTIONS)[number];

const person = z
  .object({
    id: z
      .string()
      .meta({ description: 'The operator’s id (`oidc:<sub>` for one signed in by single sign-on)' }),
    email: z.string().nullable(),
    role: z.string(),
  })
  .meta({ id: 'ApprovalPerson' });

export const approvalSchema = z
  .object({
    id: z.uuid(),
    action: z.enum(APPROVAL_ACTIONS).meta({ description: 'The operationId of the action asked for' }),
    status: z.enum(APPROVAL_STATUSES),
    method: z.string(),
    path: z.string().meta({ description: 'The ops path the action was asked at, ids included' }),
    organizationId: z.string().nullable(),
    request: z
      .unknown()
      .meta({ description: 'The body the action was asked with, as it will be carried out' }),
    requestedBy: person,
    requestedAt: timestamp,
    expiresAt: timestamp,
    decidedBy: person.nullable().meta({ description: 'Who approved or rejected it; null while pending' }),
    decidedAt: timestamp.nullable(),
    reason: z.string().nullable().meta({ description: 'Why it was rejected, when the rejecter said' }),
    result: z.unknown().meta({ description: 'What the action answered (`data`) once executed; else null' }),
    error: z
      .object({ status: z.number().int(), code: z.string(), message: z.string() })
      .nullable()
      .meta({ description: 'The action’s refusal, when it FAILED' }),
  })
  .meta({ id: 'Approval' });

/** The `202` a gated action answers an operator with: nothing was done yet. */
export const approvalRequestedResponse = {
  description:
    'Asked by an operator: recorded as a pending approval, carried out only when a different operator approves it (`POST /ops/approvals/{id}/approve`; docs/ops.md, "Four eyes"). The break-glass token acts at once.',
  data: z.object({ approval: approvalSchema }).meta({ id: 'ApprovalRequested' }),
} as const;

export const approvalsQuery = pageQuery
  .extend({
    status: z.enum(APPROVAL_STATUSES, oneOf(APPROVAL_STATUSES)).optional(),
    action: z.enum(APPROVAL_ACTIONS, oneOf(APPROVAL_ACTIONS)).optional(),
  })
  .strict();

export const rejectApprovalBody = z
  .strictObject({
    reason: z.string({ error: 'must be a string' }).trim().min(1, 'must not be empty').max(500).optional(),
  })
  .meta({
    id: 'RejectApprovalRequest',
    example: { reason: 'Capacity not backed by the reinsurance treaty yet' },
  });

export const opsListApprovals = defineRoute({
  operationId: 'opsListApprovals',
  method: 'get',
  path: '/approvals',
  summary: 'List approvals',
  description:
    'Newest first, by status and action. A pending request past its `expiresAt` is `EXPIRED`. Approvals are part of the record of ops actions: whoever reads the audit trail reads them.',
  tags: ['Approvals'],
  auth: 'opsBearer',
  capability: 'ops.audit:read',
  query: approvalsQuery,
  responses: { 200: { description: 'A page of approvals', item: approvalSchema } },
  errors: [],
});

export const opsGetApproval = defineRoute({
  operationId: 'opsGetApproval',
  method: 'get',
  path: '/approvals/{id}',
  summary: 'Read an approval',
  tags: ['Approvals'],
  auth: 'opsBearer',
  capability: 'ops.audit:read',
  params: idParams,
  responses: { 200: { description: 'The approval', data: approvalSchema } },
  errors: [],
});

export const opsApproveApproval = defineRoute({
  operationId: 'opsApproveApproval',
  method: 'post',
  path: '/approvals/{id}/approve',
  summary: 'Approve, and carry out, a pending action',
  description:
    'Open to every signed-in caller (`ops.session:read`); deciding needs the capability of the action itself, checked here: only an operator other than the requester whose role may take the action (or `OPS_ADMIN`) approves — anyone else is `403 FORBIDDEN` naming the capability, the requester is `403 FORBIDDEN`, as are machine clients and the break-glass token (an approval names two people). The action is carried out with the approver’s role and answered here with its own result. Approving what is no longer pending (executed, rejected, expired, or being executed by a concurrent approval) is `409 CONFLICT`: two approvals carry an action out once. An action that refuses (e.g. a determination that owes nothing) leaves the approval `FAILED` and answers with that refusal; a service that cannot be reached leaves it `PENDING` (`503`).',
  tags: ['Approvals'],
  auth: 'opsBearer',
  capability: 'ops.session:read',
  params: idParams,
  responses: {
    200: {
      description: 'The approval, EXECUTED, and what the action answered',
      data: z.object({ approval: approvalSchema, result: z.unknown() }).meta({ id: 'ApprovalExecuted' }),
    },
  },
  errors: ['CONFLICT', 'INVALID_INPUT', 'TIER_NOT_ENTITLED', 'PAYMENT_ERROR', 'SERVICE_UNAVAILABLE'],
});

export const opsRejectApproval = defineRoute({
  operationId: 'opsRejectApproval',
  method: 'post',
  path: '/approvals/{id}/reject',
  summary: 'Reject (or, as its requester, withdraw) a pending action',
  description:
    'By the requester (withdrawing it) or an operator whose role may take the action (the action’s capability is checked here, as for approving; the route is open to every signed-in caller). Nothing is carried out. What is no longer pending is `409 CONFLICT`.',
  tags: ['Approvals'],
  auth: 'opsBearer',
  capability: 'ops.session:read',
  params: idParams,
  body: rejectApprovalBody,
  bodyOptional: true,
  responses: { 200: { description: 'The approval, REJECTED', data: approvalSchema } },
  errors: ['CONFLICT'],
});

export const APPROVAL_ROUTES = [
  opsListApprovals,
  opsGetApproval,
  opsApproveApproval,
  opsRejectApproval,
] as const;
