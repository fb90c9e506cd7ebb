import { isoOrNull, type policiesQuery } from '@parametric/contracts';
import { AppError } from '@parametric/http';
import { numberFromMinor } from '@parametric/money';
import { findOneLean } from '@parametric/mongo';
import type { z } from 'zod';
import { DAY_MS } from '../clock';
import type { TenantPolicyData } from '../repositories';
import type { PolicyDoc, PolicyModel } from './model';
import { damageAssessmentsView, payoutsView } from './summaries';

type Tenant = Pick<TenantPolicyData, 'policies'>;

/** Whole days of cover left: the full duration until activation, then counting down to zero. */
export function daysRemaining(p: PolicyDoc, now: Date): number {
  if (!p.coverEndsAt) return p.status === 'PENDING' ? p.durationDays : 0;
  return Math.max(0, Math.ceil((p.coverEndsAt.getTime() - now.getTime()) / DAY_MS));
}

/** The policy as partners read it: the `Policy` schema's specified fields, then ours. */
export function policyView(p: PolicyDoc, now: Date) {
  return {
    id: p._id,
    policyNumber: p.policyNumber,
    status: p.status,
    premiumPaid: p.premiumPaid,
    sumInsured: numberFromMinor(p.sumInsuredMinor, p.exponent),
    premium: numberFromMinor(p.premiumMinor, p.exponent),
    coverageType: p.coverageType,
    onChainPolicyId: p.onChainPolicyId ?? null,
    daysRemaining: daysRemaining(p, now),
    payouts: payoutsView(p.payouts),
    damageAssessments: damageAssessmentsView(p.damageAssessments),
    settlementMode: p.settlementMode,
    productType: p.productType,
    farmerId: p.farmerId,
    plotId: p.plotId ?? null,
    herdId: p.herdId ?? null,
    season: p.season ?? null,
    durationDays: p.durationDays,
    currency: p.currency,
    coverStartsAt: isoOrNull(p.coverStartsAt),
    coverEndsAt: isoOrNull(p.coverEndsAt),
    activatedAt: isoOrNull(p.activatedAt),
    txHash: p.txHash ?? null,
    premiumReference: p.premiumReference ?? null,
    rateTableVersion: p.rateTableVersion,
    createdAt: p.createdAt.toISOString(),
  };
}

/**
 * The policy as ops read it (and the determinations service, attributing a determination): the
 * partner's view, then whose it is, its money exactly in minor units, and its capacity.
 */
export function opsPolicyView(p: PolicyDoc, now: Date) {
  return {
    ...policyView(p, now),
    organizationId: p.organizationId,
    exponent: p.exponent,
    sumInsuredMinor: p.sumInsuredMinor.toString(),
    premiumMinor: p.premiumMinor.toString(),
    expiredAt: isoOrNull(p.expiredAt),
    capacityReleasedAt: isoOrNull(p.capacityReleasedAt),
    environment: p.environment ?? 'live',
  };
}

function nextStep(p: PolicyDoc): string {
  if (p.status === 'ACTIVE') return 'Covered; determinations arrive by webhook';
  if (p.status !== 'PENDING') return 'No action: the policy is no longer in force';
  if (p.settlementMode === 'DETERMINATION') {
    return 'Collect the premium, then activate the policy (PUT /policies/{id}/activate)';
  }
  return p.activationRequestedAt
    ? 'No action: the premium is received and the policy is being activated on chain'
    : 'Pay the premium by mobile money (POST /payments/initiate)';
}

/** Where the policy stands and what the partner should do next. */
export function policyStatusView(p: PolicyDoc, now: Date) {
  return {
    id: p._id,
    policyNumber: p.policyNumber,
    status: p.status,
    premiumPaid: p.premiumPaid,
    activatedOnChain: Boolean(p.onChainPolicyId),
    onChainPolicyId: p.onChainPolicyId ?? null,
    coverStartsAt: isoOrNull(p.coverStartsAt),
    coverEndsAt: isoOrNull(p.coverEndsAt),
    daysRemaining: daysRemaining(p, now),
    settlementMode: p.settlementMode,
    activation: {
      activatedAt: isoOrNull(p.activatedAt),
      via: p.activatedVia ?? null,
      txHash: p.txHash ?? null,
      pending: Boolean(p.activationRequestedAt) && p.status === 'PENDING',
      failedAttempts: p.activationFailures ?? 0,
      lastError: p.lastActivationError ?? null,
    },
    expiredAt: isoOrNull(p.expiredAt),
    nextStep: nextStep(p),
  };
}

async function load(tenant: Tenant, policyId: string): Promise<PolicyDoc> {
  const policy = await tenant.policies.readById(policyId);
  if (!policy) throw AppError.notFound('Policy');
  return policy;
}

/** A page of the organization's policies, newest first; every filter given narrows it. */
export async function listPolicies(tenant: Tenant, query: z.output<typeof policiesQuery>, now: Date) {
  const { page, limit, ...filters } = query;
  const { items, total } = await tenant.policies.listPage(filters, { page, limit });
  return { items: items.map((p) => policyView(p, now)), total };
}

export async function readPolicy(tenant: Tenant, policyId: string, now: Date) {
  return policyView(await load(tenant, policyId), now);
}

export async function readPolicyStatus(tenant: Tenant, policyId: string, now: Date) {
  return policyStatusView(await load(tenant, policyId), now);
}

/**
 * Any organization's policy by id or by number (unique across the platform), for ops: the
 * model comes through `acrossOrganizations`.
 */
export async function readPolicyForOps(
  policies: PolicyModel,
  key: { id: string } | { policyNumber: string },
  now: Date,
) {
  const filter = 'id' in key ? { _id: key.id } : { policyNumber: key.policyNumber };
  const policy = await findOneLean(policies, filter);
  if (!policy) throw AppError.notFound('Policy');
  return opsPolicyView(policy, now);
}
