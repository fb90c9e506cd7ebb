import type { PurchaseBody } from '@parametric/contracts';
import { AppError } from '@parametric/http';
import { formatMinor, MARKET_CURRENCY, minorFromNumber, numberFromMinor } from '@parametric/money';
import { duplicateKeyFields } from '@parametric/mongo';
import type { TenantPolicyData } from '../repositories';
import { releaseCapacity, reserveCapacity } from '../underwriting/domain';
import { exponentOfCurrency } from '../underwriting/model';
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

/**
 * Sells a PENDING policy. The body is already valid (the contract checked it); the gates decide
 * in the order the spec gives: KYB, licence, capacity and solvency, farmer KYC, then the plot or
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
  const market = organization.countryCode;
  requireKybVerified(organization);
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

  if (!(await reserveCapacity(tenant, sumInsuredMinor))) {
    throw await remainingCapacityError(tenant, currency, exponent);
  }
  let policy: PolicyDoc;
  try {
    policy = await insertPolicy(
      tenant,
      {
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
      },
      market,
      now,
    );
  } catch (err) {
    await releaseCapacity(tenant, sumInsuredMinor);
    throw err;
  }
  return { policy: policyView(policy, now), paymentInstructions: paymentInstructions(policy) };
}
