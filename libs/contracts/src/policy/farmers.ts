import { defineRoute, uuid } from '@parametric/http';
import { z } from 'zod';
import { idParams, pageQuery, timestamp } from '../common';
import {
  areaHectares,
  BOUNDS,
  CROP_TYPES,
  estimatedValue,
  headCount,
  latitude,
  longitude,
  name,
  nationalId,
  phoneNumber,
} from './bounds';

export const KYC_STATUSES = ['PENDING', 'APPROVED', 'REJECTED'] as const;

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

export const farmerBody = z.strictObject(farmerFields).meta({
  id: 'FarmerRequest',
  example: {
    firstName: 'Amina',
    lastName: 'Otieno',
    phoneNumber: '+254712345678',
    nationalId: 'KE12345678',
    region: 'Nakuru',
  },
});

export const bulkRow = z.strictObject({
  ...farmerFields,
  plots: z
    .array(z.strictObject(plotFields))
    .max(BOUNDS.plotsPerBulkRow, `at most ${BOUNDS.plotsPerBulkRow} plots per farmer`)
    .default([]),
});

// Rows are validated one by one (a bad row is reported, the others still import), so the
// request schema only bounds the list; the row schema is documented through `bulkRow`.
export const bulkBody = z
  .strictObject({
    farmers: z
      .array(z.unknown(), { error: 'must be an array of farmers' })
      .min(1, 'must contain at least one farmer')
      .max(BOUNDS.bulkRows, `at most ${BOUNDS.bulkRows} farmers per request`)
      .meta({ override: { items: { $ref: '#/components/schemas/BulkImportRow' } } }),
  })
  .meta({ id: 'BulkImportRequest' });

export const plotBody = z.strictObject({ farmerId: uuid, ...plotFields }).meta({
  id: 'PlotRequest',
  example: {
    farmerId: '3f2b8c1e-7d4a-4e6b-9a1c-2b3d4e5f6a7b',
    name: 'North field',
    latitude: -0.3031,
    longitude: 36.08,
    areaHectares: 1.5,
    cropType: 'MAIZE',
  },
});

export const herdBody = z
  .strictObject({ farmerId: uuid, name, headCount, estimatedValue, latitude, longitude })
  .meta({
    id: 'HerdRequest',
    example: {
      farmerId: '3f2b8c1e-7d4a-4e6b-9a1c-2b3d4e5f6a7b',
      name: 'Boran cattle',
      headCount: 12,
      estimatedValue: 600000,
      latitude: 0.52,
      longitude: 37.45,
    },
  });

export const farmerSchema = z
  .object({
    id: z.uuid(),
    firstName: z.string(),
    lastName: z.string(),
    phoneNumber: z.string(),
    nationalId: z.string(),
    region: z.string(),
    location: z.object({ latitude: z.number(), longitude: z.number() }).nullable(),
    kycStatus: z.enum(KYC_STATUSES),
    createdAt: timestamp,
    updatedAt: timestamp,
  })
  .meta({ id: 'Farmer' });

export const plotSchema = z
  .object({
    id: z.uuid(),
    farmerId: z.uuid(),
    name: z.string(),
    latitude: z.number(),
    longitude: z.number(),
    areaHectares: z.number(),
    cropType: z.enum(CROP_TYPES),
    createdAt: timestamp,
    updatedAt: timestamp,
  })
  .meta({ id: 'Plot' });

export const herdSchema = z
  .object({
    id: z.uuid(),
    farmerId: z.uuid(),
    name: z.string(),
    headCount: z.number().int(),
    estimatedValue: z.number().meta({ description: 'Major units of the organization’s currency' }),
    latitude: z.number(),
    longitude: z.number(),
    createdAt: timestamp,
    updatedAt: timestamp,
  })
  .meta({ id: 'Herd' });

const fieldErrors = z.array(z.object({ field: z.string(), message: z.string() }));

export const bulkResultSchema = z
  .object({
    summary: z.object({
      created: z.number().int(),
      duplicate: z.number().int(),
      conflict: z.number().int(),
      invalid: z.number().int(),
    }),
    results: z.array(
      z.discriminatedUnion('status', [
        z.object({
          index: z.number().int(),
          status: z.literal('created'),
          farmerId: z.uuid(),
          plotIds: z.array(z.uuid()),
        }),
        z.object({ index: z.number().int(), status: z.literal('duplicate'), farmerId: z.uuid() }),
        z.object({ index: z.number().int(), status: z.literal('conflict'), errors: fieldErrors }),
        z.object({ index: z.number().int(), status: z.literal('invalid'), errors: fieldErrors }),
      ]),
    ),
  })
  .meta({ id: 'BulkImportResult' });

export const farmersQuery = pageQuery.extend({
  kycStatus: z.enum(KYC_STATUSES, { error: `must be one of ${KYC_STATUSES.join(', ')}` }).optional(),
});

