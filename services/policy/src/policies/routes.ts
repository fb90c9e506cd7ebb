import { randomBytes } from 'node:crypto';
import { AppError, type InternalContext, organizationOf, route, sendData, uuidParam } from '@parametric/http';
import { scopedTo } from '@parametric/mongo';
import { type Request, Router } from 'express';
import { z } from 'zod';
import type { FarmerDoc, FarmerModel } from '../farmers/model';
import type { HerdDoc, HerdModel } from '../herds/model';
import type { PlotModel } from '../plots/model';
import {
  type CapacityModel,
  CURRENCY_EXPONENT,
  fromMinor,
  type LicenceDoc,
  type LicenceModel,
  MARKET_CURRENCY,
  toMinor,
} from '../underwriting/model';
import type { Activator } from './activation';
import { daysRemaining, type PolicyDoc, type PolicyModel, policyView } from './model';
import {
  type CropCoverage,
  cropPremiumMinor,
  type LivestockCoverage,
  livestockPremiumMinor,
  livestockSumInsuredMinor,
  RATE_TABLE,
} from './pricing';

const CROP_COVERAGES = Object.keys(RATE_TABLE.crop) as [CropCoverage, ...CropCoverage[]];
const LIVESTOCK_COVERAGES = Object.keys(RATE_TABLE.livestock) as [LivestockCoverage, ...LivestockCoverage[]];

const uuid = z.uuid({ error: 'must be a uuid' });
const twoDecimals = (n: number) => Math.abs(Math.round(n * 100) - n * 100) < 1e-6;

const cropPurchase = z.strictObject({
  farmerId: uuid,
  productType: z.literal('CROP'),
  plotId: uuid,
  sumInsured: z
    .number({ error: 'is required for CROP and must be a number' })
    .min(1000, 'must be at least 1000')
    .max(1e10)
    .refine(twoDecimals, 'must have at most 2 decimal places'),
  coverageType: z.enum(CROP_COVERAGES, { error: `must be one of ${CROP_COVERAGES.join(', ')} for CROP` }),
  durationDays: z
    .number({ error: 'is required for CROP and must be a number' })
    .int('must be a whole number')
    .min(30, 'must be 30 to 365')
    .max(365, 'must be 30 to 365'),
});

const livestockPurchase = z.strictObject({
  farmerId: uuid,
  productType: z.literal('LIVESTOCK'),
  herdId: uuid,
  season: z.enum(['LRLD', 'SRSD'], { error: 'is required for LIVESTOCK: LRLD or SRSD' }),
  // Optional for livestock (the spec requires it only for CROP); LIVESTOCK_DROUGHT by default.
  coverageType: z
    .enum(LIVESTOCK_COVERAGES, { error: `must be one of ${LIVESTOCK_COVERAGES.join(', ')} for LIVESTOCK` })
    .default('LIVESTOCK_DROUGHT'),
});

const purchaseBody = z.discriminatedUnion('productType', [cropPurchase, livestockPurchase], {
  error: 'productType must be CROP or LIVESTOCK',
});

export interface PolicyRouteDeps {
  policies: PolicyModel;
  farmers: FarmerModel;
  plots: PlotModel;
  herds: HerdModel;
  licences: LicenceModel;
  capacity: CapacityModel;
  activator: Activator;
  now?: () => Date;
}

const activateBody = z
  .strictObject({
    /** The partner's own receipt for the premium it collected (kept on the policy). */
    premiumReference: z
      .string()
      .trim()
      .min(1, 'must not be empty')
      .max(100, 'must be at most 100 characters'),
  })
  .partial()
  .optional();

function organizationSnapshot(req: Request): NonNullable<InternalContext['organization']> {
  const org = req.context?.organization;
  if (!org) throw new Error('the gateway did not send the organization snapshot');
  return org;
}

/** Readable and unique: market, year-month, six random base32 characters (e.g. KE-202611-7K3Q9X). */
function newPolicyNumber(market: string, now: Date): string {
  const alphabet = 'ABCDEFGHJKMNPQRSTUVWXYZ23456789';
  const random = [...randomBytes(6)].map((b) => alphabet[b % alphabet.length]).join('');
  return `${market}-${now.toISOString().slice(0, 7).replace('-', '')}-${random}`;
}

