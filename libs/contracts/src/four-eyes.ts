import type { RouteContract } from '@parametric/http';
import type { ApprovalAction } from './approvals';
import { opsRecordCapacity, opsSetServiceTier } from './ops';
import { opsOriginatePayout } from './payments/payouts';

/**
 * The ops routes that an operator's request only records as a pending approval (approvals.ts):
 * each declares the `202` it then answers. Whether a given request needs one is the gateway's
 * call (services/gateway/src/approvals/gate.ts): a capacity increase only above the threshold, a
 * tier only when it changes.
 */
export const FOUR_EYES_ROUTES: Readonly<Record<ApprovalAction, RouteContract>> = {
  opsOriginatePayout,
  opsRecordCapacity,
  opsSetServiceTier,
};
