import { AppError } from '@parametric/http';
import type { Ops } from '../ops/domain';
import type { OrganizationDoc } from '../organizations/model';
import type { GatewayRepositories } from '../repositories';
import type { ActionOutcome, Decider } from './domain';
import type { ApprovalRecord } from './store';

/** Asks another service's ops route (forwarding/routes.ts `askOpsService`, bound to its deps). */
export type AskOpsService = (request: {
  method: string;
  path: string;
  body?: unknown;
  caller: Decider;
  requestId: string;
}) => Promise<{ status: number; text: string }>;

/**
 * Carries an approved action out with the approver's role: the service tier here (the gateway
 * holds organizations), anything else at the service that serves its path, as a forwarded ops
 * request would be. Every gated action is idempotent (a payout is one per determination, a
 * capacity or a tier is set, not added), so carrying one out again after a lost claim is safe.
 */
export function actionExecutor(deps: { repositories: GatewayRepositories; ops: Ops; ask: AskOpsService }) {
  return async (approval: ApprovalRecord, approver: Decider, requestId: string): Promise<ActionOutcome> => {
    if (approval.action === 'opsSetServiceTier') {
      const tenant = deps.repositories.forOrganization(approval.params.id ?? '');
      const { serviceTier } = approval.request as { serviceTier: OrganizationDoc['serviceTier'] };
      try {
        return {
          kind: 'done',
          status: 200,
          data: await deps.ops.view(tenant, await deps.ops.setServiceTier(tenant, serviceTier)),
        };
      } catch (err) {
        if (err instanceof AppError && err.status < 500) {
          return { kind: 'refused', status: err.status, code: err.code, message: err.message };
        }
        throw err;
      }
    }
    let reply: { status: number; text: string };
    try {
      reply = await deps.ask({
        method: approval.method,
        path: approval.path.replace(/^\/ops/, ''),
        body: approval.request ?? undefined,
        caller: approver,
        requestId,
      });
    } catch (err) {
      if (err instanceof AppError && err.code === 'SERVICE_UNAVAILABLE') {
        return { kind: 'unavailable', message: err.message };
      }
      throw err;
    }
    return outcomeOf(reply);
  };
}

/** A service's answer as an outcome: 2xx done, 4xx refused, anything else not carried out. */
export function outcomeOf(reply: { status: number; text: string }): ActionOutcome {
  let body: { data?: unknown; error?: { code?: unknown; message?: unknown } } | undefined;
  try {
    body = JSON.parse(reply.text);
  } catch {
    body = undefined;
  }
  if (reply.status >= 200 && reply.status < 300 && body && 'data' in body) {
    return { kind: 'done', status: reply.status, data: body.data };
  }
  if (reply.status >= 400 && reply.status < 500 && typeof body?.error?.code === 'string') {
    return {
      kind: 'refused',
      status: reply.status,
      code: body.error.code,
      message: typeof body.error.message === 'string' ? body.error.message : body.error.code,
    };
  }
  const said = typeof body?.error?.message === 'string' ? `: ${body.error.message}` : '';
  return {
    kind: 'unavailable',
    message: `The action was not carried out (the service answered ${reply.status}${said})`,
  };
}