export const registerFarmer = defineRoute({
  operationId: 'registerFarmer',
  method: 'post',
  path: '/farmers',
  summary: 'Register a farmer',
  description:
    'Phone number and national ID are each unique within the organization (409 CONFLICT names the field).',
  tags: ['Farmers'],
  auth: 'partner',
  capability: 'farmer:write',
  body: farmerBody,
  responses: { 201: { description: 'The farmer, KYC PENDING', data: farmerSchema } },
  errors: ['CONFLICT'],
});

export const bulkImportFarmers = defineRoute({
  operationId: 'bulkImportFarmers',
  method: 'post',
  path: '/farmers/bulk-import',
  summary: 'Import farmers and their plots in bulk',
  description: `Up to ${BOUNDS.bulkRows} farmers, each with up to ${BOUNDS.plotsPerBulkRow} plots. Every row gets a result: created, duplicate (the same person again: re-sending a file creates nothing), conflict, or invalid with field errors.`,
  tags: ['Farmers'],
  auth: 'partner',
  capability: 'farmer:write',
  body: bulkBody,
  responses: { 200: { description: 'Per-row results and a summary', data: bulkResultSchema } },
  errors: [],
});

export const listFarmers = defineRoute({
  operationId: 'listFarmers',
  method: 'get',
  path: '/farmers',
  summary: 'List farmers',
  description: 'Newest first; optionally by KYC status.',
  tags: ['Farmers'],
  auth: 'partner',
  capability: 'farmer:read',
  query: farmersQuery,
  responses: { 200: { description: 'A page of farmers', item: farmerSchema } },
  errors: [],
});

export const getFarmer = defineRoute({
  operationId: 'getFarmer',
  method: 'get',
  path: '/farmers/{id}',
  summary: 'Read a farmer',
  tags: ['Farmers'],
  auth: 'partner',
  capability: 'farmer:read',
  params: idParams,
  responses: { 200: { description: 'The farmer', data: farmerSchema } },
  errors: [],
});

export const listFarmerPlots = defineRoute({
  operationId: 'listFarmerPlots',
  method: 'get',
  path: '/farmers/{id}/plots',
  summary: "A farmer's plots",
  tags: ['Farmers'],
  auth: 'partner',
  capability: 'farmer:read',
  description:
    'Oldest first (`createdAt`, then `id`), a page at a time like every list (`page`, `limit`; `pagination` has the total). An unknown farmer, or another organization’s, is `404`.',
  params: idParams,
  query: pageQuery,
  responses: { 200: { description: 'A page of the farmer’s plots, oldest first', item: plotSchema } },
  errors: [],
});

export const listFarmerHerds = defineRoute({
  operationId: 'listFarmerHerds',
  method: 'get',
  path: '/farmers/{id}/herds',
  summary: "A farmer's herds",
  tags: ['Farmers'],
  auth: 'partner',
  capability: 'farmer:read',
  description:
    'Oldest first (`createdAt`, then `id`), a page at a time like every list (`page`, `limit`; `pagination` has the total). An unknown farmer, or another organization’s, is `404`.',
  params: idParams,
  query: pageQuery,
  responses: { 200: { description: 'A page of the farmer’s herds, oldest first', item: herdSchema } },
  errors: [],
});

export const registerPlot = defineRoute({
  operationId: 'registerPlot',
  method: 'post',
  path: '/plots',
  summary: 'Register a plot',
  tags: ['Plots and herds'],
  auth: 'partner',
  capability: 'farmer:write',
  body: plotBody,
  responses: { 201: { description: 'The plot', data: plotSchema } },
  errors: ['NOT_FOUND'],
});

export const getPlot = defineRoute({
  operationId: 'getPlot',
  method: 'get',
  path: '/plots/{id}',
  summary: 'Read a plot',
  tags: ['Plots and herds'],
  auth: 'partner',
  capability: 'farmer:read',
  params: idParams,
  responses: { 200: { description: 'The plot', data: plotSchema } },
  errors: [],
});

export const registerHerd = defineRoute({
  operationId: 'registerHerd',
  method: 'post',
  path: '/herds',
  summary: 'Register a herd',
  tags: ['Plots and herds'],
  auth: 'partner',
  capability: 'farmer:write',
  body: herdBody,
  responses: { 201: { description: 'The herd', data: herdSchema } },
  errors: ['NOT_FOUND'],
});

export const getHerd = defineRoute({
  operationId: 'getHerd',
  method: 'get',
  path: '/herds/{id}',
  summary: 'Read a herd',
  tags: ['Plots and herds'],
  auth: 'partner',
  capability: 'farmer:read',
  params: idParams,
  responses: { 200: { description: 'The herd', data: herdSchema } },
  errors: [],
});

export const FARMER_ROUTES = [
  registerFarmer,
  bulkImportFarmers,
  listFarmers,
  getFarmer,
  listFarmerPlots,
  listFarmerHerds,
  registerPlot,
  getPlot,
  registerHerd,
  getHerd,
] as const;