export function policyRoutes(deps: PolicyRouteDeps): Router {
  const router = Router();
  const now = deps.now ?? (() => new Date());

  router.post('/policies/purchase', async (req, res) => {
    const organizationId = organizationOf(req);
    const org = organizationSnapshot(req);
    const at = now();

    // Gates in the order the spec and the design give them.
    if (org.kybStatus !== 'VERIFIED')
      throw AppError.forbidden('The organization must be KYB-verified to sell policies');
    const licence = await deps.licences
      .findOne({ organizationId, market: org.countryCode as LicenceDoc['market'] })
      .lean<LicenceDoc>();
    if (!licence) {
      throw new AppError(
        'REGULATOR_LICENSE_REQUIRED',
        `No regulator licence on file for market ${org.countryCode}`,
      );
    }
    if (!licence.expiresAt || licence.expiresAt.getTime() <= at.getTime()) {
      throw new AppError(
        'REGULATOR_LICENSE_EXPIRED',
        `The regulator licence for market ${org.countryCode} has lapsed or has no recorded expiry`,
      );
    }
    const capacity = await deps.capacity.findById(organizationId).lean();
    if (!capacity) throw AppError.invalid('No underwriting capacity is recorded for the organization');
    if (capacity.solvencyAttestedUntil.getTime() <= at.getTime()) {
      throw AppError.invalid(
        'The solvency attestation has lapsed; no policies can be sold until it is renewed',
      );
    }
    const farmerId =
      typeof req.body?.farmerId === 'string' && uuid.safeParse(req.body.farmerId).success
        ? req.body.farmerId
        : undefined;
    if (farmerId) {
      const farmer = await scopedTo(deps.farmers, organizationId).findById(farmerId).lean<FarmerDoc>();
      if (!farmer) throw AppError.notFound('Farmer');
      if (farmer.kycStatus !== 'APPROVED') {
        throw AppError.invalid('The farmer must be KYC-approved to be insured', [
          { field: 'farmerId', message: `farmer KYC is ${farmer.kycStatus}` },
        ]);
      }
    }
    const parsed = purchaseBody.safeParse(req.body);
    if (!parsed.success) {
      throw AppError.invalid(
        'Invalid request body',
        parsed.error.issues.flatMap((i) =>
          i.code === 'unrecognized_keys'
            ? i.keys.map((k) => ({ field: k, message: 'Unknown field' }))
            : [{ field: i.path.join('.') || '(body)', message: i.message }],
        ),
      );
    }
    const body = parsed.data;

    const currency = MARKET_CURRENCY[org.countryCode as keyof typeof MARKET_CURRENCY];
    if (!currency || capacity.currency !== currency) {
      throw AppError.invalid(
        `Underwriting capacity is recorded in ${capacity.currency}, policies in this market are sold in ${currency}`,
      );
    }
    const exponent = CURRENCY_EXPONENT[currency];

    let sumInsuredMinor: number;
    let premiumMinor: number;
    let durationDays: number;
    if (body.productType === 'CROP') {
      if (
        !(await scopedTo(deps.plots, organizationId).exists({ _id: body.plotId, farmerId: body.farmerId }))
      ) {
        throw AppError.notFound('Plot');
      }
      sumInsuredMinor = toMinor(body.sumInsured, exponent);
      durationDays = body.durationDays;
      premiumMinor = cropPremiumMinor(sumInsuredMinor, body.coverageType, durationDays);
    } else {
      const herd = await scopedTo(deps.herds, organizationId)
        .findOne({ _id: body.herdId, farmerId: body.farmerId })
        .lean<HerdDoc>();
      if (!herd) throw AppError.notFound('Herd');
      sumInsuredMinor = livestockSumInsuredMinor(toMinor(herd.estimatedValue, exponent));
      if (sumInsuredMinor < 1000 * 10 ** exponent) {
        throw AppError.invalid(
          'The herd is worth too little to insure: the calculated sum insured is below 1000',
          [
            {
              field: 'herdId',
              message: `calculated sum insured ${fromMinor(sumInsuredMinor, exponent)} is below 1000`,
            },
          ],
        );
      }
      durationDays = RATE_TABLE.seasonDays[body.season];
      premiumMinor = livestockPremiumMinor(sumInsuredMinor, body.coverageType, body.season);
    }

    // Reserve capacity atomically: concurrent purchases cannot together exceed it.
    const reserved = await deps.capacity.findOneAndUpdate(
      {
        _id: organizationId,
        $expr: { $lte: [{ $add: ['$reservedMinor', sumInsuredMinor] }, '$amountMinor'] },
      },
      { $inc: { reservedMinor: sumInsuredMinor } },
      { returnDocument: 'after' },
    );
    if (!reserved) {
      const remaining = capacity.amountMinor - capacity.reservedMinor;
      throw AppError.invalid('The sum insured exceeds the remaining underwriting capacity', [
        {
          field: 'sumInsured',
          message: `at most ${fromMinor(Math.max(0, remaining), exponent)} ${currency} remains`,
        },
      ]);
    }

    let policy: PolicyDoc | undefined;
    try {
      for (let attempt = 0; !policy; attempt++) {
        try {
          const created = await deps.policies.create({
            organizationId,
            policyNumber: newPolicyNumber(org.countryCode, at),
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
            settlementMode:
              org.serviceTier === 'DETERMINATION_AND_SETTLEMENT'
                ? 'DETERMINATION_AND_SETTLEMENT'
                : 'DETERMINATION',
          });
          policy = created.toObject() as PolicyDoc;
        } catch (err) {
          // A policy-number collision (1 in ~10^8 per month and market) just draws again.
          if ((err as { code?: number }).code !== 11000 || attempt >= 3) throw err;
        }
      }
    } catch (err) {
      await deps.capacity.updateOne({ _id: organizationId }, { $inc: { reservedMinor: -sumInsuredMinor } });
      throw err;
    }

    const amount = fromMinor(premiumMinor, exponent);
    const message =
      policy.settlementMode === 'DETERMINATION'
        ? `Collect the premium of ${currency} ${amount} for policy ${policy.policyNumber} from the farmer, then activate it with PUT /policies/${policy._id}/activate.`
        : `Pay the premium of ${currency} ${amount} for policy ${policy.policyNumber} by mobile money: POST /payments/initiate with reference ${policy._id}.`;
    sendData(
      res,
      {
        policy: policyView(policy, at.getTime()),
        paymentInstructions: {
          amount: premiumMinor / 10 ** exponent,
          policyNumber: policy.policyNumber,
          message,
        },
      },
      201,
    );
  });

  const load = async (req: Request, id: string) => {
    const policy = await scopedTo(deps.policies, organizationOf(req)).findById(id).lean<PolicyDoc>();
    if (!policy) throw AppError.notFound('Policy');
    return policy;
  };

  router.get(
    '/policies/:id',
    route({ params: z.object({ id: uuidParam }) }, async ({ params }, req, res) => {
      sendData(res, policyView(await load(req, params.id), now().getTime()));
    }),
  );

  router.put(
    '/policies/:id/activate',
    route({ params: z.object({ id: uuidParam }), body: activateBody }, async ({ params, body }, req, res) => {
      const { policy } = await deps.activator.activate({
        organizationId: organizationOf(req),
        policyId: params.id,
        via: 'PARTNER',
        premiumReference: body?.premiumReference,
      });
      sendData(res, policyView(policy, now().getTime()));
    }),
  );

  router.get(
    '/policies/:id/status',
    route({ params: z.object({ id: uuidParam }) }, async ({ params }, req, res) => {
      const p = await load(req, params.id);
      const at = now().getTime();
      const next =
        p.status === 'PENDING'
          ? p.settlementMode === 'DETERMINATION'
            ? 'Collect the premium, then activate the policy (PUT /policies/{id}/activate)'
            : p.activationRequestedAt
              ? 'No action: the premium is received and the policy is being activated on chain'
              : 'Pay the premium by mobile money (POST /payments/initiate)'
          : p.status === 'ACTIVE'
            ? 'Covered; determinations arrive by webhook'
            : 'No action: the policy is no longer in force';
      sendData(res, {
        id: p._id,
        policyNumber: p.policyNumber,
        status: p.status,
        premiumPaid: p.premiumPaid,
        activatedOnChain: Boolean(p.onChainPolicyId),
        onChainPolicyId: p.onChainPolicyId ?? null,
        coverStartsAt: p.coverStartsAt ?? null,
        coverEndsAt: p.coverEndsAt ?? null,
        daysRemaining: daysRemaining(p, at),
        settlementMode: p.settlementMode,
        activation: {
          activatedAt: p.activatedAt ?? null,
          via: p.activatedVia ?? null,
          txHash: p.txHash ?? null,
          /** Tier 2: premium received, waiting for the chain; failures so far and the last one. */
          pending: Boolean(p.activationRequestedAt) && p.status === 'PENDING',
          failedAttempts: p.activationFailures ?? 0,
          lastError: p.lastActivationError ?? null,
        },
        expiredAt: p.expiredAt ?? null,
        nextStep: next,
      });
    }),
  );
  return router;
}
