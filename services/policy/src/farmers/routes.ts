import {
  AppError,
  organizationOf,
  paginationQuery,
  route,
  sendData,
  sendPage,
  uuidParam,
} from '@parametric/http';
import { scopedTo } from '@parametric/mongo';
import { Router } from 'express';
import { z } from 'zod';
import {
  areaHectares,
  BOUNDS,
  CROP_TYPES,
  latitude,
  longitude,
  name,
  nationalId,
  phoneNumber,
} from '../bounds';
import { type HerdDoc, type HerdModel, herdView } from '../herds/model';
import { type PlotDoc, type PlotModel, plotView } from '../plots/model';
import { type FarmerDoc, type FarmerModel, farmerView, KYC_STATUSES } from './model';

export const farmerFields = {
  firstName: name,
  lastName: name,
  phoneNumber,
  nationalId,
  region: name,
  location: z.strictObject({ latitude, longitude }).optional(),
};

export const plotFields = {
  name,
  latitude,
  longitude,
  areaHectares,
  cropType: z.enum(CROP_TYPES, { error: `must be one of ${CROP_TYPES.join(', ')}` }),
};

const farmerBody = z.strictObject(farmerFields);
const bulkRow = z.strictObject({
  ...farmerFields,
  plots: z
    .array(z.strictObject(plotFields))
    .max(BOUNDS.plotsPerBulkRow, `at most ${BOUNDS.plotsPerBulkRow} plots per farmer`)
    .default([]),
});
const bulkBody = z.strictObject({
  farmers: z
    .array(z.unknown(), { error: 'must be an array of farmers' })
    .min(1, 'must contain at least one farmer')
    .max(BOUNDS.bulkRows, `at most ${BOUNDS.bulkRows} farmers per request`),
});
const idParams = z.object({ id: uuidParam });
const listQuery = paginationQuery().extend({
  kycStatus: z.enum(KYC_STATUSES, { error: `must be one of ${KYC_STATUSES.join(', ')}` }).optional(),
});

export interface FarmerRouteDeps {
  farmers: FarmerModel;
  plots: PlotModel;
  herds: HerdModel;
}

type FarmerInput = z.infer<typeof farmerBody>;

/** Which unique field an existing farmer of the organization already holds, if any. */
async function clash(farmers: ReturnType<typeof scopedTo<FarmerDoc>>, input: FarmerInput) {
  const existing = await farmers
    .findOne({ $or: [{ phoneNumber: input.phoneNumber }, { nationalId: input.nationalId }] })
    .lean<FarmerDoc>();
  if (!existing) return undefined;
  const fields = [
    ...(existing.phoneNumber === input.phoneNumber ? ['phoneNumber'] : []),
    ...(existing.nationalId === input.nationalId ? ['nationalId'] : []),
  ];
  return { existing, fields };
}

function conflictError(fields: string[]): AppError {
  return AppError.conflict(
    'A farmer with this phone number or national ID is already registered',
    fields.map((field) => ({ field, message: 'already registered to another farmer of this organization' })),
  );
}

function duplicateFields(err: unknown): string[] | undefined {
  const e = err as { code?: number; keyPattern?: Record<string, unknown> };
  if (e?.code !== 11000) return undefined;
  return Object.keys(e.keyPattern ?? {}).filter((k) => k !== 'organizationId');
}

