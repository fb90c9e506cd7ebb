import type { PurchaseBody } from '@parametric/contracts';
import { AppError } from '@parametric/http';
import { formatMinor, MARKET_CURRENCY, minorFromNumber, numberFromMinor } from '@parametric/money';
import { duplicateKeyFields } from '@parametric/mongo';
import type { TenantPolicyData } from '../repositories';
import { releaseCapacity, reserveCapacity } from '../underwriting/domain';
import { exponentOfCurrency } from '../underwriting/model';
import { ensureSandboxUnderwriting } from '../underwriting/sandbox';
import {
  type OrganizationSnapshot,
  type PlotOrHerd,
  readGates,
  requireCapacityCurrency,
  requireCurrentLicence,
  requireFarmersHerd,
  requireFarmersPlot,
  requireInsurableFarmer,
  requireKybVerified,
  requireLiveCapacity,
} from './gates';
import {
  claimKeyedReservation,
  type Keyed,
  keyedPurchase,
  policyOfKey,
  releaseClaim,
  settleClaim,
} from './idempotency';
import type { PolicyDoc } from './model';
import { newPolicyNumber } from './policy-number';
import {
  cropPremiumMinor,
  livestockPremiumMinor,
  livestockSumInsuredMinor,
  RATE_TABLE,
  wholeUnitPremiumMinor,
} from './pricing';
import { policyView } from './reads';

type Tenant = TenantPolicyData;

interface Priced {
  sumInsuredMinor: bigint;
  premiumMinor: bigint;
  durationDays: number;
}

/** The sum insured, premium and cover length of a valid body, once its plot or herd is found. */
function price(body: PurchaseBody, exponent: number, plotOrHerd: PlotOrHerd): Priced {
  if (body.productType === 'CROP') {
    requireFarmersPlot(plotOrHerd);
    const sumInsuredMinor = minorFromNumber(body.sumInsured, exponent);
    return {
      sumInsuredMinor,
      premiumMinor: cropPremiumMinor(sumInsuredMinor, body.coverageType, body.durationDays),
      durationDays: body.durationDays,
    };
  }
  const herd = requireFarmersHerd(plotOrHerd);
  const sumInsuredMinor = livestockSumInsuredMinor(minorFromNumber(herd.estimatedValue, exponent));
  if (sumInsuredMinor < minorFromNumber(RATE_TABLE.minimumSumInsured, exponent)) {
    const minimum = RATE_TABLE.minimumSumInsured;
    throw AppError.invalid(
      `The herd is worth too little to insure: the calculated sum insured is below ${minimum}`,
      [
        {
          field: 'herdId',
          message: `calculated sum insured ${formatMinor(sumInsuredMinor, exponent)} is below ${minimum}`,
        },
      ],
    );
  }
  return {
    sumInsuredMinor,
    premiumMinor: livestockPremiumMinor(sumInsuredMinor, body.coverageType, body.season),
    durationDays: RATE_TABLE.seasonDays[body.season],
  };
}

async function remainingCapacityError(tenant: Tenant, currency: string, exponent: number): Promise<AppError> {
  const capacity = await tenant.capacity.get();
  const remaining = capacity ? capacity.amountMinor - capacity.reservedMinor : 0n;
  return AppError.invalid('The sum insured exceeds the remaining underwriting capacity', [
    {
      field: 'sumInsured',
      message: `at most ${formatMinor(remaining > 0n ? remaining : 0n, exponent)} ${currency} remains`,
    },
  ]);
}

/** Inserts the policy, drawing a new number on the (rare) collision of two numbers. */
async function insertPolicy(
  tenant: Tenant,
  fields: Omit<Partial<PolicyDoc>, 'organizationId'>,
  market: string,
  now: Date,
) {
  for (let attempt = 0; ; attempt++) {
    try {
      const created = await tenant.policies.create({ ...fields, policyNumber: newPolicyNumber(market, now) });
      return created.toObject() as PolicyDoc;
    } catch (err) {
      if (!duplicateKeyFields(err)?.includes('policyNumber') || attempt >= 3) throw err;
    }
  }
}

