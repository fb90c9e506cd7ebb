import { AppError, route, sendData, uuidParam } from '@parametric/http';
import { Router } from 'express';
import { z } from 'zod';
import {
  type CapacityDoc,
  type CapacityModel,
  CURRENCY_EXPONENT,
  capacityView,
  type LicenceDoc,
  type LicenceModel,
  licenceView,
  MARKETS,
  toMinor,
} from './model';

const orgParams = z.object({ id: uuidParam });
const isoDate = z.iso
  .datetime({ offset: true, error: 'must be an ISO 8601 date-time' })
  .transform((v) => new Date(v));
const currencies = Object.keys(CURRENCY_EXPONENT) as [
  keyof typeof CURRENCY_EXPONENT,
  ...Array<keyof typeof CURRENCY_EXPONENT>,
];

const licenceBody = z.strictObject({
  market: z.enum(MARKETS, { error: `must be one of ${MARKETS.join(', ')}` }),
  licenceNumber: z.string().trim().min(1, 'is required').max(64),
  // Optional on purpose: a licence recorded without an expiry is treated as expired (spec 5.6).
  expiresAt: isoDate.nullable().optional(),
});

const capacityBody = z.strictObject({
  amount: z
    .number({ error: 'must be a number' })
    .positive('must be positive')
    .max(1e12, 'must be at most 1,000,000,000,000')
    .refine(
      (n) => Number.isInteger(Math.round(n * 100)) && Math.abs(Math.round(n * 100) - n * 100) < 1e-6,
      'must have at most 2 decimal places',
    ),
  currency: z.enum(currencies, { error: `must be one of ${currencies.join(', ')}` }),
  solvencyAttestedUntil: isoDate,
});

/** Underwriting setup for an organization (ops only; docs/ops.md). */
export function underwritingOpsRoutes(deps: { licences: LicenceModel; capacity: CapacityModel }): Router {
  const router = Router();

  router.post(
    '/organizations/:id/licences',
    route({ params: orgParams, body: licenceBody }, async ({ params, body }, _req, res) => {
      const licence = await deps.licences
        .findOneAndUpdate(
          { organizationId: params.id, market: body.market },
          { $set: { licenceNumber: body.licenceNumber, expiresAt: body.expiresAt ?? null } },
          { upsert: true, returnDocument: 'after' },
        )
        .lean<LicenceDoc>();
      sendData(res, licenceView(licence as LicenceDoc));
    }),
  );

  router.post(
    '/organizations/:id/capacity',
    route({ params: orgParams, body: capacityBody }, async ({ params, body }, _req, res) => {
      const amountMinor = toMinor(body.amount, CURRENCY_EXPONENT[body.currency]);
      const existing = await deps.capacity.findById(params.id).lean<CapacityDoc>();
      if (existing && existing.currency !== body.currency && existing.reservedMinor > 0) {
        throw AppError.invalid('Capacity already has reservations in another currency', [
          { field: 'currency', message: `must stay ${existing.currency} while policies reserve capacity` },
        ]);
      }
      const capacity = await deps.capacity
        .findOneAndUpdate(
          { _id: params.id },
          {
            $set: { amountMinor, currency: body.currency, solvencyAttestedUntil: body.solvencyAttestedUntil },
          },
          { upsert: true, returnDocument: 'after', setDefaultsOnInsert: true },
        )
        .lean<CapacityDoc>();
      sendData(res, capacityView(capacity as CapacityDoc));
    }),
  );

  router.get(
    '/organizations/:id/underwriting',
    route({ params: orgParams }, async ({ params }, _req, res) => {
      const [licences, capacity] = await Promise.all([
        deps.licences.find({ organizationId: params.id }).sort({ market: 1 }).lean<LicenceDoc[]>(),
        deps.capacity.findById(params.id).lean<CapacityDoc>(),
      ]);
      sendData(res, {
        licences: licences.map(licenceView),
        capacity: capacity ? capacityView(capacity) : null,
      });
    }),
  );
  return router;
}
