import { performance } from 'node:perf_hooks';
import { ChainError, type RegistryClient, termsHashOf } from '@parametric/chain';
import type { ACTIVATION_CHANNELS } from '@parametric/contracts';
import { createEvent, withOutboxEvents } from '@parametric/events';
import { AppError } from '@parametric/http';
import { numberFromMinor } from '@parametric/money';
import type { TenantScope } from '@parametric/mongo';
import { type Clock, DAY_MS, systemClock } from '../clock';
import type { PolicyDoc } from './model';

export type ActivationChannel = (typeof ACTIVATION_CHANNELS)[number];

/** One organization's policies: the Tier 1 route's tenant, or the Tier 2 job's organization. */
export type OrganizationPolicies = TenantScope<PolicyDoc>;

export interface ActivationRequest {
  policyId: string;
  via: ActivationChannel;
  premiumReference?: string | null;
}

export interface ActivationResult {
  policy: PolicyDoc;
  /** False when the policy was already active (a repeated call, or a concurrent one won). */
  activatedNow: boolean;
}

export interface Activator {
  activate(policies: OrganizationPolicies, request: ActivationRequest): Promise<ActivationResult>;
}

/**
 * Minor units as they go into the terms: JSON numbers, as they were hashed before money became
 * int64, so a policy sold earlier and activated (or retried) now hashes to what may already be
 * on chain. Sums are bounded far below 2^53 by the purchase body, so the number is exact.
 */
function termsMinor(minor: bigint | number): number {
  const n = Number(minor);
  if (!Number.isSafeInteger(n)) throw new Error(`minor units ${String(minor)} are not exact as a number`);
  return n;
}

/**
 * What is registered on chain: the terms fixed at sale, never the activation time, so a
 * retried activation hashes the same terms as the attempt that may already have landed.
 */
export function policyTerms(p: PolicyDoc) {
  return {
    policyId: p._id,
    policyNumber: p.policyNumber,
    farmerId: p.farmerId,
    productType: p.productType,
    plotId: p.plotId ?? null,
    herdId: p.herdId ?? null,
    season: p.season ?? null,
    coverageType: p.coverageType,
    durationDays: p.durationDays,
    currency: p.currency,
    sumInsuredMinor: termsMinor(p.sumInsuredMinor),
    premiumMinor: termsMinor(p.premiumMinor),
    rateTableVersion: p.rateTableVersion,
    settlementMode: p.settlementMode,
  };
}

/** The channel a policy's premium must come through: its settlement mode, frozen at sale. */
const CHANNEL_OF_MODE: Record<PolicyDoc['settlementMode'], ActivationChannel> = {
  DETERMINATION: 'PARTNER',
  DETERMINATION_AND_SETTLEMENT: 'PAYMENT',
};

function requireActivatable(policy: PolicyDoc, via: ActivationChannel): void {
  if (CHANNEL_OF_MODE[policy.settlementMode] !== via) {
    throw AppError.forbidden(
      via === 'PARTNER'
        ? 'This policy is DETERMINATION_AND_SETTLEMENT: its premium is paid by mobile money (POST /payments/initiate) and the payment activates it'
        : 'This policy is DETERMINATION: the partner collects its premium and activates it with PUT /policies/{id}/activate',
    );
  }
}

/** Only registering is the activator's business (start-up checks and shutdown are the service's). */
type Registrar = Pick<RegistryClient, 'registerPolicy'>;

async function register(registry: Registrar, policy: PolicyDoc) {
  try {
    return await registry.registerPolicy(policy._id, policyTerms(policy));
  } catch (err) {
    if (err instanceof ChainError) {
      throw new AppError(
        'BLOCKCHAIN_ERROR',
        `The policy could not be registered on chain (${err.message}); it stays PENDING, try again`,
      );
    }
    throw err;
  }
}

/**
 * The one activation path, for the Tier 1 route and the Tier 2 queue job alike: register on
 * chain, then one conditional write that sets the policy active and records `policy.activated`
 * in its outbox. A chain failure writes nothing (502 BLOCKCHAIN_ERROR); a write that fails
 * after the chain call leaves the policy PENDING, and the retry finds the registration already
 * on chain (the registry is idempotent per policy id) and completes it with the same ids.
 * The clock is read after the chain call: cover starts when the registration is done.
 */
export function createActivator(deps: {
  registry: Registrar;
  clock?: Clock;
  /**
   * Once per policy this activator activated (not for an already active one): seconds from the
   * start of the activation to its commit, the chain registration confirmed in between
   * (`chain_activation_duration_seconds`).
   */
  onActivated?: (seconds: number) => void;
}): Activator {
  const clock = deps.clock ?? systemClock;

  return {
    async activate(policies, { policyId, via, premiumReference = null }) {
      const policy = await policies.findById(policyId).lean<PolicyDoc>();
      if (!policy) throw AppError.notFound('Policy');
      requireActivatable(policy, via);
      if (policy.status === 'ACTIVE') return { policy, activatedNow: false };
      if (policy.status !== 'PENDING') {
        throw AppError.invalid(`The policy is ${policy.status}; only a PENDING policy can be activated`);
      }

      const started = performance.now();
      const registration = await register(deps.registry, policy);
      const at = clock();
      const event = createEvent('policy.activated', policies.organizationId, {
        policyId: policy._id,
        onChainPolicyId: registration.onChainPolicyId,
        policyNumber: policy.policyNumber,
        farmerId: policy.farmerId,
        sumInsured: numberFromMinor(policy.sumInsuredMinor, policy.exponent),
        txHash: registration.txHash,
      });
      // Conditional on PENDING: of two concurrent activations exactly one writes (and emits).
      const activated = await policies.findOneAndUpdate(
        { _id: policy._id, status: 'PENDING' },
        withOutboxEvents<PolicyDoc>(
          {
            $set: {
              status: 'ACTIVE',
              premiumPaid: true,
              onChainPolicyId: registration.onChainPolicyId,
              txHash: registration.txHash,
              termsHash: termsHashOf(policyTerms(policy)),
              coverStartsAt: at,
              coverEndsAt: new Date(at.getTime() + policy.durationDays * DAY_MS),
              activatedAt: at,
              activatedVia: via,
              premiumReference: premiumReference ?? policy.premiumReference ?? null,
              activationRequestedAt: null,
            },
          },
          event,
        ),
      );
      if (activated) {
        deps.onActivated?.((performance.now() - started) / 1000);
        return { policy: activated, activatedNow: true };
      }
      const current = await policies.findById(policy._id).lean<PolicyDoc>();
      if (current?.status === 'ACTIVE') return { policy: current, activatedNow: false };
      throw AppError.invalid(
        `The policy is ${current?.status ?? 'gone'}; only a PENDING policy can be activated`,
      );
    },
  };
}
