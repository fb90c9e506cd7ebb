import { z } from 'zod';

export { phoneNumber } from '../common';

/**
 * Input bounds the spec leaves open (docs/decisions.md). Coordinates must fall inside
 * Africa's bounding box, which catches swapped latitude/longitude and (0, 0) defaults.
 */
export const BOUNDS = {
  latitude: { min: -35, max: 38 },
  longitude: { min: -26, max: 64 },
  areaHectares: { min: 0.01, max: 10_000 },
  headCount: { min: 1, max: 100_000 },
  estimatedValue: { min: 1, max: 1_000_000_000 },
  bulkRows: 500,
  plotsPerBulkRow: 20,
} as const;

export const CROP_TYPES = [
  'MAIZE',
  'BEANS',
  'SORGHUM',
  'MILLET',
  'RICE',
  'WHEAT',
  'CASSAVA',
  'POTATOES',
  'GROUNDNUTS',
  'COFFEE',
  'TEA',
  'COCOA',
  'COTTON',
  'VEGETABLES',
  'OTHER',
] as const;

const decimals = (places: number) => (n: number) =>
  Math.abs(Math.round(n * 10 ** places) - n * 10 ** places) < 1e-6;

export const latitude = z
  .number({ error: 'must be a number' })
  .min(BOUNDS.latitude.min, `must be between ${BOUNDS.latitude.min} and ${BOUNDS.latitude.max}`)
  .max(BOUNDS.latitude.max, `must be between ${BOUNDS.latitude.min} and ${BOUNDS.latitude.max}`);

export const longitude = z
  .number({ error: 'must be a number' })
  .min(BOUNDS.longitude.min, `must be between ${BOUNDS.longitude.min} and ${BOUNDS.longitude.max}`)
  .max(BOUNDS.longitude.max, `must be between ${BOUNDS.longitude.min} and ${BOUNDS.longitude.max}`);

export const areaHectares = z
  .number({ error: 'must be a number' })
  .min(BOUNDS.areaHectares.min, `must be at least ${BOUNDS.areaHectares.min}`)
  .max(BOUNDS.areaHectares.max, `must be at most ${BOUNDS.areaHectares.max}`)
  .refine(decimals(4), 'must have at most 4 decimal places');

export const headCount = z
  .number({ error: 'must be a number' })
  .int('must be a whole number')
  .min(BOUNDS.headCount.min, `must be at least ${BOUNDS.headCount.min}`)
  .max(BOUNDS.headCount.max, `must be at most ${BOUNDS.headCount.max}`);

/** A money amount in major units of the organization's currency, at most 2 decimals. */
export const estimatedValue = z
  .number({ error: 'must be a number' })
  .min(BOUNDS.estimatedValue.min, `must be at least ${BOUNDS.estimatedValue.min}`)
  .max(BOUNDS.estimatedValue.max, `must be at most ${BOUNDS.estimatedValue.max}`)
  .refine(decimals(2), 'must have at most 2 decimal places');

export const name = z
  .string({ error: 'must be a string' })
  .trim()
  .min(1, 'is required')
  .max(100, 'must be at most 100 characters');

export const nationalId = z
  .string({ error: 'must be a string' })
  .trim()
  .regex(/^[A-Za-z0-9-]{4,32}$/, 'must be 4 to 32 letters, digits or dashes');
