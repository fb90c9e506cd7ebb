import { type ApprovalAction, capacitySchema, MOBILE_MONEY_MARKETS } from '@parametric/contracts';
import { AppError } from '@parametric/http';
import type { Market } from '@parametric/money';
import type { Ops } from '../ops/domain';
import type { GatewayRepositories } from '../repositories';
import { capacityIncreaseNeedsApproval, type Decider, type GatedInput } from './domain';
import type { AskOpsService } from './execute';

/**
 * Which operator requests for a gated action need a second operator (docs/ops.md, "Four eyes").
 * A request the route would refuse anyway (an unknown organization, a tier its market cannot
 * have) or that changes nothing (the current tier) goes on to the route and is answered there.
 */
export function needsApprovalOf(deps: {
  repositories: GatewayRepositories;
  ops: Ops;
  ask: AskOpsService;
  /** OPS_APPROVAL_CAPACITY_THRESHOLD: whole units of the capacity's currency. */
  capacityThreshold: bigint;
}) {
  return async (action: ApprovalAction, input: GatedInput, caller: Decider, requestId: string) => {
    if (action === 'opsOriginatePayout') return true;
    const organizationId = input.params.id ?? '';
    const organization = await deps.repositories.forOrganization(organizationId).organization.get();
    if (!organization) return false;
    if (action === 'opsSetServiceTier') {
      const { serviceTier } = input.body as { serviceTier: string };
      // Tier 2 needs mobile money in the market (ops/domain.ts).
      const allowed =
        serviceTier !== 'DETERMINATION_AND_SETTLEMENT' ||
        MOBILE_MONEY_MARKETS.includes(organization.countryCode as Market);
      return allowed && serviceTier !== organization.serviceTier;
    }
    const reply = await deps.ask({
      method: 'GET',
      path: `/organizations/${organizationId}/underwriting`,
      caller: {
        id: caller.id,
        email: null,
        role: caller.role,
        kind: caller.kind,
        capabilities: caller.capabilities,
      },
      requestId,
    });
    const current = readCapacity(reply);
    return capacityIncreaseNeedsApproval(
      current,
      input.body as { amount: number; currency: string },
      deps.capacityThreshold,
    );
  };
}

/** The capacity recorded now, from the policy service's underwriting answer. */
function readCapacity(reply: { status: number; text: string }) {
  if (reply.status !== 200) {
    throw new AppError(
      'SERVICE_UNAVAILABLE',
      'The current capacity could not be read from the policy service, so whether this increase needs a second operator is unknown; try again shortly',
    );
  }
  let body: { data?: { capacity?: unknown } } | undefined;
  try {
    body = JSON.parse(reply.text);
  } catch {
    body = undefined;
  }
  const parsed = capacitySchema.nullable().safeParse(body?.data?.capacity);
  if (!parsed.success) {
    throw new AppError(
      'SERVICE_UNAVAILABLE',
      'The policy service answered an unreadable capacity; try again shortly',
    );
  }
  return parsed.data;
}
