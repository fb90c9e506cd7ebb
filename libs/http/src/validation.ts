import type { Request } from 'express';
import { z } from 'zod';
import { AppError, type FieldError } from './errors';

/** zod issues as the spec's `details: [{ field, message }]`. */
export function fieldErrors(error: z.ZodError, root = '(body)'): FieldError[] {
  return error.issues.flatMap((issue): FieldError[] => {
    if (issue.code === 'unrecognized_keys') {
      return issue.keys.map((key) => ({ field: [...issue.path, key].join('.'), message: 'Unknown field' }));
    }
    return [{ field: issue.path.join('.') || root, message: issue.message }];
  });
}

export function invalidInput(error: z.ZodError, where: string): AppError {
  return AppError.invalid(`Invalid ${where}`, fieldErrors(error));
}

interface Schemas {
  body?: z.ZodType;
  query?: z.ZodType;
  params?: z.ZodType;
  bodyOptional?: boolean;
}

const WHERE = { params: 'path parameters', query: 'query parameters', body: 'request body' } as const;

/**
 * Validates a request's params, then query, then body, and returns them parsed (defaults
 * applied, unknown keys stripped or refused as each schema says). Bad input throws
 * `400 INVALID_INPUT` with field details.
 */
export function parseInput(schemas: Schemas, req: Request): Record<'params' | 'query' | 'body', unknown> {
  const input = { params: undefined, query: undefined, body: undefined } as Record<
    'params' | 'query' | 'body',
    unknown
  >;
  for (const part of ['params', 'query', 'body'] as const) {
    const schema = schemas[part];
    if (!schema) continue;
    const raw = req[part];
    if (part === 'body' && raw === undefined) {
      if (schemas.bodyOptional) continue;
      throw AppError.invalid('Request body must be a JSON object', [
        { field: '(body)', message: 'Required' },
      ]);
    }
    const result = schema.safeParse(raw);
    if (!result.success) throw invalidInput(result.error, WHERE[part]);
    input[part] = result.data;
  }
  return input;
}

/** The one paging rule of every list: `page` from 1, `limit` 1 to 100 (larger is served as 100). */
export const MAX_PAGE_LIMIT = 100;

export function paginationQuery(defaultLimit = 20) {
  return z.object({
    page: z.coerce
      .number({ error: 'must be a whole number' })
      .int('must be a whole number')
      .min(1, 'must be at least 1')
      .default(1),
    limit: z.coerce
      .number({ error: 'must be a whole number' })
      .int('must be a whole number')
      .min(1, 'must be at least 1')
      .default(defaultLimit)
      // The spec caps the delivery log's limit at 100 rather than refusing more; every list does the same.
      .transform((n) => Math.min(n, MAX_PAGE_LIMIT)),
  });
}

/** A uuid (path parameters, ids in bodies). */
export const uuid = z.uuid({ error: 'must be a uuid' });