function paymentInstructions(policy: PolicyDoc) {
  const amount = formatMinor(policy.premiumMinor, policy.exponent);
  const premium = `${policy.currency} ${amount}`;
  return {
    amount: numberFromMinor(policy.premiumMinor, policy.exponent),
    policyNumber: policy.policyNumber,
    message:
      policy.settlementMode === 'DETERMINATION'
        ? `Collect the premium of ${premium} for policy ${policy.policyNumber} from the farmer, then activate it with PUT /policies/${policy._id}/activate.`
        : `Pay the premium of ${premium} for policy ${policy.policyNumber} by mobile money: POST /payments/initiate with reference ${policy._id}.`,
  };
}

/** What a purchase answers: the policy and how to pay for it. */
function purchaseView(policy: PolicyDoc, now: Date) {
  return { policy: policyView(policy, now), paymentInstructions: paymentInstructions(policy) };
}

/**
 * Sells a PENDING policy. The body is already valid (the contract checked it); the gates decide
 * in the order the spec gives (a sandbox organization's licence and capacity set up first, if
 * missing): KYB, licence, capacity and solvency, farmer KYC, then the plot or
 * herd, then the remaining capacity, which is reserved atomically. What the gates before the
 * reservation look at is read in one round (`readGates`). A reservation whose policy
 * could not be written is given back.
 */
export async function purchasePolicy(
  tenant: Tenant,
  organization: OrganizationSnapshot,
  body: PurchaseBody,
  now: Date,
) {
  return (await purchasePolicyOnce(tenant, organization, body, now, undefined)).purchase;
}

/**
 * `purchasePolicy` with the partner's optional `Idempotency-Key` (docs/api.md, "Retries and
 * idempotency"). With a key, the policy the key already bought is answered (`replayed`), before
 * any gate, and nothing is reserved or written; a key used with another body is 409. Otherwise
 * the key is claimed together with the capacity reservation, in one conditional update of the
 * capacity document, and the policy is written with the key (unique per organization):
 *
 * - two requests with the same key reserve once: the second finds the first's claim and writes
 *   its policy on that reservation; of their two inserts, the unique index lets one through and
 *   the other answers the winner's policy;
 * - a crash (or a write the server held) between the reservation and the policy leaves the claim
 *   on the capacity document, and a retry with the key writes the policy on it; such a claim is
 *   never given back blindly, since the policy's write may yet be applied;
 * - a claim that lost to another claim's policy (a request that read before that policy existed
 *   and reserved after its claim was settled) is given back by whichever request holding it
 *   gets the duplicate key, in the same update that removes the claim.
 */