export function farmerRoutes(deps: FarmerRouteDeps): Router {
  const router = Router();
  const own = (req: Parameters<typeof organizationOf>[0]) => scopedTo(deps.farmers, organizationOf(req));

  router.post(
    '/farmers',
    route({ body: farmerBody }, async ({ body }, req, res) => {
      const farmers = own(req);
      const found = await clash(farmers, body);
      if (found) throw conflictError(found.fields);
      try {
        const farmer = await farmers.create({ ...body, location: body.location ?? null });
        sendData(res, farmerView(farmer.toObject() as FarmerDoc), 201);
      } catch (err) {
        const fields = duplicateFields(err);
        if (fields) throw conflictError(fields);
        throw err;
      }
    }),
  );

  router.post(
    '/farmers/bulk-import',
    route({ body: bulkBody }, async ({ body }, req, res) => {
      const organizationId = organizationOf(req);
      const farmers = scopedTo(deps.farmers, organizationId);
      const plots = scopedTo(deps.plots, organizationId);
      const results = [];
      for (const [index, raw] of body.farmers.entries()) {
        const parsed = bulkRow.safeParse(raw);
        if (!parsed.success) {
          results.push({
            index,
            status: 'invalid' as const,
            errors: parsed.error.issues.flatMap((issue) =>
              issue.code === 'unrecognized_keys'
                ? issue.keys.map((key) => ({
                    field: [...issue.path, key].join('.'),
                    message: 'Unknown field',
                  }))
                : [{ field: issue.path.join('.') || '(row)', message: issue.message }],
            ),
          });
          continue;
        }
        const { plots: plotRows, ...farmer } = parsed.data;
        const found = await clash(farmers, farmer);
        if (found) {
          // Re-sending the same file: the same person (both identifiers match) is not created twice.
          const same =
            found.existing.phoneNumber === farmer.phoneNumber &&
            found.existing.nationalId === farmer.nationalId;
          results.push(
            same
              ? { index, status: 'duplicate' as const, farmerId: found.existing._id }
              : { index, status: 'conflict' as const, errors: conflictError(found.fields).details },
          );
          continue;
        }
        try {
          const created = await farmers.create({ ...farmer, location: farmer.location ?? null });
          const createdPlots = await Promise.all(
            plotRows.map((plot) => plots.create({ ...plot, farmerId: created._id })),
          );
          results.push({
            index,
            status: 'created' as const,
            farmerId: created._id,
            plotIds: createdPlots.map((p) => p._id),
          });
        } catch (err) {
          const fields = duplicateFields(err);
          if (!fields) throw err;
          results.push({ index, status: 'conflict' as const, errors: conflictError(fields).details });
        }
      }
      const summary = { created: 0, duplicate: 0, conflict: 0, invalid: 0 };
      for (const r of results) summary[r.status]++;
      sendData(res, { summary, results });
    }),
  );

  router.get(
    '/farmers',
    route({ query: listQuery }, async ({ query }, req, res) => {
      const farmers = own(req);
      const filter = query.kycStatus ? { kycStatus: query.kycStatus } : {};
      const [rows, total] = await Promise.all([
        farmers
          .find(filter)
          .sort({ createdAt: -1, _id: -1 })
          .skip((query.page - 1) * query.limit)
          .limit(query.limit)
          .lean<FarmerDoc[]>(),
        farmers.countDocuments(filter),
      ]);
      sendPage(res, rows.map(farmerView), { page: query.page, limit: query.limit, total });
    }),
  );

  const load = async (req: Parameters<typeof organizationOf>[0], id: string) => {
    const farmer = await own(req).findById(id).lean<FarmerDoc>();
    if (!farmer) throw AppError.notFound('Farmer');
    return farmer;
  };

  router.get(
    '/farmers/:id',
    route({ params: idParams }, async ({ params }, req, res) => {
      sendData(res, farmerView(await load(req, params.id)));
    }),
  );

  router.get(
    '/farmers/:id/plots',
    route({ params: idParams }, async ({ params }, req, res) => {
      const farmer = await load(req, params.id);
      const rows = await scopedTo(deps.plots, organizationOf(req))
        .find({ farmerId: farmer._id })
        .sort({ createdAt: 1 })
        .lean<PlotDoc[]>();
      sendData(res, rows.map(plotView));
    }),
  );

  router.get(
    '/farmers/:id/herds',
    route({ params: idParams }, async ({ params }, req, res) => {
      const farmer = await load(req, params.id);
      const rows = await scopedTo(deps.herds, organizationOf(req))
        .find({ farmerId: farmer._id })
        .sort({ createdAt: 1 })
        .lean<HerdDoc[]>();
      sendData(res, rows.map(herdView));
    }),
  );
  return router;
}