export async function purchasePolicyOnce(
  tenant: Tenant,
  organization: OrganizationSnapshot,
  body: PurchaseBody,
  now: Date,
  idempotencyKey: string | undefined,
) {
  const keyed = keyedPurchase(idempotencyKey, body);
  if (keyed) {
    const earlier = await policyOfKey(tenant, keyed);
    if (earlier) return { purchase: purchaseView(earlier, now), replayed: true };
  }
  const market = organization.countryCode;
  requireKybVerified(organization);
  if (organization.environment === 'sandbox') await ensureSandboxUnderwriting(tenant, market, now);
  const read = await readGates(
    tenant,
    market,
    body.productType === 'CROP'
      ? { farmerId: body.farmerId, plotId: body.plotId }
      : { farmerId: body.farmerId, herdId: body.herdId },
  );
  requireCurrentLicence(read.licence, market, now);
  const capacity = requireLiveCapacity(read.capacity, now);
  requireInsurableFarmer(read.farmer);
  const currency = requireCapacityCurrency(capacity, MARKET_CURRENCY[market as keyof typeof MARKET_CURRENCY]);
  const exponent = exponentOfCurrency(currency);
  const priced = price(body, exponent, read.plotOrHerd);
  const { sumInsuredMinor, durationDays } = priced;
  const settlementMode =
    organization.serviceTier === 'DETERMINATION_AND_SETTLEMENT'
      ? 'DETERMINATION_AND_SETTLEMENT'
      : 'DETERMINATION';
  // Tier 2 premiums are collected by M-Pesa, which moves whole shillings only.
  const premiumMinor =
    settlementMode === 'DETERMINATION_AND_SETTLEMENT'
      ? wholeUnitPremiumMinor(priced.premiumMinor, exponent)
      : priced.premiumMinor;

  const fields: PolicyFields = {
    farmerId: body.farmerId,
    productType: body.productType,
    plotId: body.productType === 'CROP' ? body.plotId : null,
    herdId: body.productType === 'LIVESTOCK' ? body.herdId : null,
    season: body.productType === 'LIVESTOCK' ? body.season : null,
    coverageType: body.coverageType,
    durationDays,
    currency,
    exponent,
    sumInsuredMinor,
    premiumMinor,
    rateTableVersion: RATE_TABLE.version,
    // Frozen at sale: later tier changes do not move existing policies.
    settlementMode,
    environment: organization.environment ?? 'live',
  };
  if (keyed) return keyedSale(tenant, keyed, fields, market, now, { currency, exponent });

  if (!(await reserveCapacity(tenant, sumInsuredMinor))) {
    throw await remainingCapacityError(tenant, currency, exponent);
  }
  let policy: PolicyDoc;
  try {
    policy = await insertPolicy(tenant, fields, market, now);
  } catch (err) {
    await releaseCapacity(tenant, sumInsuredMinor);
    throw err;
  }
  return { purchase: purchaseView(policy, now), replayed: false };
}

type PolicyFields = Omit<Partial<PolicyDoc>, 'organizationId'> & { sumInsuredMinor: bigint };

/** The keyed half of `purchasePolicyOnce`: claim and reserve, write the policy, settle the claim. */
async function keyedSale(
  tenant: Tenant,
  keyed: Keyed,
  fields: PolicyFields,
  market: string,
  now: Date,
  money: { currency: string; exponent: number },
) {
  const claim = await claimKeyedReservation(tenant, keyed, fields.sumInsuredMinor, now);
  if (claim === 'NO_CAPACITY') {
    // The claim that held the key may have been settled since: its policy answers.
    const earlier = await policyOfKey(tenant, keyed);
    if (earlier) return { purchase: purchaseView(earlier, now), replayed: true };
    throw await remainingCapacityError(tenant, money.currency, money.exponent);
  }
  let policy: PolicyDoc;
  try {
    policy = await insertPolicy(
      tenant,
      {
        ...fields,
        idempotencyKey: keyed.key,
        idempotencyFingerprint: keyed.fingerprint,
        reservationClaimId: claim.claimId,
      },
      market,
      now,
    );
  } catch (err) {
    if (!duplicateKeyFields(err)?.includes('idempotencyKey')) throw err;
    // Another request with the key wrote its policy first: answer that one.
    const winner = await policyOfKey(tenant, keyed);
    if (!winner) throw err;
    // The claim this request wrote on is either the winner's reservation (settle it: the winner
    // may have stopped before doing so) or one no policy can ever use now that the key has its
    // policy (give it back). Both are conditional on the claim still being there, so a claim is
    // given back at most once, whoever of the requests holding it gets here.
    if (winner.reservationClaimId === claim.claimId) await settleClaim(tenant, claim.claimId);
    else await releaseClaim(tenant, claim.claimId, fields.sumInsuredMinor);
    return { purchase: purchaseView(winner, now), replayed: true };
  }
  await settleClaim(tenant, claim.claimId);
  return { purchase: purchaseView(policy, now), replayed: false };
}
